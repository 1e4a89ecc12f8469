"""The simulated models answer the hourglass prompts sensibly."""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

from _team_fakes import FakeSkills, PoolWorld, Result, validate

from lorekit.agents.teams.hourglass import HourglassAgent
from lorekit.agents.teams.org import build_org
from lorekit.agents.teams.testing import simulated_roles, tool_chain


def team(leaves: int, goal: str, outcomes: dict[str, Result] | None = None, **kw: Any) -> Any:
    world = PoolWorld()
    skills = FakeSkills(world, outcomes or {})
    roles = simulated_roles(world.sleep, seed=3)
    org = build_org("tree", leaves=leaves)
    events: list[dict[str, Any]] = []
    agents = {
        a.name: HourglassAgent(
            a.name,
            org,
            world,
            roles[a.role],
            skills,
            goal=goal,
            validate=validate,
            events=events,
            **kw,
        )
        for a in org.agents
    }
    return world, skills, agents


def said(world: PoolWorld, player: str) -> list[str]:
    return [f"{m.to}: {m.text}" for m in world.pool if m.sender == player]


def test_tool_chains_follow_the_crafting_rules() -> None:
    assert tool_chain("wood", {}) == []
    assert tool_chain("stone", {}) == ["collect(wood, 3)", "place(table)", "craft(wood_pickaxe)"]
    assert tool_chain("stone", {"wood_pickaxe": 1}) == []
    assert tool_chain("iron", {"wood_pickaxe": 1}) == [
        "collect(wood, 3)",
        "place(table)",
        "collect(stone, 1)",
        "craft(stone_pickaxe)",
    ]
    assert tool_chain("iron", {"stone_pickaxe": 1}) == []


def test_leader_shares_the_goal_with_every_free_worker() -> None:
    world, skills, agents = team(2, "Together, collect 10 wood.")
    asyncio.run(agents["leader"].iterate())
    assert said(world, "p1") == ["p2: COMMAND: collect(wood, 5)", "p3: COMMAND: collect(wood, 5)"]
    assert skills.ran == []  # the root plans and delegates only


def test_a_working_root_keeps_a_share_for_itself() -> None:
    world, skills, agents = team(2, "Together, collect 10 wood.", working_root=True)
    asyncio.run(agents["leader"].iterate())
    assert said(world, "p1") == ["p2: COMMAND: collect(wood, 4)", "p3: COMMAND: collect(wood, 2)"]
    assert skills.ran == [("p1", "collect(wood, 4)")]


def test_worker_puts_the_tool_chain_before_its_task() -> None:
    _, skills, agents = team(1, "Together, collect 10 stone.")
    asyncio.run(agents["leader"].iterate())
    skills.ran.clear()
    asyncio.run(agents["worker1"].iterate())
    assert [call for _, call in skills.ran] == [
        "collect(wood, 3)",
        "place(table)",
        "craft(wood_pickaxe)",
        "collect(stone, 10)",
    ]


def test_leader_reassigns_a_worker_that_reported_failure() -> None:
    failing = {"collect(wood, 5)": Result(False, "no tree within reach")}
    world, _, agents = team(2, "Together, collect 10 wood.", failing)
    asyncio.run(agents["leader"].iterate())  # both workers get a share
    asyncio.run(agents["worker1"].iterate())  # starts, its skill fails
    asyncio.run(agents["worker1"].iterate())  # the monitor says fail: report
    assert "p1: REPORT failed: collect(wood, 5)" in said(world, "p2")[-1]
    before = len(said(world, "p1"))
    asyncio.run(agents["leader"].iterate())
    new = said(world, "p1")[before:]
    # worker1 is free again and gets work; worker2 has not reported, so it is left alone
    assert [m.split(":")[0] for m in new] == ["p2"]


