"""The concurrency limit holds under load; the rate limit spaces starts."""

import asyncio
import time

import pytest

from lorekit.llm import LimitedLLM, Limiter, Message, ScriptedLLM


def probe_model() -> tuple[ScriptedLLM, dict[str, int]]:
    """A model that measures how many calls are inside it at once."""
    state = {"now": 0, "peak": 0}

    async def answer(msgs: tuple[Message, ...]) -> str:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.002)
        state["now"] -= 1
        return "ok"

    return ScriptedLLM(fn=answer), state


@pytest.mark.parametrize("limit", [1, 4, 16])
async def test_in_flight_never_exceeds_limit_under_100_parallel_calls(limit: int) -> None:
    model, state = probe_model()
    limiter = Limiter(max_in_flight=limit)
    llm = LimitedLLM(model, limiter)
    outs = await asyncio.gather(*(llm.complete(f"q{i}") for i in range(100)))
    assert len(outs) == 100 and len(model.calls) == 100
    assert state["peak"] == limit  # reached, never exceeded
    assert limiter.peak_in_flight == limit and limiter.in_flight == 0


async def test_without_limit_all_run_at_once() -> None:
    model, state = probe_model()
    await asyncio.gather(*(model.complete("q") for _ in range(100)))
    assert state["peak"] == 100  # the probe itself can see overlap


async def test_slot_released_on_error() -> None:
    limiter = Limiter(max_in_flight=1)
    llm = LimitedLLM(ScriptedLLM([RuntimeError("x"), "ok"]), limiter)
    with pytest.raises(RuntimeError):
        await llm.complete("a")
    assert (await asyncio.wait_for(llm.complete("b"), 1.0)).text == "ok"


async def test_rate_limit_spaces_request_starts() -> None:
    # 3 starts per 0.5 s window: half a window of slack for "at once" on a loaded machine
    limiter = Limiter(rpm=3, window_s=0.5)
    starts: list[float] = []

    async def one() -> None:
        async with limiter.acquire():
            starts.append(time.monotonic())

    t0 = time.monotonic()
    await asyncio.gather(*(one() for _ in range(7)))
    offsets = sorted(s - t0 for s in starts)
    assert offsets[2] < 0.25  # first three at once
    assert offsets[3] >= 0.49 and offsets[6] >= 0.99  # then one window per three


def test_bad_limits() -> None:
    with pytest.raises(ValueError, match="max_in_flight"):
        Limiter(max_in_flight=0)
    with pytest.raises(ValueError, match="rpm"):
        Limiter(rpm=-1)
