"""Episodes on a Ray cluster: ``lorekit run ... --backend ray [--address ADDR]``.

Design, from what Ray costs here (``ray.init`` 3-11 s, an idle cluster about
450 MB and 10 processes, a plain task about 25 ms of overhead on 2 CPUs, an
async actor call well under a millisecond):

- **Actors, not tasks.** Each actor is an :class:`~lorekit.eval.remote.EpisodeHost`:
  it builds the agent, the models and a pool of envs once, where it runs, and
  keeps them for every episode it plays (browsers and worlds are stateful and
  slow to start); models built per episode (``HostRecipe.make_episode_roles``)
  are built there too, by the factory the actor made once. Actors are async,
  so one actor plays ``per_actor`` episodes at once, each with its own env,
  and its model calls are made from the actor.
- **The driver commits.** An actor returns each finished episode whole (a
  :class:`~lorekit.eval.remote.RemoteEpisode`); the driver replays it into its
  own episode writer. The store, resume, per-episode atomicity and the summary
  are therefore exactly those of the local backend: a driver killed mid-run
  loses only episodes in flight, which the next run with the same id plays.
- **Limits hold across the cluster.** Model-endpoint limits (``max_in_flight``,
  ``rpm``) are kept by one named actor (``lorekit-limits`` in namespace
  ``lorekit``); every actor's models take their slots from it, so "8 requests
  in flight to this server" holds however many actors and nodes there are, and
  for every driver using the same cluster.
- **A dead or hung actor is replaced.** Its episodes in flight end in an error
  (replayable with ``--retry-errors``) and a fresh actor takes its place.

``ray`` is the optional extra ``lorekit[ray]``; nothing here imports it until a
backend starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import pickle
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lorekit.agents.base import Trajectory
from lorekit.eval.backend import EpisodeSpec, EpisodeTimeout
from lorekit.eval.remote import (
    EpisodeHost,
    HostRecipe,
    RemoteEpisode,
    RemoteEpisodeError,
    replay,
)
from lorekit.llm.accounting import UsageLedger

if TYPE_CHECKING:
    from lorekit.config import LimitKey, ModelSettings
    from lorekit.eval.store import EpisodeWriter
    from lorekit.llm.limits import SlotLimiter

NAMESPACE = "lorekit"
LIMITS_ACTOR = "lorekit-limits"
#: Extra time the driver gives an actor beyond the episode's own limit (which
#: the actor enforces itself) before it calls the actor hung and replaces it.
GRACE_S = 30.0


class RayMissingError(RuntimeError):
    """Ray is not installed; the message says how to install it."""


def import_ray() -> Any:
    """The ``ray`` module, or a one-line error naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise RayMissingError("the Ray backend needs ray: pip install 'lorekit[ray]'") from None
    return ray


# -- cluster-wide model limits ---------------------------------------------------


class _LimitsActor:
    """Holds one :class:`~lorekit.llm.limits.Limiter` per endpoint for the whole cluster."""

    def __init__(self) -> None:
        self._limiters: dict[tuple[str, ...], Any] = {}
        self._held: dict[int, contextlib.AbstractAsyncContextManager[None]] = {}
        self._tokens = itertools.count(1)

    async def acquire(
        self, key: tuple[str, ...], max_in_flight: int | None, rpm: float | None
    ) -> int:
        from lorekit.llm.limits import Limiter

        limiter = self._limiters.get(key)
        if limiter is None:
            limiter = self._limiters[key] = Limiter(max_in_flight, rpm)
        slot = limiter.acquire()
        await slot.__aenter__()
        token = next(self._tokens)
        self._held[token] = slot
        return token

    async def release(self, token: int) -> None:
        slot = self._held.pop(token, None)
        if slot is not None:
            await slot.__aexit__(None, None, None)

    def peak_in_flight(self) -> dict[str, int]:
        return {"/".join(k): lim.peak_in_flight for k, lim in self._limiters.items()}


_PENDING: set[asyncio.Future[None]] = set()  # late releases in flight (kept from the GC)


