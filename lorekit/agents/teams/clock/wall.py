"""Real time for a team that plays against real models: plain asyncio underneath."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from lorekit.agents.teams.clock.base import ClockEvent, ClockKind, check_seconds, ready

T = TypeVar("T")


class _WallEvent:
    def __init__(self) -> None:
        self._event = asyncio.Event()

    def set(self) -> None:
        self._event.set()

    def clear(self) -> None:
        self._event.clear()

    def is_set(self) -> bool:
        return self._event.is_set()


class WallClock:
    """Real time (monotonic seconds since the clock was made) and plain asyncio."""

    kind: ClockKind = "wall"

    def __init__(self) -> None:
        self._origin = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self._origin

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(check_seconds(seconds))

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str | None = None) -> asyncio.Task[T]:
        return asyncio.get_running_loop().create_task(coro, name=name)

    @contextmanager
    def participate(self) -> Iterator[None]:
        yield

    def event(self) -> ClockEvent:
        return _WallEvent()

    async def wait(
        self, *items: asyncio.Task[Any] | ClockEvent, within: float | None = None
    ) -> None:
        """Return when any item is done or set, or after ``within`` seconds."""
        if ready(items):
            return
        helpers: list[asyncio.Task[Any]] = []
        watched: list[asyncio.Future[Any]] = []
        for it in items:
            if isinstance(it, asyncio.Task):
                watched.append(it)
            elif isinstance(it, _WallEvent):
                helper = asyncio.ensure_future(it._event.wait())
                helpers.append(helper)
                watched.append(helper)
            else:
                raise TypeError(f"WallClock.wait takes tasks and WallClock events, not {it!r}")
        try:
            if watched:
                await asyncio.wait(watched, timeout=within, return_when=asyncio.FIRST_COMPLETED)
            elif within is not None:
                await asyncio.sleep(check_seconds(within))
        finally:
            for helper in helpers:
                helper.cancel()

    def cancel(self, task: asyncio.Task[Any]) -> None:
        task.cancel()
