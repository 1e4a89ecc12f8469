"""Collaboration modes: when each team member gets to think and act.

All modes drive the same members, anything with ``async iterate() -> bool``
(one planning iteration plus the actions it queued; True when the member has
nothing more to do), in one :class:`~lorekit.agents.teams.world.teamworld.TeamWorld`:

- ``relay``: one member at a time, in order; the others idle (a chain of agents);
- ``round``: every member runs one iteration concurrently, then all wait for the
  slowest before the next round starts (the usual turn-based multi-agent loop);
- ``async``: every member is an independent task; nobody waits for anybody
  (S-Agents' non-obstructive collaboration).

A member that said it has nothing to do is *quiet* until someone else posts a
message to it (or to everyone) after its last iteration began; quiet members are not prompted (in
``async`` they sleep until a message arrives). The run stops when the world
ends (success, or everyone dead, or out of ticks), when every member is quiet,
at the time limit, or when the task's progress has not grown for ``cutoff_s``.
Times are the world's clock: virtual seconds on a virtual clock (deterministic)
or real seconds on the wall clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, get_args

from lorekit.agents.teams.clock import ClockEvent, join
from lorekit.agents.teams.world.teamworld import TeamWorld

Mode = Literal["relay", "round", "async"]
MODES: tuple[str, ...] = get_args(Mode)
StopReason = Literal["success", "ended", "idle", "time_limit", "no_progress"]
_EPS = 1e-9


class Member(Protocol):
    """One agent of a team, as the modes see it.

    Optional attributes the modes read when present: ``name`` (distinct; the
    key of ``iterations``) and ``player`` (its messages' sender name, so its
    own posts do not count as news that wake it).
    """

    async def iterate(self) -> bool: ...


class ModeError(RuntimeError):
    """A member misbehaved in a way that would stall the run (see the message)."""


@dataclass(frozen=True)
class ModeOutcome:
    """How a run of the members ended, in the world clock's seconds from its start.

    ``success_s`` is when the tick that completed the task happened (None if
    it was not completed); ``iterations`` counts each member's wake-ups (every
    ``iterate()``, including instant returns while it waits for orders);
    ``plans`` its planning passes, read from a member's ``plans`` counter when
    it keeps one (the paper's prompt times; else its wake-ups); ``rounds``
    counts rounds (``round``) or turns (``relay``).
    """

    mode: str
    clock: str
    reason: StopReason
    success: bool
    elapsed_s: float
    success_s: float | None
    last_progress_s: float
    progress: str
    ticks: int
    iterations: dict[str, int]
    rounds: int = 0
    cutoff_s: float = 0.0
    max_time_s: float = 0.0
    plans: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def run_members(
    members: Sequence[Member],
    mode: Mode,
    world: TeamWorld,
    *,
    cutoff_s: float,
    max_time_s: float,
    spin_limit: int = 1000,
) -> ModeOutcome:
    """Run ``members`` in ``world`` under ``mode`` until a stop condition (module docstring).

    The world must have been reset. A member whose iteration raises stops the
    run and the error propagates. ``spin_limit``: on a virtual clock, a member
    that iterates this many times in a row without the clock moving is an
    error (its iterations must take time: a model call on the clock, or acts).
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")
    if not members:
        raise ValueError("run_members needs at least one member")
    if not cutoff_s > 0 or not max_time_s > 0:
        raise ValueError(f"cutoff_s and max_time_s must be > 0, got {cutoff_s}, {max_time_s}")
    world.task  # noqa: B018  (raises a clear error when no episode runs)
    run = _Run(list(members), world, cutoff_s, max_time_s, spin_limit)
    with world.clock.participate():
        driver = {"relay": run.relay, "round": run.in_rounds, "async": run.free}[mode]
        reason = await driver()
    return run.outcome(mode, reason)


class _Run:
    def __init__(
        self,
        members: list[Member],
        world: TeamWorld,
        cutoff_s: float,
        max_time_s: float,
        spin_limit: int,
    ) -> None:
        self.members = members
        self.world = world
        self.clock = world.clock
        self.cutoff_s = cutoff_s
        self.max_time_s = max_time_s
        self.spin_limit = spin_limit
        self.names = _names(members)
        self.own = [
            {str(x) for x in (getattr(m, "player", None), getattr(m, "name", None)) if x}
            for m in members
        ]
        self.iterations = dict.fromkeys(self.names, 0)
        self.idle = [False] * len(members)
        self.seen = [0] * len(members)
        self.last_end: list[float | None] = [None] * len(members)
        self.spins = [0] * len(members)
        self.rounds = 0
        self.start = world.now()
        self.start_tick = world.tick
        self.changed: ClockEvent = self.clock.event()

    # -- bookkeeping ---------------------------------------------------------

    async def iterate(self, i: int) -> bool:
        """One iteration of member ``i``, with the records every mode keeps."""
        seen = len(self.world.messages())
        idle = bool(await self.members[i].iterate())
        self.iterations[self.names[i]] += 1
        self.idle[i], self.seen[i] = idle, seen
        now = self.clock.now()
        if self.clock.kind == "virtual" and now == self.last_end[i]:
            self.spins[i] += 1
            if self.spins[i] >= self.spin_limit:
                raise ModeError(
                    f"member {self.names[i]!r} iterated {self.spin_limit} times without the "
                    "clock moving; an iteration must take time (a model call slept on the "
                    "world's clock, or an act)"
                )
        else:
            self.spins[i] = 0
        self.last_end[i] = now
        changed, self.changed = self.changed, self.clock.event()
        changed.set()
        return idle

    def news(self, i: int) -> bool:
        """Has someone else posted to member ``i`` (or to everyone) since its last
        iteration began? Messages between two others do not wake it."""
        return any(
            m.sender not in self.own[i] and (m.to is None or m.to in self.own[i])
            for m in self.world.messages(self.seen[i])
        )

    def quiet(self, i: int) -> bool:
        return self.idle[i] and not self.news(i)

    def limits(self) -> tuple[StopReason | None, float]:
        """(why to stop now, or None; seconds until a time limit would stop the run)."""
        if self.world.done:
            return ("success" if self.world.success else "ended"), 0.0
        now = self.world.now()
        stall_at = max(self.world.progress_time, self.start) + self.cutoff_s
        end_at = self.start + self.max_time_s
        if end_at - now <= _EPS:
            return "time_limit", 0.0
        if stall_at - now <= _EPS:
            return "no_progress", 0.0
        return None, min(end_at, stall_at) - now

    async def watch(self, tasks: list[asyncio.Task[Any]], *events: ClockEvent) -> StopReason | None:
        """Wait for a task to end, an event, or a limit; say why to stop, if so."""
        reason, left = self.limits()
        if reason is None:
            pending = [t for t in tasks if not t.done()]
            await self.clock.wait(*pending, self.world.finished, *events, within=left)
            _raise_failed(tasks)
            reason, _ = self.limits()
        return reason

    async def stop(self, tasks: list[asyncio.Task[Any]]) -> None:
        for task in tasks:
            if not task.done():
                self.clock.cancel(task)
        await join(self.clock, *tasks)
        for task in tasks:  # mark errors of cancelled runs as seen
            if not task.cancelled():
                task.exception()

    # -- modes ---------------------------------------------------------------

    async def relay(self) -> StopReason:
        turn = 0
        while True:
            reason, _ = self.limits()
            if reason is not None:
                return reason
            order = [(turn + k) % len(self.members) for k in range(len(self.members))]
            active = [i for i in order if not self.quiet(i)]
            if not active:
                return "idle"
            turn = active[0] + 1
            stopped = await self.batch([active[0]])
            if stopped is not None:
                return stopped

    async def in_rounds(self) -> StopReason:
        while True:
            reason, _ = self.limits()
            if reason is not None:
                return reason
            active = [i for i in range(len(self.members)) if not self.quiet(i)]
            if not active:
                return "idle"
            stopped = await self.batch(active)
            if stopped is not None:
                return stopped

    async def batch(self, indices: list[int]) -> StopReason | None:
        """Run one iteration of each listed member concurrently; wait for all."""
        self.rounds += 1
        tasks = [self.clock.spawn(self.iterate(i), name=self.names[i]) for i in indices]
        try:
            while not all(t.done() for t in tasks):
                reason = await self.watch(tasks)
                if reason is not None:
                    return reason
            _raise_failed(tasks)
            return None
        finally:
            await self.stop(tasks)

    async def free(self) -> StopReason:
        tasks = [
            self.clock.spawn(self.loop(i), name=self.names[i]) for i in range(len(self.members))
        ]
        try:
            while True:
                _raise_failed(tasks)
                if all(self.quiet(i) for i in range(len(self.members))):
                    return "idle"
                reason = await self.watch(tasks, self.changed)
                if reason is not None:
                    return reason
        finally:
            await self.stop(tasks)

    async def loop(self, i: int) -> None:
        """Member ``i`` on its own: iterate; when it has nothing to do, wait for news."""
        while True:
            if await self.iterate(i):
                while not self.news(i):
                    await self.clock.wait(self.world.posted)

    # -- result --------------------------------------------------------------

    def outcome(self, mode: str, reason: StopReason) -> ModeOutcome:
        world = self.world
        success_s = None if world.success_time is None else world.success_time - self.start
        return ModeOutcome(
            mode=mode,
            clock=self.clock.kind,
            reason=reason,
            success=world.success,
            elapsed_s=world.now() - self.start,
            success_s=success_s,
            last_progress_s=max(0.0, world.progress_time - self.start),
            progress=world.progress(),
            ticks=world.tick - self.start_tick,
            iterations=dict(self.iterations),
            rounds=self.rounds,
            cutoff_s=self.cutoff_s,
            max_time_s=self.max_time_s,
            plans={
                name: int(getattr(member, "plans", self.iterations[name]))
                for name, member in zip(self.names, self.members, strict=True)
            },
        )


def _names(members: Sequence[Member]) -> list[str]:
    names = [str(getattr(m, "name", "") or f"member{i + 1}") for i, m in enumerate(members)]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"team members need distinct names; repeated: {', '.join(repeated)}")
    return names


def _raise_failed(tasks: Sequence[asyncio.Task[Any]]) -> None:
    for task in tasks:
        if task.done() and not task.cancelled():
            error = task.exception()
            if error is not None:
                raise error