class ClusterLimiter:
    """A :class:`~lorekit.llm.limits.SlotLimiter` whose slots come from the limits actor."""

    def __init__(
        self, actor: Any, key: tuple[str, ...], max_in_flight: int | None, rpm: float | None
    ):
        self._actor = actor
        self._key = key
        self._limits = (max_in_flight, rpm)

    @contextlib.asynccontextmanager
    async def acquire(self) -> AsyncIterator[None]:
        ref = self._actor.acquire.remote(self._key, *self._limits)
        try:
            token = await ref
        except asyncio.CancelledError:
            # The slot may still be granted after we stop waiting: hand it back then.
            task = asyncio.ensure_future(self._release_when_granted(ref))
            _PENDING.add(task)
            task.add_done_callback(_PENDING.discard)
            raise
        try:
            yield
        finally:
            await self._actor.release.remote(token)

    async def _release_when_granted(self, ref: Any) -> None:
        with contextlib.suppress(Exception):
            await self._actor.release.remote(await ref)


@dataclass(frozen=True, slots=True)
class ClusterLimits:
    """A picklable limiter factory for :func:`lorekit.config.build_roles`, used in actors."""

    name: str = LIMITS_ACTOR
    namespace: str = NAMESPACE

    def __call__(self, key: LimitKey, settings: ModelSettings) -> SlotLimiter:
        ray = import_ray()
        actor = ray.get_actor(self.name, namespace=self.namespace)
        return ClusterLimiter(actor, tuple(key), settings.max_in_flight, settings.rpm)


# -- episode actors -------------------------------------------------------------


class _HostActor:
    """An :class:`EpisodeHost` in its own Ray worker process."""

    def __init__(self, recipe: HostRecipe, name: str) -> None:
        self.host = EpisodeHost(recipe, name)

    async def play(self, spec: EpisodeSpec, timeout_s: float | None) -> RemoteEpisode:
        return _portable_episode(await self.host.play(spec, timeout_s))

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        self.host.close()


def _portable_episode(out: RemoteEpisode) -> RemoteEpisode:
    """``out`` as it can travel: notes that do not pickle become their JSON text form."""
    try:
        pickle.dumps(out)
    except Exception:
        out.partial = None
        if out.trajectory is not None:
            out.trajectory.notes = json.loads(json.dumps(out.trajectory.notes, default=str))
    return out


