"""Agents by name: ``make_agent("adapt", **options)``, over :mod:`lorekit.registry`.

Agents are registered (by LoreKit's core, its methods and outside plugins
alike) with an import string naming their class or factory; the options an
agent accepts are that callable's keyword arguments, checked before it is
built, so ``--agent-opt`` typos fail with the list of accepted options.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, cast

from lorekit.agents.base import Agent
from lorekit.extras import requires_extra
from lorekit.registry import REGISTRY, Entry, UnknownPart

AgentFactory = Callable[..., Agent]


class UnknownAgentError(UnknownPart, KeyError):
    """Raised by :func:`make_agent` for a name nobody registered."""

    def __str__(self) -> str:
        return str(self.args[0])


def register_agent(
    name: str,
    factory: AgentFactory | str,
    description: str,
    *,
    needs_model: bool = True,
    extra: str | None = None,
    replace: bool = False,
) -> None:
    """Make an agent available to ``make_agent`` and ``lorekit run --agent NAME``
    (the in-process form of a plugin's ``registry.add_agent``). ``factory`` is a
    callable or an import string ``"package.module:attribute"``; ``extra`` names
    the pip extra it needs. Taking a used name is an error unless ``replace``."""
    REGISTRY.add_agent(
        name, factory, description, needs_model=needs_model, extra=extra, replace=replace
    )


def agent_entry(name: str) -> Entry:
    """The registration of agent ``name``; :class:`UnknownAgentError` lists the known ones."""
    entry = REGISTRY.find("agent", name)
    if entry is None:
        raise UnknownAgentError(
            f"unknown agent {name!r}; known agents: {', '.join(REGISTRY.names('agent'))}"
        )
    return entry


def agent_factory(name: str) -> AgentFactory:
    """The class or factory registered as ``name`` (imported now)."""
    entry = agent_entry(name)
    with requires_extra(f"the {name!r} agent", entry.meta.get("extra")):
        return cast(AgentFactory, entry.load())


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build a registered agent; unknown names and arguments fail with the options."""
    factory = agent_factory(name)
    params = inspect.signature(factory).parameters
    bad = sorted(set(kwargs) - set(params))
    if bad:
        raise TypeError(
            f"agent {name!r} takes no argument {', '.join(bad)}; "
            f"it takes: {', '.join(params) or 'none'}"
        )
    with requires_extra(f"the {name!r} agent", agent_entry(name).meta.get("extra")):
        return factory(**kwargs)


def agent_names() -> list[str]:
    """Every registered agent's name, sorted."""
    return REGISTRY.names("agent")


def agent_description(name: str) -> str:
    return agent_entry(name).description


def agent_extra(name: str) -> str | None:
    """The optional extra agent ``name`` needs, or None (also for unknown names)."""
    entry = REGISTRY.find("agent", name)
    return entry.meta.get("extra") if entry is not None else None


def agent_parameters(name: str) -> tuple[str, ...]:
    """The keyword arguments agent ``name`` takes (empty for an unknown name)."""
    if REGISTRY.find("agent", name) is None:
        return ()
    return tuple(inspect.signature(agent_factory(name)).parameters)


def needs_model(name: str) -> bool:
    entry = REGISTRY.find("agent", name)
    return entry is not None and bool(entry.meta.get("needs_model", True))
