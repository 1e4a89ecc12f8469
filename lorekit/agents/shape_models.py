"""The cost estimate's models, and what it knows of agents beyond their prompts.

A cost estimate needs the agent's own prompts (their manuals, examples and
growing histories), so it plays each row's agent; no model is called. Three
kinds of play give the estimate its range (:mod:`lorekit.eval.cost`):

- :func:`shape_roles`: the scripted models ``reproduce run --simulate`` plays
  with (the registry :mod:`lorekit.agents.simulated`): the prompts' shape (the
  first prompt of each role, what a turn adds, the stable prefix);
- :func:`idle_roles`: the same, but the roles that choose the env's actions
  answer an action that changes nothing (``cost_shapes.yaml``'s
  ``idle_actions``), so every executor run plays to its turn cap: a model that
  wanders to its budget, the high end;
- the env's expert (the caller plays it): one call per expert action is what a
  perfect model spends, the low end.

:func:`published_shape` gives, where the authors' run of an agent was
replayed through LoreKit, what it cost per task group: the central figure for
rows that play that agent as the published code did. Rows that test with a
build (AutoManual) need the build first; :func:`tests_with_build` says which.
:func:`prompt_order` says, per agent, why its prompts share a stable prefix.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.agents.simulated import simulated_roles
from lorekit.llm.roles import Roles
from lorekit.llm.scripted import ScriptedLLM
from lorekit.registry import REGISTRY

SHAPES = Path(__file__).with_name("cost_shapes.yaml")


@functools.cache
def _shapes() -> dict[str, Any]:
    data = yamlio.safe_load(SHAPES.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{SHAPES.name}: expected a mapping")
    return data


def prompt_order(agent: str) -> str | None:
    """How ``agent`` orders its prompts (its registration's ``prompt_order``), for the
    dry run's report on prompt caching; None when it does not say."""
    entry = REGISTRY.find("agent", agent)
    order = entry.meta.get("prompt_order") if entry is not None else None
    return str(order) if order else None


def tests_with_build(agent: str) -> bool:
    """Whether ``agent``'s rows test with what a build made (its registration says so)."""
    entry = REGISTRY.find("agent", agent)
    return bool(entry is not None and entry.meta.get("tests_with_build"))


def shape_roles(env: str, agent: str, env_options: Mapping[str, Any] | None = None) -> Roles:
    """The scripted models for ``agent`` on ``env``; LookupError when there are none."""
    entry = REGISTRY.find("agent", agent)
    if entry is not None and entry.meta.get("play"):  # a team: `team run`'s own loop
        raise LookupError(f"agent {agent!r} plays its rows its own way, which the dry run does not")
    return simulated_roles(env, env_options or {}, agent)


def acting_roles(agent: str) -> tuple[str, ...]:
    """The roles of ``agent`` whose answers are the env's actions (none when unknown)."""
    roles = (_shapes().get("acting_roles") or {}).get(agent) or ()
    return tuple(str(r) for r in roles)


def idle_action(env: str) -> str | None:
    """A valid action of ``env`` that changes nothing, or None when none is known."""
    action = (_shapes().get("idle_actions") or {}).get(env)
    return str(action) if action else None


def idle_roles(env: str, agent: str, env_options: Mapping[str, Any] | None = None) -> Roles:
    """The scripted models of ``agent``, its acting roles answering ``env``'s idle
    action on every turn; LookupError when the agent or the env has none."""
    action, acting = idle_action(env), acting_roles(agent)
    if action is None or not acting:
        raise LookupError(f"no idle play for agent {agent!r} on env {env!r}")
    base = shape_roles(env, agent, env_options)
    idle = ScriptedLLM(default=action, model=f"idle-{env}")
    models = {name: base[name] for name in base if name not in acting}
    models.update(dict.fromkeys(acting, idle))
    return Roles(models, base.default)


def paper_ratio() -> float | None:
    """What a model like the paper's spends against a perfect model (``cost_shapes.yaml``)."""
    value = _shapes().get("paper_ratio")
    return float(value) if isinstance(value, int | float) else None


def published_shape(
    env: str, agent: str, options: Mapping[str, Any]
) -> tuple[str, dict[str, dict[str, dict[str, float]]]] | None:
    """``(file, {group: {role: {calls, prompt, completion}}})`` per episode of the
    authors' replayed run of ``agent`` on ``env``, when a row's ``options`` play it
    as that run did; None otherwise."""
    entry = (_shapes().get("published") or {}).get(f"{agent}@{env}")
    if not isinstance(entry, dict):
        return None
    wanted = entry.get("options") or {}
    if any(options.get(k) != v for k, v in wanted.items()):
        return None
    groups = {
        str(g): {str(r): {str(k): float(v) for k, v in t.items()} for r, t in roles.items()}
        for g, roles in (entry.get("groups") or {}).items()
    }
    return str(entry.get("file") or "the published run"), groups
