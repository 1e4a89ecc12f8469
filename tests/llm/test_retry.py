"""Tests for the retry policy and loop: what is retried, how long we wait, when we stop."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lorekit.llm.errors import (
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
)
from lorekit.llm.retry import RetryPolicy, call_with_retries


class Flaky:
    """An async callable that raises the given errors in turn, then returns 'ok'."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


class Sleeps:
    """A fake sleep that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def server_error() -> LLMServerError:
    return LLMServerError("boom", model="m", endpoint="http://x/v1", status=500)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_attempts": 0}, "max_attempts"),
        ({"max_attempts": 2.5}, "max_attempts"),
        ({"max_attempts": True}, "max_attempts"),
        ({"base_delay_s": -1.0}, "base_delay_s"),
        ({"max_delay_s": math.inf}, "max_delay_s"),
        ({"base_delay_s": 5.0, "max_delay_s": 1.0}, "max_delay_s"),
        ({"jitter": 1.5}, "jitter"),
        ({"jitter": -0.1}, "jitter"),
        ({"max_retry_after_s": -2.0}, "max_retry_after_s"),
        ({"max_retry_after_s": math.nan}, "max_retry_after_s"),
    ],
)
def test_policy_rejects_bad_fields_naming_them(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_policy_defaults() -> None:
    p = RetryPolicy()
    assert (p.max_attempts, p.base_delay_s, p.max_delay_s, p.jitter, p.max_retry_after_s) == (
        4,
        0.5,
        20.0,
        0.5,
        60.0,
    )


def test_delay_without_jitter_doubles_and_caps() -> None:
    p = RetryPolicy(base_delay_s=0.5, max_delay_s=3.0, jitter=0.0)
    rng = random.Random(0)
    delays = [p.delay(a, server_error(), rng) for a in range(1, 7)]
    assert delays == [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]


def test_delay_survives_huge_attempt_numbers() -> None:
    p = RetryPolicy(max_delay_s=7.0, jitter=0.0)
    assert p.delay(10_000, server_error(), random.Random(0)) == 7.0


def test_delay_rejects_attempt_zero() -> None:
    with pytest.raises(ValueError, match="attempt"):
        RetryPolicy().delay(0, server_error(), random.Random(0))


@given(
    attempt=st.integers(min_value=1, max_value=40),
    jitter=st.floats(min_value=0.0, max_value=1.0),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_jittered_delay_stays_within_its_band(attempt: int, jitter: float, seed: int) -> None:
    p = RetryPolicy(base_delay_s=0.1, max_delay_s=5.0, jitter=jitter)
    nominal = min(5.0, 0.1 * 2 ** (attempt - 1))
    d = p.delay(attempt, server_error(), random.Random(seed))
    assert nominal * (1 - jitter) - 1e-12 <= d <= nominal + 1e-12


def test_jitter_actually_varies_and_is_reproducible_with_a_seed() -> None:
    p = RetryPolicy(base_delay_s=1.0, max_delay_s=1.0, jitter=1.0)
    rng_a, rng_b = random.Random(7), random.Random(7)
    a = [p.delay(1, server_error(), rng_a) for _ in range(5)]
    b = [p.delay(1, server_error(), rng_b) for _ in range(5)]
    assert a == b
    assert len(set(a)) > 1


def test_rate_limit_waits_at_least_retry_after() -> None:
    p = RetryPolicy(base_delay_s=0.01, max_delay_s=0.02, jitter=0.0, max_retry_after_s=10)
    err = LLMRateLimitError("slow down", retry_after=3.0)
    assert p.delay(1, err, random.Random(0)) == 3.0
    # When backoff is already longer than the hint, the longer wait wins.
    p2 = RetryPolicy(base_delay_s=5.0, max_delay_s=5.0, jitter=0.0)
    assert p2.delay(1, err, random.Random(0)) == 5.0


def test_rate_limit_without_hint_uses_backoff() -> None:
    p = RetryPolicy(base_delay_s=0.25, jitter=0.0)
    assert p.delay(1, LLMRateLimitError("slow down"), random.Random(0)) == 0.25


def test_retry_after_beyond_the_cap_means_give_up() -> None:
    p = RetryPolicy(max_retry_after_s=30.0)
    assert p.delay(1, LLMRateLimitError("x", retry_after=31.0), random.Random(0)) == math.inf


async def test_retries_transient_errors_then_succeeds() -> None:
    fn = Flaky(server_error(), LLMConnectionError("reset"))
    sleeps = Sleeps()
    seen: list[tuple[int, str, float]] = []
    policy = RetryPolicy(max_attempts=4, base_delay_s=0.01, jitter=0.0)
    result = await call_with_retries(
        fn, policy, sleep=sleeps, on_retry=lambda a, e, d: seen.append((a, type(e).__name__, d))
    )
    assert result == "ok"
    assert fn.calls == 3
    assert sleeps.delays == [0.01, 0.02]
    assert seen == [(1, "LLMServerError", 0.01), (2, "LLMConnectionError", 0.02)]


async def test_gives_up_after_max_attempts_and_says_so() -> None:
    fn = Flaky(*[server_error() for _ in range(10)])
    sleeps = Sleeps()
    with pytest.raises(LLMServerError) as info:
        await call_with_retries(fn, RetryPolicy(max_attempts=3, base_delay_s=0.01), sleep=sleeps)
    assert fn.calls == 3
    assert len(sleeps.delays) == 2  # no pointless sleep after the last attempt
    assert info.value.attempts == 3
    assert "after 3 attempts" in str(info.value)
    assert "model 'm'" in str(info.value) and "http://x/v1" in str(info.value)


async def test_non_retryable_error_is_raised_at_once() -> None:
    fn = Flaky(LLMRequestError("bad request", status=400))
    sleeps = Sleeps()
    with pytest.raises(LLMRequestError) as info:
        await call_with_retries(fn, RetryPolicy(base_delay_s=0.01), sleep=sleeps)
    assert fn.calls == 1
    assert sleeps.delays == []
    assert info.value.attempts == 1
    assert "after" not in str(info.value)


async def test_base_llm_error_is_not_retried() -> None:
    fn = Flaky(LLMError("unknown"))
    with pytest.raises(LLMError):
        await call_with_retries(fn, RetryPolicy(base_delay_s=0.01), sleep=Sleeps())
    assert fn.calls == 1


async def test_other_exceptions_propagate_untouched() -> None:
    original = KeyError("bug in our code")
    fn = Flaky(original)
    with pytest.raises(KeyError) as info:
        await call_with_retries(fn, RetryPolicy(base_delay_s=0.01), sleep=Sleeps())
    assert info.value is original
    assert fn.calls == 1


async def test_honours_retry_after_through_injected_sleep() -> None:
    fn = Flaky(LLMRateLimitError("429", retry_after=0.3), LLMRateLimitError("429", retry_after=0.1))
    sleeps = Sleeps()
    policy = RetryPolicy(base_delay_s=0.01, max_delay_s=0.01, jitter=0.0)
    assert await call_with_retries(fn, policy, sleep=sleeps) == "ok"
    assert sleeps.delays == [0.3, 0.1]


async def test_gives_up_at_once_when_retry_after_is_too_long() -> None:
    fn = Flaky(LLMRateLimitError("429", retry_after=120.0, model="m"))
    sleeps = Sleeps()
    with pytest.raises(LLMRateLimitError) as info:
        await call_with_retries(fn, RetryPolicy(max_retry_after_s=60.0), sleep=sleeps)
    assert fn.calls == 1
    assert sleeps.delays == []
    assert info.value.retry_after == 120.0


async def test_single_attempt_policy_never_retries() -> None:
    fn = Flaky(server_error())
    with pytest.raises(LLMServerError) as info:
        await call_with_retries(fn, RetryPolicy(max_attempts=1), sleep=Sleeps())
    assert fn.calls == 1
    assert "after" not in str(info.value)


async def test_real_sleep_is_used_by_default() -> None:
    fn = Flaky(server_error())
    policy = RetryPolicy(base_delay_s=0.001, max_delay_s=0.001)
    assert await call_with_retries(fn, policy, rng=random.Random(1)) == "ok"
    assert fn.calls == 2


def test_retry_after_counts_on_any_error_class() -> None:
    p = RetryPolicy(base_delay_s=0.01, jitter=0.0, max_retry_after_s=10)
    busy = LLMServerError("loading", status=503, retry_after=4.0)
    assert p.delay(1, busy, random.Random(0)) == 4.0
    assert p.delay(1, LLMServerError("x", status=503, retry_after=11.0), random.Random(0)) == (
        math.inf
    )


async def test_a_billed_error_is_final_even_if_its_class_is_retryable() -> None:
    from lorekit.llm.base import Usage

    billed = LLMServerError("gateway failed after the model ran", usage=Usage(5, 5))
    fn = Flaky(billed)
    sleeps = Sleeps()
    with pytest.raises(LLMServerError) as info:
        await call_with_retries(fn, RetryPolicy(max_attempts=4), sleep=sleeps)
    assert fn.calls == 1 and sleeps.delays == [] and info.value.usage == Usage(5, 5)


async def test_giving_up_on_a_long_retry_after_says_why() -> None:
    fn = Flaky(LLMServerError("maintenance", status=503, retry_after=300.0))
    with pytest.raises(LLMServerError) as info:
        await call_with_retries(fn, RetryPolicy(max_retry_after_s=60), sleep=Sleeps())
    assert "max_retry_after_s=60s" in str(info.value) and fn.calls == 1
