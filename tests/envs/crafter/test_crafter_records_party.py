"""The party environment: several players in one crafter world."""

from __future__ import annotations

import pytest

from lorekit.envs import check_env, make
from lorekit.envs.crafter import CrafterParty


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
