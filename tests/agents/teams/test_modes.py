"""Collaboration modes on the virtual clock: who waits for whom, and when runs stop."""

from __future__ import annotations

import itertools
import math

import pytest
from _mode_members import TO_TREE, Dummy, make_world, times

from lorekit.agents.teams.clock import VirtualClock, WallClock
from lorekit.agents.teams.modes import ModeError, run_members


def pair(world, rounds: int = 3):  # type: ignore[no-untyped-def]
    slow = Dummy("slow", "p1", world, [10.0], rounds=rounds)
    fast = Dummy("fast", "p2", world, [1.0], rounds=rounds)
    return slow, fast


async def test_async_never_blocks_a_member_on_another_models_call() -> None:
    world = make_world(VirtualClock())
    slow, fast = pair(world)
    out = await run_members([slow, fast], "async", world, cutoff_s=100, max_time_s=100)
    # fast thinks 1 s and acts one tick (0.2 s) per iteration, whatever slow does.
    assert times([fast])[0] == [(0.0, 1.0, 1.2), (1.2, 2.2, 2.4), (2.4, 3.4, 3.6)]
    assert fast.log[-1][2] < slow.log[0][1]  # all three done before slow's first thought
    assert out.reason == "idle" and out.iterations == {"slow": 3, "fast": 3}
    assert out.elapsed_s == pytest.approx(30.6)  # slow's 3 x (10 s + 1 tick)


async def test_round_mode_waits_for_the_slowest() -> None:
    world = make_world(VirtualClock())
    slow, fast = pair(world)
    out = await run_members([slow, fast], "round", world, cutoff_s=100, max_time_s=100)
    starts = [[row[0] for row in m.log] for m in (slow, fast)]
    assert starts[0] == starts[1] == pytest.approx([0.0, 10.2, 20.4])
    for k in range(1, 3):  # each round starts when the slower member's last one ended
        assert fast.log[k][0] == pytest.approx(max(slow.log[k - 1][2], fast.log[k - 1][2]))
    assert out.rounds == 3 and out.reason == "idle"


async def test_relay_runs_one_member_at_a_time_in_order() -> None:
    world = make_world(VirtualClock())
    slow, fast = pair(world, rounds=2)
    out = await run_members([slow, fast], "relay", world, cutoff_s=100, max_time_s=100)
    spans = sorted((row[0], row[2], m.name) for m in (slow, fast) for row in m.log)
    assert [name for _, _, name in spans] == ["slow", "fast", "slow", "fast"]
    for (_, end, _), (start, _, _) in itertools.pairwise(spans):
        assert start >= end  # no overlap: the others idle
    assert out.rounds == 4 and out.elapsed_s == pytest.approx(2 * (10.2 + 1.2))


async def test_async_is_faster_than_rounds_when_latencies_vary() -> None:
    results = {}
    for mode in ("round", "async"):
        world = make_world(VirtualClock())
        members = [Dummy("a", "p1", world, [8.0, 1.0, 1.0, 8.0], rounds=4),
                   Dummy("b", "p2", world, [1.0, 8.0, 8.0, 1.0], rounds=4)]  # fmt: skip
        results[mode] = await run_members(members, mode, world, cutoff_s=100, max_time_s=100)
    assert results["async"].elapsed_s < results["round"].elapsed_s


async def test_the_run_stops_at_success_and_the_world_ticked_while_thinking() -> None:
    world = make_world(VirtualClock())
    walker = Dummy("walker", "p1", world, [2.0], actions=[TO_TREE[:4], TO_TREE[4:]])
    thinker = Dummy("thinker", "p2", world, [30.0])
    out = await run_members([walker, thinker], "async", world, cutoff_s=100, max_time_s=100)
    assert out.reason == "success" and out.success
    # 2 s thought, 4 ticks, 2 s thought, 4 ticks: success on the 2 * (10 + 4) = 28th tick.
    assert out.success_s == pytest.approx(5.6) and out.ticks == 28
    assert thinker.log == []  # stopped mid-thought: nobody waited for it


async def test_no_progress_for_the_cutoff_stops_the_run() -> None:
    world = make_world(VirtualClock())
    idle = Dummy("idler", "p1", world, [1.0])
    out = await run_members([idle], "async", world, cutoff_s=7, max_time_s=100)
    assert out.reason == "no_progress" and not out.success
    assert out.elapsed_s == pytest.approx(7.0) and out.success_s is None


