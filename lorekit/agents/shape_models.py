"""The dry run's models, and how each agent orders its prompts.

A cost estimate needs the agent's own prompts (their manuals, examples and
growing histories) and answers of the length and form a model would give, so
that the agent takes the turns, plans and retries it would. No model is
called: :func:`shape_roles` gives the same scripted models that ``reproduce run
--simulate`` plays with (the registry :mod:`lorekit.agents.simulated`), so the
estimate and a simulated run meter one and the same thing. Rows that test with
a build (AutoManual) are not measured: the dry run does not play builds.
:func:`prompt_order` says, per agent, why its prompts share a stable prefix (each
agent's registration states it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorekit.agents.simulated import simulated_roles
from lorekit.llm.roles import Roles
from lorekit.registry import REGISTRY


def prompt_order(agent: str) -> str | None:
    """How ``agent`` orders its prompts (its registration's ``prompt_order``), for the
    dry run's report on prompt caching; None when it does not say."""
    entry = REGISTRY.find("agent", agent)
    order = entry.meta.get("prompt_order") if entry is not None else None
    return str(order) if order else None


def tests_with_build(agent: str) -> bool:
    """Whether ``agent``'s rows test with what a build made (the dry run plays no builds)."""
    entry = REGISTRY.find("agent", agent)
    return bool(entry is not None and entry.meta.get("tests_with_build"))


def shape_roles(env: str, agent: str, env_options: Mapping[str, Any] | None = None) -> Roles:
    """The scripted models for ``agent`` on ``env``; LookupError when there are none."""
    if tests_with_build(agent):
        raise LookupError(
            f"agent {agent!r} tests with a build, and the dry run does not play builds yet"
        )
    entry = REGISTRY.find("agent", agent)
    if entry is not None and entry.meta.get("play"):  # a team: `team run`'s own loop
        raise LookupError(f"agent {agent!r} plays its rows its own way, which the dry run does not")
    return simulated_roles(env, env_options or {}, agent)
