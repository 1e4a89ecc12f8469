"""Which scripted models answer each agent on each env, for offline end-to-end runs.

Each method ships scripted models that read its prompts and answer in its
formats, and registers them per (env, agent) in :mod:`lorekit.registry` (kind
``scripted``), by import string, so nothing is imported until a simulated run
asks (``lorekit reproduce run --simulate``). Such a run checks the plumbing
(prompts, parsing, store, comparison), never a method: :func:`describe` is what
a summary prints as the models that answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorekit.llm.roles import Roles
from lorekit.registry import REGISTRY, Entry, scripted_key


class NoSimulation(LookupError):
    """No scripted models exist for this agent on this env."""


def supported(env_name: str, agent: str) -> bool:
    """Whether scripted models answer ``agent`` on ``env_name``."""
    return REGISTRY.find("scripted", scripted_key(env_name, agent)) is not None


def describe(env_name: str, agent: str) -> str:
    """How a summary names the scripted models of ``agent`` on ``env_name``."""
    return _entry(env_name, agent).description


def simulated_roles(env_name: str, env_kwargs: Mapping[str, Any], agent: str) -> Roles:
    """The scripted models for ``agent`` on ``env_name`` (built with ``env_kwargs``).

    A module-level function, so a backend can build them where episodes play."""
    from lorekit.llm.scripted import ScriptedLLM

    entry = _entry(env_name, agent)
    make = entry.load()
    if entry.meta.get("takes_env"):
        roles: Roles = make(env_kwargs)
        return roles
    return Roles({"default": ScriptedLLM(fn=make(), model=f"simulated-{agent}")})


def _entry(env_name: str, agent: str) -> Entry:
    entry = REGISTRY.find("scripted", scripted_key(env_name, agent))
    if entry is None:
        raise NoSimulation(f"no scripted models for agent {agent!r} on env {env_name!r}")
    return entry