async def test_the_time_limit_stops_the_run() -> None:
    world = make_world(VirtualClock())
    members = [Dummy("a", "p1", world, [1.0]), Dummy("b", "p2", world, [3.0])]
    for mode in ("relay", "round", "async"):
        world.reset(world.task)
        out = await run_members(members, mode, world, cutoff_s=50, max_time_s=5)  # type: ignore[arg-type]
        assert out.reason == "time_limit" and out.elapsed_s == pytest.approx(5.0), mode


async def test_a_quiet_member_wakes_on_a_message() -> None:
    world = make_world(VirtualClock())
    boss = Dummy("boss", "p1", world, [5.0], rounds=2, tell=(1, "p2"))
    helper = Dummy("helper", "p2", world, [1.0], rounds=1)
    out = await run_members([boss, helper], "async", world, cutoff_s=100, max_time_s=100)
    assert out.iterations == {"boss": 2, "helper": 2}
    assert helper.log[1][0] == pytest.approx(boss.log[1][2])  # woke when the message came
    assert out.reason == "idle"


async def test_virtual_runs_repeat_exactly() -> None:
    async def once() -> tuple[object, ...]:
        world = make_world(VirtualClock(), players=3)
        members = [Dummy(f"m{i}", f"p{i + 1}", world, [1.5 + i, 0.7, 2.2 + i],
                         actions=[["move_east", "do"], ["move_south"]], rounds=3)
                   for i in range(3)]  # fmt: skip
        out = await run_members(members, "async", world, cutoff_s=100, max_time_s=100)
        positions = tuple(tuple(p.pos) for p in world.core.players)
        return out, times(members), positions

    assert await once() == await once()


async def test_wall_clock_runs_with_short_real_latencies() -> None:
    world = make_world(WallClock(), seconds_per_tick=0.005)
    members = [Dummy("a", "p1", world, [0.02], rounds=2), Dummy("b", "p2", world, [0.01], rounds=2)]
    out = await run_members(members, "async", world, cutoff_s=10, max_time_s=10)
    assert out.clock == "wall" and out.reason == "idle"
    assert out.iterations == {"a": 2, "b": 2}
    assert out.ticks >= 8  # 2 x 20 ms of thought at 5 ms a tick
    assert not math.isnan(out.elapsed_s)


async def test_a_member_that_never_takes_time_is_an_error() -> None:
    class Spinner:
        name = "spinner"

        async def iterate(self) -> bool:
            return False

    world = make_world(VirtualClock())
    with pytest.raises(ModeError, match="without the clock moving"):
        await run_members([Spinner()], "async", world, cutoff_s=10, max_time_s=10, spin_limit=50)


async def test_a_member_error_propagates() -> None:
    class Broken:
        name = "broken"

        async def iterate(self) -> bool:
            raise KeyError("bad plan")

    world = make_world(VirtualClock())
    other = Dummy("ok", "p2", world, [1.0])
    for mode in ("relay", "round", "async"):
        with pytest.raises(KeyError, match="bad plan"):
            await run_members([Broken(), other], mode, world, cutoff_s=10, max_time_s=10)  # type: ignore[arg-type]


async def test_bad_arguments_are_clear_errors() -> None:
    world = make_world(VirtualClock())
    member = Dummy("a", "p1", world, [1.0])
    with pytest.raises(ValueError, match="unknown mode 'parallel'"):
        await run_members([member], "parallel", world, cutoff_s=1, max_time_s=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="distinct names"):
        await run_members([member, member], "async", world, cutoff_s=1, max_time_s=1)


async def test_rounds_skip_quiet_members_until_news_arrives() -> None:
    world = make_world(VirtualClock())
    boss = Dummy("boss", "p1", world, [5.0], rounds=2, tell=(1, "p2"))
    helper = Dummy("helper", "p2", world, [1.0], rounds=1)
    out = await run_members([boss, helper], "round", world, cutoff_s=100, max_time_s=100)
    # round 1: both; round 2: boss alone (helper is quiet); round 3: helper, woken by the
    # message boss posted in round 2; then everyone is quiet.
    assert out.rounds == 3 and out.iterations == {"boss": 2, "helper": 2}
    assert helper.log[1][0] == pytest.approx(boss.log[1][2])
    assert out.reason == "idle"


async def test_a_quiet_member_sleeps_through_messages_between_others() -> None:
    world = make_world(VirtualClock(), players=3)
    boss = Dummy("boss", "p1", world, [5.0], rounds=2, tell=(1, "p2"))
    helper = Dummy("helper", "p2", world, [1.0], rounds=1)
    bystander = Dummy("bystander", "p3", world, [1.0], rounds=1)
    out = await run_members([boss, helper, bystander], "async", world, cutoff_s=100, max_time_s=100)
    assert out.iterations == {"boss": 2, "helper": 2, "bystander": 1}