class RayBackend:
    """Plays episodes on Ray actors; see the module docstring."""

    name = "ray"

    def __init__(
        self,
        recipe: HostRecipe,
        *,
        actors: int | None = None,
        per_actor: int = 1,
        address: str | None = None,
        grace_s: float = GRACE_S,
        init_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if actors is not None and actors < 1:
            raise ValueError(f"actors must be >= 1, got {actors}")
        if per_actor < 1:
            raise ValueError(f"per_actor must be >= 1, got {per_actor}")
        self.recipe = recipe
        self.actors = actors
        self.per_actor = per_actor
        self.address = address
        self.grace_s = grace_s
        self.init_kwargs = dict(init_kwargs or {})
        self.discarded = 0
        self.stuck_threads = 0
        self.replaced = 0
        self._ray: Any = None
        self._started_cluster = False
        self._handles: list[Any] = []
        self._slots: asyncio.Queue[int] | None = None
        self._actor_class: Any = None
        self._limits: Any = None

    # -- lifecycle ----------------------------------------------------------

    def start(self) -> None:
        """Connect to (or start) the cluster and create the actors. Blocks for seconds."""
        ray = self._ray = import_ray()
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no network calls home
        if not ray.is_initialized():
            if self.address is not None:
                check_reachable(self.address)
            kwargs: dict[str, Any] = {
                "namespace": NAMESPACE,
                "include_dashboard": False,
                "logging_level": logging.WARNING,
                "log_to_driver": False,
            }
            if self.address is None:  # our own cluster: results are small, keep shm small
                kwargs["object_store_memory"] = 256 * 1024 * 1024
            kwargs.update(self.init_kwargs)
            ray.init(address=self.address, **kwargs)
            self._started_cluster = True
        if self.actors is None:
            self.actors = max(1, int(ray.cluster_resources().get("CPU", 1)))
        # Keep the handle: a named actor whose last handle goes away is gone.
        self._limits = (
            ray.remote(num_cpus=0)(_LimitsActor)
            .options(name=LIMITS_ACTOR, namespace=NAMESPACE, get_if_exists=True)
            .remote()
        )
        # The driver's slots bound each actor to ``per_actor`` episodes; the actor
        # itself accepts any number (it may be shared by several drivers' runs).
        # No CPU is reserved (model-bound episodes mostly wait); SPREAD puts them on
        # every node of a cluster instead of packing them on the driver's.
        self._actor_class = ray.remote(
            num_cpus=0, max_concurrency=1000, scheduling_strategy="SPREAD"
        )(_HostActor)
        self._handles = [self._new_actor(i) for i in range(self.actors)]
        # Wait for every actor to be built: a bad agent or model config fails here, once.
        ray.get([h.pid.remote() for h in self._handles])

    def _new_actor(self, index: int) -> Any:
        return self._actor_class.remote(self.recipe, f"actor-{index}")

    def _slot_queue(self) -> asyncio.Queue[int]:
        if self._slots is None:
            assert self.actors is not None
            self._slots = asyncio.Queue()
            for _ in range(self.per_actor):
                for i in range(self.actors):
                    self._slots.put_nowait(i)
        return self._slots

    def close(self) -> None:
        if self._ray is None:
            return
        for handle in self._handles:
            with contextlib.suppress(Exception):
                self._ray.kill(handle)
        self._handles = []
        if self._started_cluster:
            self._ray.shutdown()
            self._started_cluster = False

    # -- episodes -----------------------------------------------------------

    async def play(
        self,
        spec: EpisodeSpec,
        writer: EpisodeWriter,
        ledger: UsageLedger,
        timeout_s: float | None,
    ) -> Trajectory:
        if not self._handles:
            raise RuntimeError("RayBackend.start() was not called")
        slots = self._slot_queue()
        index = await slots.get()
        handle = self._handles[index]
        try:
            ref = handle.play.remote(spec, timeout_s)
            limit = None if timeout_s is None else timeout_s + self.grace_s
            try:
                remote: RemoteEpisode = await asyncio.wait_for(
                    asyncio.wrap_future(ref.future()), limit
                )
            except TimeoutError:
                self._replace(index, handle)
                raise EpisodeTimeout(
                    f"episode timed out after {timeout_s} s; actor {index} did not answer "
                    f"within {self.grace_s} s more and was replaced"
                ) from None
            except self._ray.exceptions.RayActorError as exc:
                self._replace(index, handle)
                raise RemoteEpisodeError(f"actor {index} died: {_first_line(exc)}") from None
            except self._ray.exceptions.RayTaskError as exc:
                raise RemoteEpisodeError(f"actor {index} failed: {_first_line(exc)}") from None
        finally:
            slots.put_nowait(index)
        self.discarded += remote.discarded
        self.stuck_threads += remote.stuck_threads
        return replay(remote, writer, ledger)

    def _replace(self, index: int, handle: Any) -> None:
        """Kill a hung or dead actor and start a fresh one in its place (once per failure)."""
        if self._handles[index] is not handle:
            return  # another episode on the same actor already replaced it
        with contextlib.suppress(Exception):
            self._ray.kill(handle)
        self._handles[index] = self._new_actor(index)
        self.replaced += 1

    def limits_in_flight(self) -> dict[str, int]:
        """Peak requests in flight per endpoint, as the cluster's limits actor saw them."""
        return dict(self._ray.get(self._limits.peak_in_flight.remote()))


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast on a ``HOST:PORT`` (or ``ray://HOST:PORT``) nobody listens on.

    ``ray.init`` retries an unreachable address for minutes, printing C++ log
    lines; a wrong ``--address`` should cost seconds and say what to fix.
    ``auto`` and addresses without a port are left to Ray.
    """
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            return
    except OSError as exc:
        raise ConnectionError(
            f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with "
            "`ray start --head`, or leave out --address to start a local one"
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__
