"""Per-model request limits: requests in flight and requests per minute.

A shared :class:`Limiter` belongs to one model endpoint. Every role that uses
that endpoint should share the same limiter, so that "at most 8 requests in
flight to the vLLM server" holds across planner and executor alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Protocol

from lorekit.llm.base import LLM, Completion, MessageLike, RequestParams


class Limiter:
    """Bounds concurrent requests and, optionally, their start rate.

    ``max_in_flight`` is enforced with a semaphore. ``rpm`` uses a sliding
    one-minute window of start times: a request starts only when fewer than
    ``rpm`` requests started in the last 60 s. Both are optional.

    ``in_flight`` and ``peak_in_flight`` are kept so tests and reports can
    show the limit held.

    asyncio's semaphore and lock belong to the first event loop that waits on
    them; a limiter used again under a later ``asyncio.run`` (a build, then its
    formulation) gets fresh ones for that loop, with the same bounds (the
    window of start times is kept: it is wall time, not the loop's).
    """

    def __init__(
        self,
        max_in_flight: int | None = None,
        rpm: float | None = None,
        *,
        window_s: float = 60.0,
    ) -> None:
        if max_in_flight is not None and max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1 or None, got {max_in_flight}")
        if rpm is not None and rpm <= 0:
            raise ValueError(f"rpm must be > 0 or None, got {rpm}")
        self.max_in_flight = max_in_flight
        self.rpm = rpm
        self._window_s = window_s
        self._sem = asyncio.Semaphore(max_in_flight) if max_in_flight else None
        self._starts: deque[float] = deque()
        self._rate_lock = asyncio.Lock() if rpm else None
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self.in_flight = 0
        self.peak_in_flight = 0

    def _for_this_loop(self) -> None:
        """Fresh waiting primitives when the running loop is not the one they served."""
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop() is not loop:
            self._sem = asyncio.Semaphore(self.max_in_flight) if self.max_in_flight else None
            self._rate_lock = asyncio.Lock() if self.rpm else None
        self._loop = weakref.ref(loop)

    async def _wait_for_rate(self) -> None:
        assert self._rate_lock is not None and self.rpm is not None
        cap = int(self.rpm) if self.rpm >= 1 else 1
        window = self._window_s if self.rpm >= 1 else self._window_s / self.rpm
        async with self._rate_lock:
            while True:
                now = time.monotonic()
                while self._starts and now - self._starts[0] >= window:
                    self._starts.popleft()
                if len(self._starts) < cap:
                    self._starts.append(now)
                    return
                await asyncio.sleep(window - (now - self._starts[0]))

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[None]:
        """Hold one request slot for the duration of the block."""
        self._for_this_loop()
        sem = self._sem  # released on the one it was taken from
        if sem is not None:
            await sem.acquire()
        try:
            if self._rate_lock is not None:
                await self._wait_for_rate()
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1
        finally:
            if sem is not None:
                sem.release()


class SlotLimiter(Protocol):
    """What a backend needs from a limiter: an async context manager per request.

    :class:`Limiter` satisfies it; so does a cluster-wide limiter
    (:mod:`lorekit.eval.ray_backend`) or any test double.
    """

    def acquire(self) -> contextlib.AbstractAsyncContextManager[None]: ...


class LimitedLLM:
    """Wraps any :class:`LLM` so each call holds a slot of ``limiter``.

    Backends that retry internally (``OpenAICompatLLM``) take the limiter
    themselves so the slot is released during backoff; this wrapper is for
    the others (scripted models, outside backends).
    """

    def __init__(self, inner: LLM, limiter: SlotLimiter) -> None:
        self.inner = inner
        self.limiter = limiter

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(
        self, messages: Sequence[MessageLike] | str, params: RequestParams | None = None
    ) -> Completion:
        async with self.limiter.acquire():
            return await self.inner.complete(messages, params=params)
