"""TeamWorld: per-player asynchronous actions on a clock, and a timed message pool."""

from __future__ import annotations

from typing import Any

import pytest

from lorekit.agents.teams.clock import Clock, VirtualClock, WallClock, join
from lorekit.agents.teams.world.party import CrafterParty
from lorekit.agents.teams.world.teamworld import Message, TeamWorld
from lorekit.envs.base import Task
from lorekit.llm import Latency, ScriptedLLM

ONE_WOOD = Task("collect-1-wood", "get wood", "collect",
                {"kind": "collect", "item": "wood", "amount": 1, "seed": 0})  # fmt: skip
# On seed 0, p1 starts at (32, 32) with a tree at (28, 29).
TO_TREE = ["move_north"] * 3 + ["move_west"] * 4 + ["do"]


def make_world(clock: Clock, players: int = 2, **kw: Any) -> TeamWorld:
    world = TeamWorld(CrafterParty(players=players, length=kw.pop("length", 2000)), clock, **kw)
    world.reset(ONE_WOOD)
    return world


async def test_an_action_happens_at_the_next_tick() -> None:
    clock = VirtualClock()
    world = make_world(clock, seconds_per_tick=0.5)
    with clock.participate():
        await clock.sleep(0.2)
        await world.act("p1", "move_north")
        assert (world.tick, clock.now()) == (1, 0.5)
        assert list(world.core.players[0].pos) == [32, 31]
        await world.act("p1", "noop")
        assert (world.tick, clock.now()) == (2, 1.0)


async def test_players_acting_together_share_a_tick() -> None:
    clock = VirtualClock()
    world = make_world(clock)
    with clock.participate():
        await join(clock, clock.spawn(world.act("p1", "move_north")),
                   clock.spawn(world.act("p2", "move_east")))  # fmt: skip
    assert world.tick == 1
    assert [list(p.pos) for p in world.core.players] == [[32, 31], [34, 32]]


async def test_the_world_ticks_while_an_agent_thinks() -> None:
    clock = VirtualClock()
    world = make_world(clock, seconds_per_tick=0.2)
    model = ScriptedLLM(default="go", latency=2.0, sleep=clock.sleep)
    moved_at: list[int] = []

    async def thinker() -> None:
        await model.complete("what now?")
        await world.act("p1", "move_north")
        moved_at.append(world.tick)

    async def walker() -> None:
        for _ in range(5):
            await world.act("p2", "move_east")

    with clock.participate():
        await join(clock, clock.spawn(thinker()), clock.spawn(walker()))
    # p2 walked its 5 steps during p1's 2 s of thought; p1 moved at the tick after.
    assert moved_at == [11]
    assert list(world.core.players[1].pos) == [38, 32]
    assert world.tick == 11
    assert world.core.step_count == 11  # idle ticks were played too, not skipped


async def test_success_time_is_the_tick_that_completed_the_task() -> None:
    clock = VirtualClock()
    world = make_world(clock, seconds_per_tick=0.2)
    with clock.participate():
        for action in TO_TREE:
            await world.act("p1", action)
        assert world.done and world.success and world.finished.is_set()
        assert world.success_time == pytest.approx(0.2 * len(TO_TREE))
        assert world.progress() == "1/1 wood"
        assert world.progress_time == pytest.approx(world.success_time)
        await world.act("p1", "do")  # after the end: returns at once, nothing happens
        assert world.tick == len(TO_TREE)


async def test_world_end_by_length_sets_finished() -> None:
    clock = VirtualClock()
    world = make_world(clock, length=5)
    with clock.participate():
        await clock.sleep(3.0)
    assert world.done and not world.success and world.tick == 5
    assert world.finished.is_set()


async def test_messages_carry_time_tick_sender_and_addressee() -> None:
    clock = VirtualClock()
    world = make_world(clock, players=3, seconds_per_tick=0.25, speakers=("boss",))
    with clock.participate():
        first = world.post("p1", None, "found a tree")
        await clock.sleep(1.1)
        second = world.post("boss", "p2", "collect wood")
    assert first == Message(0.0, 0, "p1", None, "found a tree")
    assert second == Message(1.1, 4, "boss", "p2", "collect wood")
    assert world.messages() == [first, second]
    assert world.messages(1) == [second]
    assert second.to_dict()["to"] == "p2"


async def test_waiting_for_a_message() -> None:
    clock = VirtualClock()
    world = make_world(clock)
    got: list[float] = []

    async def listener() -> None:
        await clock.wait(world.posted, within=60)
        got.append(clock.now())

    async def speaker() -> None:
        await clock.sleep(7)
        world.post("p2", "p1", "here")

    with clock.participate():
        await join(clock, clock.spawn(listener()), clock.spawn(speaker()))
    assert got == [7.0]


async def test_unknown_names_and_actions_are_clear_errors() -> None:
    clock = VirtualClock()
    world = make_world(clock)
    with clock.participate():
        with pytest.raises(ValueError, match=r"unknown player 'p9'; players are p1, p2"):
            await world.act("p9", "noop")
        with pytest.raises(ValueError, match="unknown player 'p0'"):
            world.observe("p0")
        with pytest.raises(ValueError, match="unknown action 'fly'"):
            await world.act("p1", "fly")
        with pytest.raises(ValueError, match="unknown addressee 'p7'"):
            world.post("p1", "p7", "hi")
        with pytest.raises(ValueError, match="unknown sender 'boss'"):
            world.post("boss", None, "hi")
    with pytest.raises(ValueError, match="seconds_per_tick"):
        TeamWorld(CrafterParty(players=2), clock, seconds_per_tick=0)


async def test_one_action_at_a_time_per_player() -> None:
    clock = VirtualClock()
    world = make_world(clock)
    with clock.participate():
        first = clock.spawn(world.act("p1", "noop"))
        await clock.sleep(0)
        with pytest.raises(RuntimeError, match="already has an action queued"):
            await world.act("p1", "noop")
        await join(clock, first)


async def test_same_seed_same_times_and_world() -> None:
    async def episode() -> tuple[Any, ...]:
        clock = VirtualClock()
        world = make_world(clock, players=3)
        models = [ScriptedLLM(default="ok", latency=Latency.lognormal(1.0), seed=i,
                              sleep=clock.sleep) for i in range(3)]  # fmt: skip
        log: list[tuple[str, int, float]] = []

        async def agent(i: int) -> None:
            name = world.players[i]
            for step in range(4):
                await models[i].complete(world.observe(name))
                await world.act(name, ["move_east", "move_south", "do", "noop"][step])
                log.append((name, world.tick, clock.now()))
                world.post(name, None, f"step {step}")

        with clock.participate():
            await join(clock, *[clock.spawn(agent(i)) for i in range(3)])
        positions = [tuple(p.pos) for p in world.core.players]
        return tuple(log), tuple(world.messages()), tuple(positions), world.tick

    assert await episode() == await episode()


async def test_wall_clock_ticks_on_real_time() -> None:
    clock = WallClock()
    world = make_world(clock, seconds_per_tick=0.01)
    model = ScriptedLLM(default="go", latency=0.05)  # really sleeps
    await model.complete("think")
    assert world.tick >= 4  # the world did not wait for the model
    before = world.tick
    await world.act("p1", "move_north")
    assert world.tick > before
    assert list(world.core.players[0].pos) == [32, 31]