def test_leader_thinks_longer_than_workers_and_draws_repeat() -> None:
    def latencies(seed: int) -> dict[str, list[float]]:
        spent: list[float] = []

        async def sleep(seconds: float) -> None:
            spent.append(seconds)

        roles = simulated_roles(sleep, seed=seed)
        out = {}
        for role in ("leader", "worker"):
            spent.clear()
            for _ in range(40):
                asyncio.run(roles[role].complete("Judge it"))
            out[role] = list(spent)
        return out

    first = latencies(1)
    assert statistics.median(first["leader"]) > 1.5 * statistics.median(first["worker"])
    assert latencies(1) == first
    assert latencies(2) != first


def test_a_tired_thirsty_agent_drinks_and_sleeps_before_working() -> None:
    world, skills, agents = team(1, "Together, collect 10 wood.", working_root=True)
    world.observe = lambda player: (  # type: ignore[method-assign]
        f"player {player}; health 9/9, food 8/9, drink 3/9, energy 1/9"
    )
    asyncio.run(agents["leader"].iterate())
    calls = [call for player, call in skills.ran if player == "p1"]
    assert calls[:2] == ["drink()", "sleep()"] and calls[2].startswith("collect(wood")


def test_a_chain_hands_each_link_its_third() -> None:
    """CoA as the paper describes it: each agent does 1/3 of the collection in turn."""
    world = PoolWorld()
    skills = FakeSkills(world, {})
    roles = simulated_roles(world.sleep, seed=3)
    org = build_org("chain", size=3)
    agents = {
        a.name: HourglassAgent(a.name, org, world, roles[a.role], skills,
                               goal="Together, collect 30 wood.", validate=validate)
        for a in org.agents
    }  # fmt: skip
    asyncio.run(agents["agent1"].iterate())
    assert said(world, "p1") == ["p2: COMMAND: collect(wood, 20)"]
    assert skills.ran == [("p1", "collect(wood, 10)")]
    asyncio.run(agents["agent2"].iterate())
    assert said(world, "p2")[-1] == "p3: COMMAND: collect(wood, 10)"
    assert skills.ran[-1] == ("p2", "collect(wood, 10)")


HOUSE = (
    "Build a shelter around 32,29 on the map (3 north of the spawn point), in stages: "
    "foundation: stone at 31,30 32,30 33,30; then walls: table at 31,29 33,29; "
    "then roof: stone at 31,28 32,28 33,28."
)


def test_a_leader_hands_out_each_stage_once_the_one_below_is_reported_built() -> None:
    """The paper's shelter: foundation, then walls, then roof, each to free workers."""
    world, skills, agents = team(2, HOUSE)

    def orders() -> list[str]:
        return [text for text in said(world, "p1") if "COMMAND" in text]

    asyncio.run(agents["leader"].iterate())
    assert orders() == [
        "p2: COMMAND: place(stone, 31, 30); place(stone, 32, 30)",
        "p3: COMMAND: place(stone, 33, 30)",
    ]
    for _ in range(2):  # worker1 builds its part, then reports it done
        asyncio.run(agents["worker1"].iterate())
    assert "p1: REPORT succeeded" in said(world, "p2")[-1]
    asyncio.run(agents["leader"].iterate())
    assert len(orders()) == 2  # a foundation piece is still out: no walls yet
    for _ in range(2):
        asyncio.run(agents["worker2"].iterate())
    asyncio.run(agents["leader"].iterate())
    assert orders()[2:] == [
        "p2: COMMAND: place(table, 31, 29)",
        "p3: COMMAND: place(table, 33, 29)",
    ]
    for worker in ("worker1", "worker2"):
        for _ in range(2):
            asyncio.run(agents[worker].iterate())
    asyncio.run(agents["leader"].iterate())
    assert orders()[4:] == [
        "p2: COMMAND: place(stone, 31, 28); place(stone, 32, 28)",
        "p3: COMMAND: place(stone, 33, 28)",
    ]
    calls = [call for player, call in skills.ran if player == "p2"]
    wall = calls.index("place(table, 31, 29)")
    assert calls[wall - 1] == "collect(wood, 2)"  # a table takes 2 wood
