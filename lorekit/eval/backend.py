"""Where episodes are played: on this machine (:class:`LocalBackend`) or elsewhere.

:func:`~lorekit.eval.runner.run_eval` owns everything that must happen once and
in one place (which episodes are left, the concurrency gate, committing each
episode to the run store, the summary). A backend owns only the playing: it
takes an episode spec, the episode's writer and its usage ledger, and returns
the agent's trajectory, having put every step and model call into the writer.
So resume, per-episode atomicity and the summary are the same whatever the
backend: the Ray backend (:mod:`lorekit.eval.ray_backend`) plays remotely and
replays what came back into the same writer.

The models an episode plays with are either the run's (one :class:`Roles`
shared by every episode) or the episode's own: an :data:`EpisodeRoles` factory
called once per episode, where the episode plays, whose models are metered into
that episode's writer and closed when it ends. Agents whose models keep state
between calls (a team's scripted members remember whom they gave work to, a
served model holds connections) need the second, so that nothing of one
episode reaches the next and results do not depend on task order or ``-j``.

A backend raises :class:`EpisodeTimeout` when an episode ran out of time (its
message says which phase), or the exception that ended the episode.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from lorekit.agents.base import Agent, Trajectory
from lorekit.envs.asyncenv import AsyncEnv
from lorekit.envs.base import Task
from lorekit.eval.envpool import EnvPool, EnvSource
from lorekit.llm.accounting import UsageLedger
from lorekit.llm.roles import Roles

if TYPE_CHECKING:
    from lorekit.eval.store import EpisodeWriter


@dataclass(frozen=True, slots=True)
class EpisodeSpec:
    """One episode to play: its key in the store, task, seed and index."""

    key: str
    index: int
    task: Task
    seed: int


EpisodeRoles = Callable[[Task, int], Roles]
"""``factory(task, seed)`` -> one episode's own models, built fresh on each call
(``seed`` is the episode's). The harness meters them into the episode's writer
and closes them (:func:`close_roles`) when the episode ends."""


class EpisodeTimeout(TimeoutError):
    """An episode ran past its time limit; the message names the phase."""


@runtime_checkable
class EpisodeBackend(Protocol):
    """Plays one episode at a time per call; may be called concurrently."""

    name: str
    discarded: int  # envs dropped because a call was cut off or their process died
    stuck_threads: int  # of those, envs whose thread was still inside a call

    async def play(
        self,
        spec: EpisodeSpec,
        writer: EpisodeWriter,
        ledger: UsageLedger,
        timeout_s: float | None,
    ) -> Trajectory: ...

    def close(self) -> None: ...


class LocalBackend:
    """Episodes on this machine's event loop, with envs from a reusable pool.

    Models: the run's ``roles``, or ``episode_roles`` to build each episode's own.
    """

    name = "local"

    def __init__(
        self,
        env_factory: EnvSource,
        agent: Agent,
        roles: Roles | None,
        episode_roles: EpisodeRoles | None = None,
    ) -> None:
        check_models(roles, episode_roles)
        self.agent = agent
        self.roles = roles
        self.episode_roles = episode_roles
        self.pool = EnvPool(env_factory)

    @property
    def discarded(self) -> int:
        return self.pool.discarded

    @property
    def stuck_threads(self) -> int:
        return self.pool.stuck_threads

    async def play(
        self,
        spec: EpisodeSpec,
        writer: EpisodeWriter,
        ledger: UsageLedger,
        timeout_s: float | None,
    ) -> Trajectory:
        return await play_with_pool(
            self.pool,
            self.agent,
            self.roles,
            spec,
            writer,
            ledger,
            timeout_s,
            episode_roles=self.episode_roles,
        )

    def close(self) -> None:
        self.pool.close()


def check_models(roles: Roles | None, episode_roles: EpisodeRoles | None) -> None:
    """Exactly one source of models: the run's ``roles`` or per-episode ``episode_roles``."""
    if (roles is None) == (episode_roles is None):
        given = "both" if roles is not None else "neither"
        raise ValueError(
            f"give the run's models (roles) or a per-episode factory (episode_roles); got {given}"
        )


async def play_with_pool(
    pool: EnvPool,
    agent: Agent,
    roles: Roles | None,
    spec: EpisodeSpec,
    recorder: Any,
    ledger: UsageLedger,
    timeout_s: float | None,
    *,
    episode_roles: EpisodeRoles | None = None,
) -> Trajectory:
    """One episode with an env from ``pool``: the body every backend shares.

    ``recorder`` gets the steps and (as a call sink) the model calls, whether
    the models are the run's ``roles`` or the episode's own, built here by
    ``episode_roles`` and closed when the episode ends. Building the env (a
    process to spawn, a browser to start) has its own time limit, then the
    episode has ``timeout_s``. The env goes back to the pool after the
    episode, or is closed if a call was cut off.
    """
    check_models(roles, episode_roles)
    own = episode_roles(spec.task, spec.seed) if episode_roles is not None else None
    models = own if own is not None else roles
    assert models is not None  # check_models saw to it
    metered = models.metered(ledger, recorder.add_llm_call)
    held: list[AsyncEnv] = []
    phase = "building the env"
    try:
        env = pool.take_free()
        if env is None:
            env = await asyncio.wait_for(pool.take(), timeout_s)
        held.append(env)
        phase = "episode"
        return await asyncio.wait_for(
            agent.run(env, spec.task, metered, recorder, seed=spec.seed), timeout_s
        )
    except TimeoutError as exc:
        message = f"{phase} timed out after {timeout_s} s"
        if held and held[0].broken is not None:
            message += f"; env {held[0].name!r} discarded: {held[0].broken}"
        raise EpisodeTimeout(message) from exc
    finally:
        if held:
            await end_episode(held[0])
            pool.give(held[0])
        if own is not None:
            await close_roles(own)


async def close_roles(roles: Roles) -> None:
    """Close what an episode's own models hold open (a served model's HTTP client),
    looking through the wrappers that keep their model as ``inner`` (cache,
    limiter); a model shared by several roles is closed once, and models with
    nothing to close are left as they are."""
    seen: set[int] = set()
    for role in roles:
        model: Any = roles[role]
        while model is not None and id(model) not in seen:
            seen.add(id(model))
            aclose = getattr(model, "aclose", None)
            if callable(aclose):
                await aclose()
                break
            model = getattr(model, "inner", None)


#: How long an env may take to let go of an episode (a browser lease) before it is dropped.
END_EPISODE_TIMEOUT_S = 30.0


async def end_episode(env: AsyncEnv) -> None:
    """Tell ``env`` its episode is over; an env that cannot say so in time, or
    fails to, is marked broken (the pool then closes it instead of reusing it)."""
    if env.broken is not None or env.closed:
        return
    try:
        await asyncio.wait_for(env.end_episode(), END_EPISODE_TIMEOUT_S)
    except TimeoutError:
        env.broken = env.broken or "it did not end its episode in time"
    except asyncio.CancelledError:
        env.broken = env.broken or "ending its episode was cancelled"
        raise
    except Exception as exc:
        env.broken = f"ending its episode failed: {type(exc).__name__}: {exc}"
