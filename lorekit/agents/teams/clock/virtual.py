"""Virtual time: a deterministic discrete-event clock for asyncio coroutines.

A team study runs several agents whose model calls take seconds. Against real
models that is wall time (:class:`~lorekit.agents.teams.clock.wall.WallClock`).
With scripted models we want the same behaviour without the waiting, and the
same answer every run: :class:`VirtualClock` is a discrete-event clock for
asyncio coroutines. Its
time moves only when every registered *participant* is blocked on it (in
:meth:`~VirtualClock.sleep` or :meth:`~VirtualClock.wait`); it then jumps to
the earliest wake-up, wakes whoever is due (in the order they went to sleep)
and stops moving as soon as one of them runs. Nothing really waits, and the
order of events depends only on the program and its seeds.

The rules that make this exact:

- a participant is a task started with :meth:`spawn`, or the current task
  inside ``with clock.participate():``;
- participants block only through the clock (``sleep``, ``wait`` on
  participant tasks and clock events); awaiting anything else counts as
  running, so virtual time stands still meanwhile (real I/O takes no virtual
  time). A participant that awaits something only another *sleeping*
  participant can release (an ``asyncio.Lock`` held across a clock sleep)
  stops virtual time for good: hold no such thing across a clock wait;
- cancel participants with :meth:`cancel`, so the clock knows they run again.

Both clocks share one interface (:class:`~lorekit.agents.teams.clock.base.Clock`),
so code written against it runs on either; on the wall clock
``spawn``/``wait``/``event`` are plain asyncio.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from lorekit.agents.teams.clock.base import (
    ClockDeadlock,
    ClockError,
    ClockEvent,
    ClockKind,
    ClockSpinning,
    ClockStalled,
    check_seconds,
    ready,
)

T = TypeVar("T")


@dataclass(eq=False)
class _Park:
    """One participant's wait: woken by a timer, a task's end or an event."""

    member: _Member
    future: asyncio.Future[None]
    active: bool = True


@dataclass(eq=False)
class _Member:
    task: asyncio.Task[Any]
    depth: int = 1
    park: _Park | None = None


@dataclass(eq=False)
class _VirtualEvent:
    clock: VirtualClock
    flag: bool = False
    waiters: list[_Park] = field(default_factory=list)

    def set(self) -> None:
        if self.flag:
            return
        self.flag = True
        waiters, self.waiters = self.waiters, []
        for park in waiters:
            self.clock._wake(park)

    def clear(self) -> None:
        self.flag = False

    def is_set(self) -> bool:
        return self.flag


class VirtualClock:
    """Deterministic discrete-event time for asyncio participants; see the module docstring."""

    kind: ClockKind = "virtual"

    def __init__(
        self,
        start: float = 0.0,
        *,
        stall_s: float | None = 60.0,
        spin_limit: int | None = 100_000,
    ) -> None:
        """``stall_s``: real seconds without any clock activity, while some
        participants wait on the clock and others run, after which the waiting
        ones get :class:`ClockStalled` instead of a silent hang (None: never).
        ``spin_limit``: timed wake-ups in a row at one virtual instant after
        which the woken get :class:`ClockSpinning` (None: never)."""
        self._now = float(start)
        self.stall_s = stall_s
        self.spin_limit = spin_limit
        self._spins = 0
        self._spin_at = float(start)
        self._ops = 0
        self._watchdog: asyncio.TimerHandle | None = None
        self._seq = itertools.count()
        self._timers: list[tuple[float, int, _Park]] = []
        self._members: dict[asyncio.Task[Any], _Member] = {}
        self._task_waiters: dict[asyncio.Task[Any], list[_Park]] = {}
        self._running = 0  # participants not parked on the clock

    def now(self) -> float:
        return self._now

    @property
    def participants(self) -> int:
        return len(self._members)

    # -- participants --------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str | None = None) -> asyncio.Task[T]:
        """Start ``coro`` as a participant task (counted as running at once)."""
        holder: list[asyncio.Task[T]] = []

        async def run() -> T:
            try:
                return await coro
            finally:
                self._leave(holder[0])

        task = asyncio.get_running_loop().create_task(run(), name=name)
        holder.append(task)
        self._join(task)
        # A task cancelled before its first step never enters ``run``'s finally
        # (nor awaits ``coro``, which is closed so that Python does not warn).
        task.add_done_callback(lambda done: self._forget(done, coro))
        return task

    def _forget(self, task: asyncio.Task[Any], coro: Coroutine[Any, Any, Any]) -> None:
        coro.close()
        member = self._members.get(task)
        if member is not None:
            member.depth = 1
            self._leave(task)

    @contextmanager
    def participate(self) -> Iterator[None]:
        """Count the current task as a participant inside the block."""
        task = asyncio.current_task()
        if task is None:
            raise ClockError("clock.participate() needs a running asyncio task")
        self._join(task)
        try:
            yield
        finally:
            self._leave(task)

    def _join(self, task: asyncio.Task[Any]) -> None:
        self._ops += 1
        self._arm()
        member = self._members.get(task)
        if member is not None:
            member.depth += 1
            return
        self._members[task] = _Member(task)
        self._running += 1

    def _leave(self, task: asyncio.Task[Any]) -> None:
        member = self._members.get(task)
        if member is None:
            return
        member.depth -= 1
        if member.depth:
            return
        del self._members[task]
        self._running -= 1
        for park in self._task_waiters.pop(task, []):
            self._wake(park)
        self._advance()

    def cancel(self, task: asyncio.Task[Any]) -> None:
        """Cancel a participant; it counts as running until its cleanup ends."""
        member = self._members.get(task)
        if member is not None and member.park is not None:
            self._wake(member.park, cancel=True)
        task.cancel()

    # -- waiting -------------------------------------------------------------

    async def sleep(self, seconds: float) -> None:
        """Block this participant for ``seconds`` of virtual time.

        ``sleep(0)`` lets every other participant run until it blocks too;
        ``sleep(math.inf)`` waits for good (a deadlock if nobody else can move
        time), never moving the clock to infinity.
        """
        seconds = check_seconds(seconds)
        await self._park(None if math.isinf(seconds) else self._now + seconds, ())

    async def wait(
        self, *items: asyncio.Task[Any] | ClockEvent, within: float | None = None
    ) -> None:
        """Return when any item (a participant task or a clock event) is done or
        set, or after ``within`` virtual seconds (``asyncio.timeout`` knows only
        real time, hence a parameter)."""
        for it in items:
            if isinstance(it, asyncio.Task):
                if not it.done() and it not in self._members:
                    raise ClockError(
                        f"task {it.get_name()!r} is not a participant of this clock; "
                        "start it with clock.spawn(...) to wait on it"
                    )
            elif not isinstance(it, _VirtualEvent) or it.clock is not self:
                raise TypeError(
                    f"VirtualClock.wait takes participant tasks and its own events, not {it!r}"
                )
        if ready(items):
            return
        limit = None if within is None else check_seconds(within)
        deadline = None if limit is None or math.isinf(limit) else self._now + limit
        await self._park(deadline, items)

    def event(self) -> ClockEvent:
        return _VirtualEvent(self)

    async def _park(
        self, deadline: float | None, items: tuple[asyncio.Task[Any] | ClockEvent, ...]
    ) -> None:
        task = asyncio.current_task()
        member = self._members.get(task) if task is not None else None
        if member is None:
            raise ClockError(
                "this task waits on a VirtualClock but is not one of its participants; "
                "start it with clock.spawn(...) or wrap it in `with clock.participate():`"
            )
        park = _Park(member, asyncio.get_running_loop().create_future())
        if deadline is not None:
            heapq.heappush(self._timers, (deadline, next(self._seq), park))
        for it in items:
            if isinstance(it, asyncio.Task):
                self._task_waiters.setdefault(it, []).append(park)
            else:
                assert isinstance(it, _VirtualEvent)
                it.waiters.append(park)
        member.park = park
        self._running -= 1
        self._ops += 1
        self._advance()
        try:
            await park.future
        finally:
            if park.active:  # cancelled from outside without clock.cancel
                self._wake(park, cancel=True)
            self._unlink(park, items)

    def _unlink(self, park: _Park, items: tuple[asyncio.Task[Any] | ClockEvent, ...]) -> None:
        """Drop a finished wait from what it waited on, so long runs do not pile up
        stale entries (a coordinator waits on the same tasks and events many times)."""
        for it in items:
            waiters = self._task_waiters.get(it) if isinstance(it, asyncio.Task) else None
            if isinstance(it, _VirtualEvent):
                waiters = it.waiters
            if waiters is not None and park in waiters:
                waiters.remove(park)
        if len(self._timers) > 2 * len(self._members) + 64:
            self._timers = [entry for entry in self._timers if entry[2].active]
            heapq.heapify(self._timers)

    def _wake(self, park: _Park, *, cancel: bool = False) -> None:
        if not park.active:
            return
        self._ops += 1
        park.active = False
        park.member.park = None
        self._running += 1
        if not park.future.done() and not cancel:
            park.future.set_result(None)

    def _advance(self) -> None:
        """While nobody runs, jump to the next timer and wake everyone due then."""
        for member in list(self._members.values()):
            # Cancelled from outside (``asyncio.timeout``, a plain ``task.cancel()``):
            # it runs from now on, though its handler has not started yet.
            if member.park is not None and member.park.future.cancelled():
                self._wake(member.park, cancel=True)
        while self._running == 0 and self._members:
            while self._timers and not self._timers[0][2].active:
                heapq.heappop(self._timers)
            if not self._timers:
                self._deadlock()
                return
            self._now = max(self._now, self._timers[0][0])
            due = []
            while self._timers and self._timers[0][0] <= self._now:
                due.append(heapq.heappop(self._timers)[2])
            spinning = self._spin(len(due))
            for park in due:
                self._wake(park, cancel=spinning is not None)
                if spinning is not None and not park.future.done():
                    park.future.set_exception(spinning)

    def _spin(self, woken: int) -> ClockSpinning | None:
        """Count timed wake-ups at one instant; past ``spin_limit``, the error to raise."""
        if self._now != self._spin_at:
            self._spin_at, self._spins = self._now, 0
        self._spins += woken
        if self.spin_limit is None or self._spins <= self.spin_limit:
            return None
        return ClockSpinning(
            f"participants woke {self._spins} times at virtual time {self._now:g} without "
            "time passing (a loop on sleep(0)?); every loop must sleep a positive time or "
            "wait for an event"
        )

    def _arm(self) -> None:
        if self._watchdog is None and self.stall_s is not None:
            loop = asyncio.get_running_loop()
            self._watchdog = loop.call_later(self.stall_s, self._check_stall, self._ops)

    def _check_stall(self, ops: int) -> None:
        self._watchdog = None
        if not self._members:
            return
        parked = [m for m in self._members.values() if m.park is not None]
        if ops == self._ops and parked and self._running > 0:
            running = sorted(m.task.get_name() for m in self._members.values() if m.park is None)
            error = ClockStalled(
                f"virtual time stood still for {self.stall_s} real seconds: participants "
                f"{', '.join(running)} run without waiting on the clock; are they awaiting "
                "something (a lock, a semaphore, a request limiter) held by a participant "
                "that sleeps on the clock? Hold no such thing across a clock wait"
            )
            for member in parked:
                park = member.park
                assert park is not None
                self._wake(park, cancel=True)
                if not park.future.done():
                    park.future.set_exception(error)
        self._arm()

    def _deadlock(self) -> None:
        names = sorted(m.task.get_name() for m in self._members.values())
        error = ClockDeadlock(
            f"every participant of the virtual clock waits and none has a timeout "
            f"(waiting: {', '.join(names)}); at least one must sleep or be released"
        )
        for member in list(self._members.values()):
            if member.park is not None:
                park = member.park
                self._wake(park, cancel=True)
                if not park.future.done():
                    park.future.set_exception(error)
