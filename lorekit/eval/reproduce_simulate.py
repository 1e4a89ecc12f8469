"""Scripted models for ``lorekit reproduce run --simulate``: every row, offline.

Each method ships scripted models that read its prompts and answer in its
formats (:mod:`lorekit.agents.adapt.simulation` for TextCraft,
:mod:`lorekit.agents.adapt.simulation_envs` for ALFWorld and WebShop,
:mod:`lorekit.agents.agentkit.simulation`, :mod:`lorekit.agents.spring.simulation`).
This module picks the ones for an (env, agent) pair, so that a table plays end
to end without a model service: a check of the plumbing (prompts, parsing,
store, comparison), never a reproduction. :func:`describe` is what the summary
prints as "the models that answered", so no one mistakes the figures for a
model's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lorekit.llm.roles import Roles

ADAPT_FAMILY = frozenset({"react", "plan-execute", "try-again", "reflexion", "adapt"})
"""Agents that share ADaPT's executor, planner and reflection prompts."""

CAPABILITY = 2
"""The scripted TextCraft executor keeps this many crafting levels in mind."""
NOISE = 0.1
"""... and declares success too early on this share of its turns."""


class NoSimulation(LookupError):
    """No scripted models exist for this agent on this env."""


@dataclass(frozen=True, slots=True)
class Simulation:
    """The roles a simulated row plays with, and how the summary names them."""

    roles: Roles
    description: str


_PAIRS = frozenset(
    {(env, agent) for env in ("textcraft", "alfworld", "webshop") for agent in ADAPT_FAMILY}
    | {("crafter", "spring"), ("crafter", "agentkit-crafter"), ("webshop", "agentkit-webshop")}
    | {("alfworld", "automanual")}
)


def supported(env_name: str, agent: str) -> bool:
    """Whether scripted models answer ``agent`` on ``env_name``."""
    return (env_name, agent) in _PAIRS


def simulated_roles(env_name: str, env_kwargs: Mapping[str, Any], agent: str) -> Roles:
    """The roles of :func:`simulation` (a module-level function, so the Ray backend
    can build them where the episodes play)."""
    return simulation(env_name, env_kwargs, agent).roles


def describe(env_name: str, agent: str) -> str:
    """How the summary names the scripted models of ``agent`` on ``env_name``."""
    if not supported(env_name, agent):
        raise NoSimulation(f"no scripted models for agent {agent!r} on env {env_name!r}")
    if agent == "automanual":
        return (
            "scripted AutoManual planner, builder, consolidator and formulator "
            "(lorekit.agents.automanual.simulation, simulation_builder)"
        )
    if env_name == "textcraft":
        return (
            f"scripted TextCraft executor (capability {CAPABILITY}, noise {NOISE}) "
            "and planner (lorekit.agents.adapt.simulation)"
        )
    if agent in ADAPT_FAMILY:
        return (
            f"scripted {env_name} executor and one-step planner "
            "(lorekit.agents.adapt.simulation_envs)"
        )
    package = "spring" if agent == "spring" else "agentkit"
    return f"scripted {package} answers (lorekit.agents.{package}.simulation)"


def simulation(env_name: str, env_kwargs: Mapping[str, Any], agent: str) -> Simulation:
    """The scripted models for ``agent`` on ``env_name`` (built with ``env_kwargs``).

    Raises :class:`NoSimulation` for a pair no scripted model answers."""
    from lorekit.llm.scripted import ScriptedLLM

    text = describe(env_name, agent)
    if agent == "automanual":
        return Simulation(_automanual(), text)
    if env_name == "textcraft":
        return Simulation(_textcraft(env_kwargs), text)
    if agent in ADAPT_FAMILY:
        from lorekit.agents.adapt import simulation_envs as sim

        executor = sim.alfworld_executor() if env_name == "alfworld" else sim.webshop_executor()
        roles = {
            "default": ScriptedLLM(fn=executor, model=f"simulated-{env_name}-executor"),
            "planner": ScriptedLLM(fn=sim.planner(), model="simulated-planner"),
        }
        return Simulation(Roles(roles), text)
    if agent == "spring":
        from lorekit.agents.spring.simulation import spring_model

        fn = spring_model()
    elif env_name == "crafter":
        from lorekit.agents.agentkit.simulation import crafter_model

        fn = crafter_model()
    else:
        from lorekit.agents.agentkit.simulation import webshop_model

        fn = webshop_model()
    return Simulation(Roles({"default": ScriptedLLM(fn=fn, model=f"simulated-{agent}")}), text)


def _textcraft(env_kwargs: Mapping[str, Any]) -> Roles:
    """ADaPT's TextCraft study models, reading the recipes of the env the row plays."""
    from lorekit.agents.adapt.simulation import (
        SimulatedLLM,
        textcraft_executor,
        textcraft_planner,
    )
    from lorekit.envs import make

    env = make("textcraft", **dict(env_kwargs))
    try:
        book = env.book  # type: ignore[attr-defined]
    finally:
        env.close()
    executor = SimulatedLLM(
        textcraft_executor(book, capability=CAPABILITY, noise=NOISE),
        model="simulated-textcraft-executor",
    )
    planner = SimulatedLLM(textcraft_planner(book), model="simulated-textcraft-planner")
    return Roles({"default": executor, "planner": planner})


def _automanual() -> Roles:
    """The Path Dependence study's ALFWorld models, one per AutoManual stage."""
    from lorekit.agents.automanual.simulation import planner_model
    from lorekit.agents.automanual.simulation_builder import (
        builder_model,
        consolidator_model,
        formulator_model,
    )
    from lorekit.llm.scripted import ScriptedLLM

    fns = {
        "planner": planner_model(),
        "builder": builder_model(),
        "consolidator": consolidator_model(),
        "formulator": formulator_model(),
    }
    models = {
        role: ScriptedLLM(fn=fn, model=f"simulated-automanual-{role}") for role, fn in fns.items()
    }
    return Roles(models, "planner")
