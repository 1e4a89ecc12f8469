"""Experiments played against a real OpenAI-compatible server: LoreKit's fake one on
127.0.0.1, answering each request with the scripted models the methods ship.

``--simulate`` hands the scripted models to the agents in-process, so it never
exercises the real path: the HTTP client, its event loops, the served model's
name and endpoint, pricing of served models, resume. Here every answer travels
over HTTP: the run config names one model per role (``req-<role>``) at the
server's URL, and the server answers a request for ``req-<role>`` with that role's
scripted model for the agent it is currently serving (:meth:`ServedModels.serve`),
reporting itself as another model (``SERVED_AS``), as an alias or a checkpoint
would.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from lorekit.llm.base import as_messages
from lorekit.llm.roles import Roles
from lorekit.llm.testing import OpenAICompatServer

SERVED_AS = "served-checkpoint-7b"
"""The model name the fake server reports in every answer."""
PRICE = {"prompt": 3.0, "completion": 6.0}
"""USD per million tokens of every ``req-<role>`` model."""


class ServedModels:
    """The fake server, answering as the scripted models of one agent at a time."""

    def __init__(self) -> None:
        self._roles: Roles | None = None
        self._lock = threading.Lock()
        self.server = OpenAICompatServer(self._answer, model_name=SERVED_AS)

    def __enter__(self) -> ServedModels:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.close()

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def serve(self, env: str, env_kwargs: Mapping[str, Any], agent: str) -> None:
        """Answer from now on as the scripted models of ``agent`` on ``env``."""
        from lorekit.agents.simulated import simulated_roles

        if agent == "team":  # the team study's models sleep their latency: none here
            from lorekit.agents.teams.testing import simulated_roles as team_roles

            roles = team_roles(_no_wait)
        else:
            roles = simulated_roles(env, dict(env_kwargs), agent)
        with self._lock:
            self._roles = roles

    def _answer(self, body: dict[str, Any]) -> str:
        with self._lock:
            roles = self._roles
        if roles is None:
            raise AssertionError("ServedModels.serve() was not called")
        role = str(body.get("model", "")).removeprefix("req-")
        messages = as_messages(body.get("messages") or [])
        # the server's own thread: the scripted model runs on a loop of its own
        return asyncio.run(roles[role].complete(messages)).text


async def _no_wait(_seconds: float) -> None:
    """A latency slept on no clock: the served answer comes at once."""


def write_config(path: Path, base_url: str, roles: Iterable[str], store: Path) -> Path:
    """A run config naming ``req-<role>`` at ``base_url`` for each role (and default)."""
    names = ["default", *sorted(set(roles) - {"default"})]
    settings = {
        name: {"model": f"req-{name}", "base_url": base_url, "price": PRICE} for name in names
    }
    path.write_text(yaml.safe_dump({"roles": settings, "store": str(store)}), encoding="utf-8")
    return path


def agent_roles(agent: str, options: Mapping[str, Any]) -> tuple[str, ...]:
    """The model roles ``agent`` asks for with ``options`` (a build's ``manual`` aside)."""
    from lorekit.agents import agent_parameters, declared_roles, make_agent

    kept = {k: v for k, v in options.items() if k in agent_parameters(agent)}
    try:
        return declared_roles(make_agent(agent, **kept)) or ()
    except ValueError:  # a row that tests with a build gets its manual from the build
        return ("planner", "builder", "consolidator", "formulator")
