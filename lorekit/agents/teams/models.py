"""A team's models: built fresh for every episode, and given the team's clock.

Two rules, both about keeping episodes apart and runs repeatable:

- **Fresh per episode.** A team's models may keep state between calls (the
  scripted members of :mod:`lorekit.agents.teams.testing` remember whom they
  gave work to and draw their latency from a seeded stream; a served model
  holds connections). The harness therefore builds them per episode
  (:data:`lorekit.eval.backend.EpisodeRoles`): :func:`simulated_models` and
  :func:`fresh_models` are such factories, seeded from the run seed and the
  task id alone (:func:`episode_seed`), so an episode's result does not depend
  on its position in the run, the other tasks or ``-j``.
- **Thinking takes time on the team's clock.** Models that simulate their
  latency say so with ``use_clock(clock)`` (:class:`ClockUser`); a team run
  hands them the episode's clock when it starts (:func:`give_clock`), so they
  are built before any clock exists and the clock reaches them only as an
  argument. The latency is slept inside the call, so a call the episode's end
  cuts off is never recorded, exactly as for a real model's. Served models
  need nothing: their time passes on the wall clock by itself.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from lorekit.agents.teams.clock import Clock
from lorekit.envs.base import Task
from lorekit.llm.base import LLM
from lorekit.llm.roles import Roles


def episode_seed(run_seed: int, task_id: str) -> int:
    """A seed from the run seed and the task alone: the same task draws the same
    latencies whatever its position in the run or the episodes beside it."""
    return zlib.crc32(f"{run_seed}\x00{task_id}".encode())


@runtime_checkable
class ClockUser(Protocol):
    """A model that spends a simulated latency on a clock it is given."""

    def use_clock(self, clock: Clock) -> None: ...


def give_clock(models: Iterable[LLM], clock: Clock) -> int:
    """Hand ``clock`` to each model that takes one, looking through the wrappers
    that keep their model as ``inner`` (metering, cache, limiter); returns how
    many took it. A model set plays one episode at a time: the last clock wins."""
    given = 0
    seen: set[int] = set()
    for top in models:
        model: Any = top
        while model is not None and id(model) not in seen:
            seen.add(id(model))
            if isinstance(model, ClockUser):
                model.use_clock(clock)
                given += 1
                break
            model = getattr(model, "inner", None)
    return given


def simulated_models(run_seed: int = 0, **options: Any) -> Callable[[Task, int], Roles]:
    """The per-episode factory of the team study's scripted models
    (:func:`lorekit.agents.teams.testing.simulated_roles`, ``options`` passed on):
    each episode gets its own set, seeded from ``run_seed`` and its task id, and
    sleeping on the clock its team run gives it."""
    from lorekit.agents.teams.testing import simulated_roles

    def build(task: Task, _seed: int) -> Roles:
        return simulated_roles(seed=episode_seed(run_seed, task.id), **options)

    return build


def fresh_models(factory: Callable[[], Mapping[str, LLM]]) -> Callable[[Task, int], Roles]:
    """A per-episode factory from a run's model factory (``roles_factory(config)``,
    which builds new clients on each call and shares the run's cache and limiters):
    nothing said in one episode, and no connection, reaches another."""

    def build(_task: Task, _seed: int) -> Roles:
        models = factory()
        return models if isinstance(models, Roles) else Roles(dict(models))

    return build
