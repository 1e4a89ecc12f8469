"""Agents: ``await agent.run(env, task, roles, recorder) -> Trajectory``.

``make_agent(name, **kwargs)`` builds one by name; ``AGENTS`` lists them.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any, cast

from lorekit.agents.base import (
    Agent,
    Episode,
    NullRecorder,
    Recorder,
    Trajectory,
    TrajectoryStep,
    declared_roles,
)
from lorekit.agents.react_grammar import parse_react
from lorekit.extras import requires_extra

AgentFactory = Callable[..., Agent]

AGENTS: dict[str, tuple[AgentFactory | str, str, bool]] = {
    "react": (
        "lorekit.agents.react:ReActAgent",
        "reason-then-act turns: ADaPT's executor alone, d_max x its turns",
        True,
    ),
    "oracle": (
        "lorekit.agents.simple:OracleAgent",
        "follows the environment's built-in expert (no model)",
        False,
    ),
    "random": (
        "lorekit.agents.simple:RandomAgent",
        "uniform over the environment's candidate actions (no model)",
        False,
    ),
    "adapt": (
        "lorekit.agents.adapt:AdaptAgent",
        "ADaPT: executor first, AND/OR decomposition only on failure",
        True,
    ),
    "plan-execute": (
        "lorekit.agents.adapt:PlanExecuteAgent",
        "one plan up front, each step executed once",
        True,
    ),
    "try-again": (
        "lorekit.agents.adapt:TryAgainAgent",
        "up to d_max fresh executor trials on the whole task",
        True,
    ),
    "reflexion": (
        "lorekit.agents.adapt:ReflexionAgent",
        "executor trials with a lesson kept after each failure",
        True,
    ),
    "automanual": (
        "lorekit.agents.automanual:AutoManualAgent",
        "AutoManual's planner: Python in the sandbox, guided by a build's manual "
        "(--agent-opt manual=BUILD)",
        True,
    ),
    "agentkit-crafter": (
        "lorekit.agents.agentkit:AgentKitCrafterAgent",
        "AgentKit's 32-node Crafter agent: gated planning, reflection, knowledge base, "
        "skills; plays as published (a 256x256 world, episodes end only on death)",
        True,
    ),
    "agentkit-webshop": (
        "lorekit.agents.agentkit:AgentKitWebShopAgent",
        "AgentKit's 6-node zero-shot WebShop agent",
        True,
    ),
    "spring": (
        "lorekit.agents.spring:SpringAgent",
        "SPRING's question graph on Crafter, told the game by --agent-opt "
        "context=paper|actions|experience:FILE",
        True,
    ),
}
"""name -> (factory, description, needs a model).

The factory is a callable or an import string ``"package.module:attribute"``;
built-in agents are named by import string, so ``import lorekit.agents``
imports no specific agent (and none of its dependencies) until one is made."""

_LAZY_NAMES = {
    name: target
    for name, target in (
        (entry[0].rpartition(":")[2], entry[0])
        for entry in AGENTS.values()
        if isinstance(entry[0], str)
    )
}
"""Agent classes ``from lorekit.agents import AdaptAgent`` still finds (imported on access)."""

AGENT_EXTRAS: dict[str, str] = {}
"""name -> the optional extra (``pip install 'lorekit[EXTRA]'``) an agent needs.
No built-in agent needs one yet; plugins that do register it here, so a
missing package is reported as the install command."""


def register_agent(
    name: str,
    factory: AgentFactory | str,
    description: str,
    *,
    needs_model: bool = True,
    replace: bool = False,
) -> None:
    """Make an agent available to ``make_agent`` and ``lorekit run --agent NAME``:
    the one registration line a new method outside this package writes.
    ``factory`` is a callable or an import string ``"package.module:attribute"``.
    Taking a used name is an error unless ``replace`` is set."""
    if not name or name != name.strip():
        raise ValueError(f"agent name must be non-empty without spaces around it: {name!r}")
    if name in AGENTS and not replace:
        raise ValueError(f"agent {name!r} is already registered; pass replace=True to override")
    if isinstance(factory, str) and (":" not in factory or factory.startswith(":")):
        raise ValueError(f"an import string factory is 'package.module:attribute', got {factory!r}")
    AGENTS[name] = (factory, description, needs_model)


class UnknownAgentError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build a registered agent; unknown names and arguments fail with the options."""
    entry = AGENTS.get(name)
    if entry is None:
        raise UnknownAgentError(
            f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}"
        )
    with requires_extra(f"the {name!r} agent", AGENT_EXTRAS.get(name)):
        factory = _factory(entry[0])
    params = inspect.signature(factory).parameters
    bad = sorted(set(kwargs) - set(params))
    if bad:
        raise TypeError(
            f"agent {name!r} takes no argument {', '.join(bad)}; "
            f"it takes: {', '.join(params) or 'none'}"
        )
    with requires_extra(f"the {name!r} agent", AGENT_EXTRAS.get(name)):
        return factory(**kwargs)


def agent_parameters(name: str) -> tuple[str, ...]:
    """The keyword arguments agent ``name`` takes (empty for an unknown name)."""
    entry = AGENTS.get(name)
    return tuple(inspect.signature(_factory(entry[0])).parameters) if entry else ()


def needs_model(name: str) -> bool:
    return name in AGENTS and AGENTS[name][2]


def _resolve(target: str) -> Any:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _factory(factory: AgentFactory | str) -> AgentFactory:
    """The callable behind a registry entry (an import string is imported now)."""
    return cast(AgentFactory, _resolve(factory)) if isinstance(factory, str) else factory


def __getattr__(name: str) -> Any:
    """The built-in agent classes, imported on first access."""
    target = _LAZY_NAMES.get(name)
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _resolve(target)
    globals()[name] = value
    return value


__all__ = [
    "AGENTS",
    "AGENT_EXTRAS",
    "AdaptAgent",
    "Agent",
    "AgentKitCrafterAgent",
    "AgentKitWebShopAgent",
    "AutoManualAgent",
    "Episode",
    "NullRecorder",
    "OracleAgent",
    "PlanExecuteAgent",
    "RandomAgent",
    "ReActAgent",
    "Recorder",
    "ReflexionAgent",
    "SpringAgent",
    "Trajectory",
    "TrajectoryStep",
    "TryAgainAgent",
    "UnknownAgentError",
    "agent_parameters",
    "declared_roles",
    "make_agent",
    "needs_model",
    "parse_react",
    "register_agent",
]
