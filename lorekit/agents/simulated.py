"""Which scripted models answer each agent on each env, for offline end-to-end runs.

Each method ships scripted models that read its prompts and answer in its
formats (:mod:`lorekit.agents.adapt.simulation` for TextCraft,
:mod:`lorekit.agents.adapt.simulation_envs` for ALFWorld and WebShop,
:mod:`lorekit.agents.agentkit.simulation`, :mod:`lorekit.agents.spring.simulation`,
:mod:`lorekit.agents.automanual.simulation_builder`). This registry names them
by import string, like the agent registry, so nothing is imported until a
simulated run asks (``lorekit reproduce run --simulate``). Such a run checks the
plumbing (prompts, parsing, store, comparison), never a method: :func:`describe`
is what a summary prints as the models that answered.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from lorekit.llm.roles import Roles

ADAPT_FAMILY = ("react", "plan-execute", "try-again", "reflexion", "adapt")
"""Agents that share ADaPT's executor, planner and reflection prompts."""

_ADAPT = "lorekit.agents.adapt.simulation_envs"
_ENTRIES: dict[tuple[str, str], tuple[str, str, bool]] = {
    **{
        ("textcraft", a): (
            "scripted TextCraft executor (capability 2, noise 0.1) and planner "
            "(lorekit.agents.adapt.simulation)",
            f"{_ADAPT}:textcraft_roles",
            True,
        )
        for a in ADAPT_FAMILY
    },
    **{
        (env, a): (
            f"scripted {env} executor and one-step planner ({_ADAPT})",
            f"{_ADAPT}:{env}_roles",
            True,
        )
        for env in ("alfworld", "webshop")
        for a in ADAPT_FAMILY
    },
    ("crafter", "spring"): (
        "scripted SPRING answers (lorekit.agents.spring.simulation)",
        "lorekit.agents.spring.simulation:spring_model",
        False,
    ),
    ("crafter", "agentkit-crafter"): (
        "scripted AgentKit answers (lorekit.agents.agentkit.simulation)",
        "lorekit.agents.agentkit.simulation:crafter_model",
        False,
    ),
    ("webshop", "agentkit-webshop"): (
        "scripted AgentKit answers (lorekit.agents.agentkit.simulation)",
        "lorekit.agents.agentkit.simulation:webshop_model",
        False,
    ),
    ("alfworld", "automanual"): (
        "scripted AutoManual planner, builder, consolidator and formulator "
        "(lorekit.agents.automanual.simulation, simulation_builder)",
        "lorekit.agents.automanual.simulation_builder:stage_roles",
        True,
    ),
}
"""(env, agent) -> (description, target, whether the target builds the Roles from the
env's options; otherwise it makes one answer function that serves every role)."""


class NoSimulation(LookupError):
    """No scripted models exist for this agent on this env."""


def supported(env_name: str, agent: str) -> bool:
    """Whether scripted models answer ``agent`` on ``env_name``."""
    return (env_name, agent) in _ENTRIES


def describe(env_name: str, agent: str) -> str:
    """How a summary names the scripted models of ``agent`` on ``env_name``."""
    return _entry(env_name, agent)[0]


def simulated_roles(env_name: str, env_kwargs: Mapping[str, Any], agent: str) -> Roles:
    """The scripted models for ``agent`` on ``env_name`` (built with ``env_kwargs``).

    A module-level function, so a backend can build them where episodes play."""
    from lorekit.llm.scripted import ScriptedLLM

    _, target, takes_env = _entry(env_name, agent)
    module, _, name = target.partition(":")
    make = getattr(importlib.import_module(module), name)
    if takes_env:
        roles: Roles = make(env_kwargs)
        return roles
    return Roles({"default": ScriptedLLM(fn=make(), model=f"simulated-{agent}")})


def _entry(env_name: str, agent: str) -> tuple[str, str, bool]:
    entry = _ENTRIES.get((env_name, agent))
    if entry is None:
        raise NoSimulation(f"no scripted models for agent {agent!r} on env {env_name!r}")
    return entry
