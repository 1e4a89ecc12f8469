"""The clock interface a team runs on, its errors, and :func:`join`.

A team study runs several agents whose model calls take seconds. Against real
models that is wall time (:class:`~lorekit.agents.teams.clock.wall.WallClock`);
with scripted models the same behaviour without the waiting, the same answer
every run, is virtual time
(:class:`~lorekit.agents.teams.clock.virtual.VirtualClock`). Both satisfy
:class:`Clock`, so the team world, the modes and the agents are written once,
against this protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

T = TypeVar("T")
ClockKind = Literal["wall", "virtual"]


class ClockError(RuntimeError):
    """The clock was used in a way it cannot honour (see the message)."""


class ClockDeadlock(ClockError):
    """Every participant waits and none will ever be woken."""


class ClockSpinning(ClockError):
    """Participants woke each other over and over without virtual time passing
    (a loop on ``sleep(0)``): time would never move, so the run is stopped."""


class ClockStalled(ClockError):
    """Virtual time stood still for ``stall_s`` real seconds: some participant
    awaits something only a participant blocked on the clock can release."""


@runtime_checkable
class ClockEvent(Protocol):
    """A flag participants can wait on with :meth:`Clock.wait`."""

    def set(self) -> None: ...
    def clear(self) -> None: ...
    def is_set(self) -> bool: ...


class Clock(Protocol):
    """What worlds, modes and models need from a clock."""

    kind: ClockKind

    def now(self) -> float: ...
    async def sleep(self, seconds: float) -> None: ...
    def spawn(
        self, coro: Coroutine[Any, Any, T], *, name: str | None = None
    ) -> asyncio.Task[T]: ...
    def participate(self) -> Any: ...  # a context manager
    def event(self) -> ClockEvent: ...
    async def wait(
        self, *items: asyncio.Task[Any] | ClockEvent, within: float | None = None
    ) -> None: ...
    def cancel(self, task: asyncio.Task[Any]) -> None: ...


def check_seconds(seconds: float) -> float:
    if seconds < 0 or seconds != seconds:
        raise ValueError(f"cannot sleep {seconds} seconds; give a number >= 0")
    return float(seconds)


def ready(items: tuple[asyncio.Task[Any] | ClockEvent, ...]) -> bool:
    return any(it.done() if isinstance(it, asyncio.Task) else it.is_set() for it in items)


async def join(clock: Clock, *tasks: asyncio.Task[Any]) -> None:
    """Wait on ``clock`` until every task has finished (results are left in the tasks)."""
    for task in tasks:
        while not task.done():
            await clock.wait(task)
