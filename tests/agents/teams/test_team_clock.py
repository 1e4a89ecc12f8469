"""The virtual clock: time moves only when every participant waits on it."""

from __future__ import annotations

import asyncio
import time

import pytest

from lorekit.agents.teams.clock import (
    ClockDeadlock,
    ClockError,
    ClockSpinning,
    ClockStalled,
    VirtualClock,
    WallClock,
    join,
)
from lorekit.llm import Latency, ScriptedLLM


async def test_sleepers_wake_in_time_order_without_real_waiting() -> None:
    clock = VirtualClock()
    log: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        log.append((name, clock.now()))

    started = time.perf_counter()
    with clock.participate():
        tasks = [clock.spawn(sleeper(n, s), name=n) for n, s in [("a", 30), ("b", 10), ("c", 20)]]
        await join(clock, *tasks)
    assert log == [("b", 10.0), ("c", 20.0), ("a", 30.0)]
    assert clock.now() == 30.0
    assert time.perf_counter() - started < 5.0  # an hour of virtual time would not fit


async def test_time_stands_still_while_a_participant_runs() -> None:
    clock = VirtualClock()
    seen: list[float] = []

    async def busy() -> None:
        for _ in range(5):
            await asyncio.sleep(0)  # real awaits: not a clock wait
            seen.append(clock.now())
        await clock.sleep(1)

    async def lazy() -> None:
        await clock.sleep(0.5)
        seen.append(clock.now())

    with clock.participate():
        await join(clock, clock.spawn(busy()), clock.spawn(lazy()))
    assert seen[:5] == [0.0] * 5
    assert seen[5] == 0.5
    assert clock.now() == 1.0


async def test_wait_returns_on_task_end_event_or_timeout() -> None:
    clock = VirtualClock()
    with clock.participate():
        worker = clock.spawn(clock.sleep(4))
        await clock.wait(worker, within=10)
        assert worker.done() and clock.now() == 4.0

        flag = clock.event()

        async def setter() -> None:
            await clock.sleep(3)
            flag.set()

        clock.spawn(setter())
        await clock.wait(flag, within=100)
        assert flag.is_set() and clock.now() == 7.0

        await clock.wait(clock.event(), within=2.5)
        assert clock.now() == 9.5


async def test_same_program_same_times() -> None:
    async def program() -> list[tuple[int, float]]:
        clock = VirtualClock()
        model = ScriptedLLM(default="ok", latency=Latency.lognormal(2.0), seed=7, sleep=clock.sleep)
        log: list[tuple[int, float]] = []

        async def agent(i: int) -> None:
            for _ in range(3):
                await model.complete(f"agent {i}")
                log.append((i, clock.now()))

        with clock.participate():
            await join(clock, *[clock.spawn(agent(i)) for i in range(3)])
        return log

    first, second = await program(), await program()
    assert first == second
    assert len({t for _, t in first}) == len(first)  # distinct sampled latencies


async def test_scripted_model_latency_is_spent_on_the_given_clock() -> None:
    clock = VirtualClock()
    model = ScriptedLLM(default="ok", latency=42.0, sleep=clock.sleep)
    with clock.participate():
        out = await model.complete("hi")
    assert out.latency_s == 42.0
    assert clock.now() == 42.0


async def test_non_participant_gets_a_clear_error() -> None:
    clock = VirtualClock()
    with pytest.raises(ClockError, match="participate"):
        await clock.sleep(1)


async def test_waiting_forever_is_reported_as_a_deadlock() -> None:
    clock = VirtualClock()
    with clock.participate(), pytest.raises(ClockDeadlock, match="waits"):
        await clock.wait(clock.event())


async def test_cancel_keeps_time_still_until_cleanup_ends() -> None:
    clock = VirtualClock()
    cleaned: list[float] = []

    async def victim() -> None:
        try:
            await clock.sleep(100)
        finally:
            cleaned.append(clock.now())

    async def other() -> None:
        await clock.sleep(50)

    with clock.participate():
        v = clock.spawn(victim())
        o = clock.spawn(other())
        await clock.sleep(1)
        clock.cancel(v)
        await clock.wait(v)
        assert v.cancelled() and cleaned == [1.0]
        await clock.wait(o)
    assert clock.now() == 50.0


async def test_negative_sleep_is_refused() -> None:
    clock = VirtualClock()
    with clock.participate(), pytest.raises(ValueError, match=">= 0"):
        await clock.sleep(-1)


