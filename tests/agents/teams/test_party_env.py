"""The crafter-party env on its own: its contract, actions and messages, tasks
checked on the map, and how its episodes end at the length limit."""

from __future__ import annotations

import pytest

from lorekit.agents.teams.world.party import CrafterParty
from lorekit.envs import check_env, make

LENGTH = 4


def test_party_contract_and_registry() -> None:
    env = make("crafter-party", players=2, length=40)
    check_env(env, episodes=2, max_actions=15)


def test_party_actions_messages_and_determinism() -> None:
    env = CrafterParty(3, length=100)
    env.reset("collect-20-wood/seed-0")
    step = env.step("p1: move_west 2; p2 say: wood to the south; p3 tell p1: wait")
    assert step.info["valid"] and step.info["ticks"] == 2 and step.info["wall_s"] >= 0
    assert "p2: wood to the south | p3: wait" in step.observation.split("== p2 ==")[0]
    assert len(step.info["observations"]) == 3
    bad = env.step("p9: do; p1: fly")
    assert not bad.info["valid"] and "no player 'p9'" in bad.observation
    plan = ["p1: move_east 3; p2: do", "p2: move_north 4", "p1: do; p3: sleep"]
    first = [env.reset("collect-20-wood/seed-1").text] + [env.step(a).observation for a in plan]
    again = [env.reset("collect-20-wood/seed-1").text] + [env.step(a).observation for a in plan]
    assert first == again


def test_party_shelter_is_checked_on_the_map() -> None:
    env = CrafterParty(2, length=50)
    task = next(t for t in env.tasks() if t.id.startswith("shelter-0_-3"))
    env.reset(task)
    x, y = env.shelter_point(task)
    assert len(env.missing_walls()) == 8 or env.core.world[(x, y - 1)][0] == "stone"
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            if dx or dy:
                env.core.world[(x + dx, y + dy)] = "stone"
    step = env.step("p1: noop")
    assert step.done and step.info["success"] and step.reward == 1.0


def test_party_collection_counts_the_team() -> None:
    env = CrafterParty(2, length=50)
    env.reset("collect-20-wood/seed-0")
    env.core.players[0].achievements["collect_wood"] = 12
    env.core.players[1].achievements["collect_wood"] = 8
    step = env.step("p1: noop")
    assert step.info["success"] and step.info["progress"] == "20/20 wood"
    with pytest.raises(ValueError):
        CrafterParty(1)


def test_party_goal_reached_on_the_last_tick_succeeds() -> None:
    env = CrafterParty(2, length=LENGTH)
    env.reset("collect-20-wood/seed-0")
    for _ in range(LENGTH - 1):
        assert not env.step("p1: noop").done
    env.core.players[0].achievements["collect_wood"] = 20
    last = env.step("p1: noop")
    assert last.done and last.info["success"] and last.reward == 1.0


def test_party_goal_one_short_at_the_last_tick_fails() -> None:
    env = CrafterParty(2, length=LENGTH)
    env.reset("collect-20-wood/seed-0")
    env.core.players[0].achievements["collect_wood"] = 19
    steps = [env.step("p1: noop") for _ in range(LENGTH)]
    assert [s.done for s in steps] == [False] * (LENGTH - 1) + [True]
    assert not steps[-1].info["success"] and steps[-1].reward == 0.0
    assert steps[-1].info["progress"] == "19/20 wood"


def test_party_goes_on_while_one_player_lives_and_ends_when_all_die() -> None:
    env = CrafterParty(2, length=50)
    env.reset("collect-20-wood/seed-0")
    env.core.players[0].health = 0
    step = env.step("p2: noop")
    assert not step.done  # p2 still plays
    env.core.players[1].health = 0
    step = env.step("p2: noop")
    assert step.done and not step.info["success"] and step.info["ticks"] == 2
