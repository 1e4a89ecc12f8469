"""Agents: ``await agent.run(env, task, roles, recorder) -> Trajectory``.

``make_agent(name, **kwargs)`` builds one by name; ``AGENTS`` lists them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from lorekit.agents.adapt import AdaptAgent, PlanExecuteAgent, ReflexionAgent, TryAgainAgent
from lorekit.agents.agentkit import AgentKitCrafterAgent, AgentKitWebShopAgent
from lorekit.agents.automanual import AutoManualAgent
from lorekit.agents.base import (
    Agent,
    Episode,
    NullRecorder,
    Recorder,
    Trajectory,
    TrajectoryStep,
    declared_roles,
)
from lorekit.agents.react import ReActAgent, parse_react
from lorekit.agents.simple import OracleAgent, RandomAgent
from lorekit.agents.spring import SpringAgent
from lorekit.extras import requires_extra

AgentFactory = Callable[..., Agent]

AGENTS: dict[str, tuple[AgentFactory, str, bool]] = {
    "react": (ReActAgent, "reason-then-act turns: ADaPT's executor alone, d_max x its turns", True),
    "oracle": (OracleAgent, "follows the environment's built-in expert (no model)", False),
    "random": (RandomAgent, "uniform over the environment's candidate actions (no model)", False),
    "adapt": (AdaptAgent, "ADaPT: executor first, AND/OR decomposition only on failure", True),
    "plan-execute": (PlanExecuteAgent, "one plan up front, each step executed once", True),
    "try-again": (TryAgainAgent, "up to d_max fresh executor trials on the whole task", True),
    "reflexion": (ReflexionAgent, "executor trials with a lesson kept after each failure", True),
    "automanual": (
        AutoManualAgent,
        "AutoManual's planner: Python in the sandbox, guided by a build's manual "
        "(--agent-opt manual=BUILD)",
        True,
    ),
    "agentkit-crafter": (
        AgentKitCrafterAgent,
        "AgentKit's 29-node Crafter agent: gated planning, reflection, knowledge base, skills",
        True,
    ),
    "agentkit-webshop": (
        AgentKitWebShopAgent,
        "AgentKit's 6-node zero-shot WebShop agent",
        True,
    ),
    "spring": (
        SpringAgent,
        "SPRING's question graph on Crafter, told the game by --agent-opt "
        "context=paper|actions|experience:FILE",
        True,
    ),
}
"""name -> (factory, description, needs a model)."""

AGENT_EXTRAS: dict[str, str] = {}
"""name -> the optional extra (``pip install 'lorekit[EXTRA]'``) an agent needs.
No built-in agent needs one yet; plugins that do register it here, so a
missing package is reported as the install command."""


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
    factory = entry[0]
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
    return tuple(inspect.signature(entry[0]).parameters) if entry else ()


def needs_model(name: str) -> bool:
    return name in AGENTS and AGENTS[name][2]


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
]