async def test_wall_clock_has_the_same_interface() -> None:
    clock = WallClock()
    flag = clock.event()

    async def setter() -> None:
        await clock.sleep(0.01)
        flag.set()

    with clock.participate():
        task = clock.spawn(setter())
        await clock.wait(flag, within=5)
        assert flag.is_set()
        await clock.wait(task, within=5)
        assert task.done()
        before = clock.now()
        await clock.wait(clock.event(), within=0.01)
        assert clock.now() - before >= 0.009


async def test_a_lock_held_across_a_clock_sleep_is_reported_not_hung() -> None:
    clock = VirtualClock(stall_s=0.05)
    lock = asyncio.Lock()

    async def holder() -> None:
        async with lock:
            await clock.sleep(10)

    async def blocked() -> None:
        async with lock:  # not a clock wait: virtual time cannot move
            pass

    with clock.participate():
        first = clock.spawn(holder(), name="holder")
        await clock.sleep(0)
        second = clock.spawn(blocked(), name="blocked")
        with pytest.raises(ClockStalled, match="blocked"):
            await clock.sleep(1)
        await join(clock, first, second)
    assert isinstance(first.exception(), ClockStalled)


async def test_equal_wake_times_wake_in_the_order_they_slept() -> None:
    clock = VirtualClock()
    order: list[str] = []

    async def nap(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        order.append(name)

    with clock.participate():
        await join(clock, *[clock.spawn(nap(n, 2.0 if n != "c" else 1.0)) for n in "abcd"])
    assert order == ["c", "a", "b", "d"]


async def test_a_task_cancelled_before_it_started_leaves_the_clock() -> None:
    clock = VirtualClock()
    with clock.participate():
        task = clock.spawn(clock.sleep(5))
        clock.cancel(task)
        await clock.sleep(0)
        await asyncio.sleep(0)  # let its done-callback run
        assert task.cancelled() and clock.participants == 1
        await clock.sleep(1)
    assert clock.now() == 1.0 and clock.participants == 0


async def test_many_timed_waits_leave_no_stale_entries() -> None:
    clock = VirtualClock()
    flag = clock.event()

    async def ticker() -> None:
        for _ in range(1000):
            await clock.sleep(1)

    with clock.participate():
        task = clock.spawn(ticker())
        while not task.done():  # like a coordinator: a task, an event and a far deadline
            await clock.wait(task, flag, within=10_000)
    assert clock.now() == 1000.0
    assert len(clock._timers) < 100 and not flag.waiters  # type: ignore[attr-defined]


async def test_a_loop_on_sleep_zero_is_an_error_not_a_frozen_clock() -> None:
    clock = VirtualClock(spin_limit=1000)

    async def spinner() -> None:
        while True:
            await clock.sleep(0)

    with clock.participate():
        task = clock.spawn(spinner(), name="spinner")
        with pytest.raises(ClockSpinning, match="without time passing"):
            while True:
                await clock.sleep(0)
    await asyncio.gather(task, return_exceptions=True)
    assert clock.now() == 0.0


async def test_waiting_within_infinity_does_not_jump_to_infinity() -> None:
    clock = VirtualClock()
    with clock.participate(), pytest.raises(ClockDeadlock):
        await clock.wait(clock.event(), within=float("inf"))
    assert clock.now() == 0.0
    with clock.participate(), pytest.raises(ClockDeadlock):
        await clock.sleep(float("inf"))
    assert clock.now() == 0.0


async def test_a_participant_cancelled_from_outside_stops_time_until_its_handler() -> None:
    """What ``asyncio.timeout`` does: cancel a participant parked on the clock. Time
    must not run on (here: to another participant's wake-up) before it handles it."""
    clock = VirtualClock()
    go = asyncio.Event()
    seen: list[float] = []

    async def waiter() -> None:
        try:
            await clock.wait(clock.event())
        except asyncio.CancelledError:
            seen.append(clock.now())
            await clock.sleep(1)

    async def other() -> None:
        await go.wait()  # real waiting: virtual time stands still meanwhile
        await clock.sleep(5)

    a = clock.spawn(waiter(), name="waiter")
    b = clock.spawn(other(), name="other")
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    go.set()  # the other participant's step is queued first
    a.cancel()  # then the timeout strikes the parked one
    await asyncio.gather(a, b)
    assert seen == [0.0]
