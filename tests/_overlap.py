"""Concurrency measured by counting, not by the wall clock.

A test that wants to show "these calls ran concurrently" used to time them
(``wall < 0.45``) and fail on a loaded machine. :class:`Overlap` is a
``sleep`` for :class:`~lorekit.llm.ScriptedLLM` that counts how many calls are
sleeping at once and holds each call until ``expect`` of them are in flight
together. Concurrent code reaches ``expect`` at once, whatever the machine's
speed; sequential code never does, and after ``patience_s`` the calls stop
waiting (once, not per call), so such a test fails in seconds, not minutes.
"""

from __future__ import annotations

import asyncio


class Overlap:
    """``ScriptedLLM(..., latency=x, sleep=overlap.sleep)``; then check ``peak``."""

    def __init__(self, expect: int, patience_s: float = 10.0) -> None:
        self.expect = expect
        self.patience_s = patience_s
        self.in_flight = 0
        self.peak = 0
        self.calls = 0
        self._all_in: asyncio.Event | None = None

    async def sleep(self, seconds: float) -> None:
        if self._all_in is None:
            self._all_in = asyncio.Event()
        self.calls += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.in_flight >= self.expect:
            self._all_in.set()
        try:
            await asyncio.wait_for(self._all_in.wait(), self.patience_s)
        except TimeoutError:
            self._all_in.set()  # give up once: the rest need not wait
        finally:
            self.in_flight -= 1
