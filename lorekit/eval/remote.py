"""Playing episodes away from the run store, and bringing them back whole.

A remote worker (a Ray actor, see :mod:`lorekit.eval.ray_backend`) cannot write
to the driver's store, and must not: the driver alone commits, so an episode
is either in the store whole or not at all, however the cluster fails. The
worker therefore plays into a :class:`BufferRecorder` and returns a
:class:`RemoteEpisode` (steps, model calls, usage, the trajectory or the
error); :func:`replay` feeds it into the driver's episode writer exactly as a
local episode would have, so the store cannot tell the difference.

:class:`EpisodeHost` is the worker's side without any Ray in it: it owns a
pool of envs (stateful and costly to start: browsers, worlds), the agent and
the models, all built where it runs from picklable recipes. It is plain
Python, so everything but the transport is tested without a cluster.
"""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lorekit.agents.base import Agent, Trajectory
from lorekit.eval.backend import (
    EpisodeRoles,
    EpisodeSpec,
    EpisodeTimeout,
    check_models,
    play_with_pool,
)
from lorekit.eval.envpool import EnvPool, EnvSource
from lorekit.llm.accounting import PriceTable, UsageLedger
from lorekit.llm.calls import CallRecord
from lorekit.llm.roles import Roles

if TYPE_CHECKING:
    from lorekit.eval.store import EpisodeWriter


class BufferRecorder:
    """Collects an episode's steps and calls in memory (a recorder and a call sink)."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, str, float, bool, dict[str, Any]]] = []
        self.calls: list[CallRecord] = []
        self.live: Trajectory | None = None

    def add_step(
        self,
        observation: str,
        action: str,
        reward: float = 0.0,
        done: bool = False,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        self.steps.append((observation, action, float(reward), bool(done), dict(info or {})))

    def add_llm_call(self, record: CallRecord) -> None:
        self.calls.append(record)

    __call__ = add_llm_call

    def attach(self, trajectory: Any) -> None:
        self.live = trajectory


class RemoteEpisodeError(RuntimeError):
    """An episode's exception that could not travel back as itself (not picklable)."""


@dataclass(slots=True)
class RemoteEpisode:
    """Everything one remotely played episode produced, ready to travel back."""

    key: str
    steps: list[tuple[str, str, float, bool, dict[str, Any]]] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    ledger: UsageLedger = field(default_factory=UsageLedger)
    trajectory: Trajectory | None = None
    partial: Trajectory | None = None  # what the agent had built when an error struck
    error: BaseException | None = None
    host: str = ""
    discarded: int = 0  # envs this host dropped while playing it
    stuck_threads: int = 0


def replay(remote: RemoteEpisode, writer: EpisodeWriter, ledger: UsageLedger) -> Trajectory:
    """Put a remote episode's steps, calls and usage where a local one's would be.

    Returns its trajectory, or raises the exception that ended it (after the
    steps and calls are in ``writer``, and the partial trajectory in
    ``writer.live``, as the local harness leaves them).
    """
    for observation, action, reward, done, info in remote.steps:
        writer.add_step(observation, action, reward, done, info)
    for call in remote.calls:
        writer.add_llm_call(call)
    ledger.merge(remote.ledger)
    if remote.error is not None:
        writer.live = remote.partial
        raise remote.error
    if remote.trajectory is None:
        raise RemoteEpisodeError(f"episode {remote.key!r} came back with no result and no error")
    return remote.trajectory


def portable(error: BaseException) -> BaseException:
    """``error`` if it survives pickling, else a :class:`RemoteEpisodeError` saying what it was.

    Timeouts stay :class:`EpisodeTimeout`, so the driver reports them as it
    does local ones (and the early-stop rule ignores them the same way).
    """
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        kind = EpisodeTimeout if isinstance(error, TimeoutError) else RemoteEpisodeError
        return kind(f"{type(error).__name__}: {error}")
    return error


@dataclass(frozen=True, slots=True)
class HostRecipe:
    """How to build a host where it runs: all of it picklable.

    ``make_agent`` and ``make_roles`` are called in the worker's process, so
    agents that hold files or connections, and model clients with their own
    HTTP pools, are never pickled. For models built per episode, give
    ``make_roles=None`` and ``make_episode_roles``: called once in the worker,
    it returns the :data:`~lorekit.eval.backend.EpisodeRoles` factory the host
    then calls for every episode it plays (so what the factory shares, a cache
    or a limiter, is shared within the worker).
    """

    env: EnvSource
    make_agent: Callable[[], Agent]
    make_roles: Callable[[], Roles] | None
    prices: PriceTable | None = None
    make_episode_roles: Callable[[], EpisodeRoles] | None = None


class EpisodeHost:
    """Plays episodes for a remote worker; one env per episode in flight."""

    def __init__(self, recipe: HostRecipe, name: str = "host") -> None:
        self.name = name
        self.agent = recipe.make_agent()
        self.roles = recipe.make_roles() if recipe.make_roles is not None else None
        self.episode_roles = (
            recipe.make_episode_roles() if recipe.make_episode_roles is not None else None
        )
        check_models(self.roles, self.episode_roles)
        self.prices = recipe.prices
        self.pool = EnvPool(recipe.env)
        self.played = 0

    async def play(self, spec: EpisodeSpec, timeout_s: float | None) -> RemoteEpisode:
        """Play ``spec`` and return what happened; never raises for the episode's own errors."""
        recorder = BufferRecorder()
        ledger = UsageLedger(self.prices)
        out = RemoteEpisode(spec.key, ledger=ledger, host=self.name)
        before = (self.pool.discarded, self.pool.stuck_threads)
        try:
            out.trajectory = await play_with_pool(
                self.pool,
                self.agent,
                self.roles,
                spec,
                recorder,
                ledger,
                timeout_s,
                episode_roles=self.episode_roles,
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            out.error = portable(exc)
            out.partial = recorder.live
        self.played += 1
        out.steps, out.calls = recorder.steps, recorder.calls
        out.discarded = self.pool.discarded - before[0]
        out.stuck_threads = self.pool.stuck_threads - before[1]
        return out

    def close(self) -> None:
        self.pool.close()
