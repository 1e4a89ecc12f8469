"""Bounded retries with exponential backoff for model calls.

Remote models fail transiently (rate limits, overloaded servers, dropped
connections). This module is the one place that decides how long to wait and
when to stop. *What* is worth retrying is not decided here: each
:class:`~lorekit.llm.errors.LLMError` subclass carries a ``retryable`` flag,
and the loop consults only that flag. Anything that is not an ``LLMError``
(a bug in our own code, a cancellation) propagates at once, untouched.

The loop never runs forever: ``max_attempts`` bounds it, and a server that
asks us to come back later than ``max_retry_after_s`` (``Retry-After`` on a
429, a 503 or any other retryable status) makes it give up at once rather
than stall a whole experiment.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from lorekit.llm.errors import LLMError

T = TypeVar("T")

_RNG = random.Random()
"""Jitter source used when the caller passes none; seeded from the OS.

Tests and reproducible runs pass their own seeded ``random.Random`` instead.
"""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times to try a call and how long to wait in between.

    ``max_attempts`` counts *all* attempts, the first included, so
    ``max_attempts=1`` means "never retry". ``jitter`` is the fraction of each
    delay that is drawn uniformly at random: with ``jitter=0.5`` a nominal
    delay ``d`` becomes a value in ``[d/2, d]``. Jitter keeps many workers that
    failed together from retrying together (the thundering herd).
    """

    max_attempts: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    jitter: float = 0.5
    max_retry_after_s: float = 60.0

    def __post_init__(self) -> None:
        """Reject nonsense early: a bad policy should fail at configuration time."""
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int):
            raise ValueError(
                f"RetryPolicy.max_attempts must be an int, got {type(self.max_attempts).__name__}"
            )
        if self.max_attempts < 1:
            raise ValueError(
                f"RetryPolicy.max_attempts counts every attempt and must be >= 1, "
                f"got {self.max_attempts}"
            )
        _check_finite_non_negative("base_delay_s", self.base_delay_s)
        _check_finite_non_negative("max_delay_s", self.max_delay_s)
        _check_finite_non_negative("max_retry_after_s", self.max_retry_after_s)
        if self.max_delay_s < self.base_delay_s:
            raise ValueError(
                f"RetryPolicy.max_delay_s ({self.max_delay_s}) must be >= "
                f"base_delay_s ({self.base_delay_s})"
            )
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError(f"RetryPolicy.jitter must be within [0, 1], got {self.jitter}")

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """The jittered exponential delay after failed attempt number ``attempt`` (1-based)."""
        if attempt < 1:
            raise ValueError(f"attempt numbers start at 1, got {attempt}")
        # Cap the exponent so a huge attempt number cannot overflow a float.
        nominal = min(self.max_delay_s, self.base_delay_s * 2.0 ** min(attempt - 1, 60))
        return nominal * (1.0 - self.jitter) + nominal * self.jitter * rng.random()

    def delay(self, attempt: int, error: LLMError, rng: random.Random) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based) before the next one.

        A server that sends Retry-After (with a 429, a 503 or any other
        status) knows better than our backoff curve, so we wait at least that
        long. If it asks for more than ``max_retry_after_s`` the answer is
        ``math.inf``: waiting would stall the run, and :func:`call_with_retries`
        gives up instead.
        """
        wait = self.backoff(attempt, rng)
        if error.retry_after is not None:
            if error.retry_after > self.max_retry_after_s:
                return math.inf
            wait = max(wait, error.retry_after)
        return wait


def _check_finite_non_negative(name: str, value: float) -> None:
    """Shared validation for the policy's durations, with a message naming the field."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"RetryPolicy.{name} must be a number, got {type(value).__name__}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"RetryPolicy.{name} must be a finite number >= 0, got {value}")


async def call_with_retries(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rng: random.Random | None = None,
    on_retry: Callable[[int, LLMError, float], None] | None = None,
) -> T:
    """Await ``fn()`` until it succeeds, retrying retryable :class:`LLMError` s
    that carry no billed ``usage``.

    ``fn`` is called afresh for every attempt (a coroutine object cannot be
    awaited twice). On the final failure the last error is re-raised with
    :meth:`LLMError.with_attempts`, so its message says how many attempts were
    spent. ``on_retry(attempt, error, delay)`` is called before each backoff
    sleep, which lets callers log or count retries. ``sleep`` is injectable so
    tests can record delays instead of waiting for them.
    """
    source = rng if rng is not None else _RNG
    attempt = 0
    while True:
        attempt += 1
        try:
            return await fn()
        except LLMError as exc:
            # An error that was billed (usage kept) is final: trying again would
            # pay again, and a later success would hide what the failure cost.
            if not exc.retryable or exc.usage is not None or attempt >= policy.max_attempts:
                exc.with_attempts(attempt)
                raise
            wait = policy.delay(attempt, exc, source)
            if not math.isfinite(wait):
                exc.with_reason(
                    f"{exc.reason} (more than max_retry_after_s="
                    f"{policy.max_retry_after_s:g}s, so not retried)"
                ).with_attempts(attempt)
                raise
            error = exc
        if on_retry is not None:
            on_retry(attempt, error, wait)
        await sleep(wait)
