"""Fresh models for every episode of a team run.

The harness hands an agent one set of models for the whole run. A team's
models may keep state between calls (the simulation's scripted models remember
whom they gave work to, and draw their latency from a seeded stream), so one
set shared by every episode would carry the first episode's memory into the
second and make results depend on task order and on ``-j``. Instead the run
gets :func:`episode_roles`: stand-ins that forward each call to the models of
the episode being played, which :class:`~lorekit.agents.teams.runs.TeamAgent`
builds fresh per episode, seeded from the run seed and the task id only
(:func:`episode_seed`), publishes in :data:`current_models` while the
episode plays, and closes when it ends (:func:`close_models`). Served models
are built the same way: a new client per episode (its connections closed at
the end), so nothing of one episode -- a scripted model's place in its
answers, an open connection -- reaches the next; only the run's limiters and
cache, which are the server's and the run's, are shared. Metering and call
rows still wrap the stand-ins, so every call lands in its episode's rows
under its role as before.
"""

from __future__ import annotations

import contextvars
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from lorekit.llm.base import Completion, MessageLike, RequestParams
from lorekit.llm.roles import Roles

ModelFactory = Callable[[int], Roles]
"""``factory(seed)`` -> the models of one episode (built fresh each call)."""

#: The models of the episode being played; tasks the team spawns inherit it.
current_models: contextvars.ContextVar[Roles] = contextvars.ContextVar("lorekit_team_models")


def episode_seed(run_seed: int, task_id: str) -> int:
    """A seed from the run seed and the task alone: the same task draws the same
    latencies whatever its position in the run or the episodes beside it."""
    return zlib.crc32(f"{run_seed}\x00{task_id}".encode())


class EpisodeModel:
    """One role's stand-in: forwards every call to the current episode's model."""

    def __init__(self, role: str, name: str = "episode-model") -> None:
        self.role = role
        self._name = name

    @property
    def model(self) -> str:
        models = current_models.get(None)
        return models[self.role].model if models is not None else self._name

    async def complete(
        self, messages: Sequence[MessageLike] | str, params: RequestParams | None = None
    ) -> Completion:
        models = current_models.get(None)
        if models is None:
            raise RuntimeError(
                f"the {self.role!r} model is built per episode; call it inside a team episode"
            )
        return await models[self.role].complete(messages, params=params)


async def close_models(models: Roles) -> None:
    """Close what an episode's models hold open (a served model's HTTP client),
    looking through the wrappers (cache, limiter) that keep the model as ``inner``;
    models with nothing to close are left as they are."""
    seen: set[int] = set()
    for role in models:
        model: Any = models[role]
        while model is not None and id(model) not in seen:
            seen.add(id(model))
            aclose = getattr(model, "aclose", None)
            if callable(aclose):
                await aclose()
                break
            model = getattr(model, "inner", None)


def episode_roles(roles: Sequence[str], name: str = "episode-model") -> Roles:
    """Stand-ins for ``roles`` to hand the harness (see the module docstring)."""
    return Roles({role: EpisodeModel(role, name) for role in roles})
