"""Agents: ``await agent.run(env, task, roles, recorder) -> Trajectory``.

``make_agent(name, **kwargs)`` builds one by name from :mod:`lorekit.registry`
(``agent_names()`` lists them); every name here is imported on first use, so
importing this package imports no agent and none of the harness's machinery.
The registered agents' classes are reachable here too (``from lorekit.agents
import AdaptAgent``): an unknown attribute is looked up among the registered
agents' class names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lorekit.lazyexports import lazy_attributes

if TYPE_CHECKING:
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
    from lorekit.agents.registry import (
        UnknownAgentError,
        agent_names,
        agent_parameters,
        make_agent,
        needs_model,
        register_agent,
    )
    from lorekit.agents.simple import OracleAgent, RandomAgent

__all__ = [
    "Agent",
    "Episode",
    "NullRecorder",
    "OracleAgent",
    "RandomAgent",
    "Recorder",
    "Trajectory",
    "TrajectoryStep",
    "UnknownAgentError",
    "agent_names",
    "agent_parameters",
    "declared_roles",
    "make_agent",
    "needs_model",
    "parse_react",
    "register_agent",
]

if not TYPE_CHECKING:  # mypy checks the names above; at run time they load on use
    _own = lazy_attributes(
        __name__,
        {
            "lorekit.agents.base": (
                "Agent", "Episode", "NullRecorder", "Recorder", "Trajectory", "TrajectoryStep",
                "declared_roles",
            ),
            "lorekit.agents.react_grammar": ("parse_react",),
            "lorekit.agents.simple": ("OracleAgent", "RandomAgent"),
            "lorekit.agents.registry": (
                "UnknownAgentError", "agent_names", "agent_parameters", "make_agent", "needs_model",
                "register_agent",
            ),
        },
    )  # fmt: skip

    def __getattr__(name: str) -> Any:
        """This package's names, then a registered agent's class by its class name."""
        try:
            return _own(name)
        except AttributeError:
            pass
        if name[:1].isupper():
            from lorekit.registry import REGISTRY

            for entry in REGISTRY.entries("agent"):
                if isinstance(entry.target, str) and entry.target.rpartition(":")[2] == name:
                    value = entry.load()
                    globals()[name] = value
                    return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
