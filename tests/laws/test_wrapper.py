"""LawReward: +1 once per action and episode, -0.5 once, health deltas, parts
switched off, and the oracle's predicates agreeing with the real game.

States are arranged in a real crafter world (inventory, faced cell and the
cells around the player set by hand), so the transitions are the game's own.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from crafter import objects

from lorekit.envs.crafter import worldgen
from lorekit.envs.crafter.expanded import EXPANDED_ACTIONS
from lorekit.laws.experience import oracle_experience
from lorekit.laws.rewards import PredicateEntry, PredicateSet, predicates_from_experience
from lorekit.laws.wrapper import (
    VARIANTS,
    LawReward,
    RewardParts,
    make_reward_env,
    reward_env_factory,
)


@pytest.fixture(scope="module", autouse=True)
def _warm_worldgen() -> None:
    worldgen.warm_up()


@pytest.fixture
def env() -> Iterator[LawReward]:
    wrapped = make_reward_env("oracle")
    wrapped.reset(seed=3)
    yield wrapped
    wrapped.close()


def arrange(
    env: LawReward,
    *,
    faced: str = "grass",
    inventory: Mapping[str, int] | None = None,
    near: Sequence[str] = (),
) -> None:
    """Player faces east onto ``faced``; ``near`` materials west and north of
    it; every other cell around is empty grass; inventory as given (vitals full)."""
    core = env.unwrapped.core  # type: ignore[attr-defined]
    player = core.players[0]
    px, py = int(player.pos[0]), int(player.pos[1])
    for dx in (-2, -1, 0, 1, 2):
        for dy in (-2, -1, 0, 1, 2):
            if dx or dy:
                pos = (px + dx, py + dy)
                core.world[pos] = "grass"
                obj = core.world[pos][1]
                if obj is not None:
                    core.world.remove(obj)
    player.facing = (1, 0)
    core.world[(px + 1, py)] = faced
    for pos, name in zip(((px - 1, py), (px, py - 1)), near, strict=False):
        core.world[pos] = name
    for key in list(player.inventory):
        player.inventory[key] = 0
    player.inventory.update(health=9, food=9, drink=9, energy=9)
    player.inventory.update(dict(inventory or {}))


def act(env: LawReward, action: str) -> tuple[float, dict[str, float]]:
    _, reward, _, _, info = env.step(EXPANDED_ACTIONS.index(action))
    return reward, info["reward_parts"]


def test_bonus_once_per_action_and_episode(env: LawReward) -> None:
    arrange(env, faced="tree")
    reward, parts = act(env, "collect_wood")
    assert parts["laws"] == 1.0 and parts["penalty"] == 0.0 and reward == pytest.approx(1.0)
    arrange(env, faced="tree")  # a tree again: the law holds again
    reward, parts = act(env, "collect_wood")
    assert parts["laws"] == 0.0 and reward == pytest.approx(0.0)
    arrange(env, faced="grass", inventory={"wood": 2})
    assert act(env, "place_table")[1]["laws"] == 1.0  # another action: its own first time
    env.reset()
    arrange(env, faced="tree")
    assert act(env, "collect_wood")[1]["laws"] == 1.0  # a new episode pays again


def test_bonus_judges_the_state_before_the_action(env: LawReward) -> None:
    arrange(env, faced="grass", inventory={"wood": 1})
    assert act(env, "place_table")[1]["laws"] == 0.0  # needs 2 wood: not valid
    arrange(env, faced="grass", inventory={"wood": 1}, near=["table"])
    reward, parts = act(env, "make_wood_pickaxe")
    assert parts["laws"] == 1.0 and parts["crafter"] == pytest.approx(1.0)
    assert reward == pytest.approx(1.0 + parts["health"])


def test_penalty_once_when_no_precondition_holds(env: LawReward) -> None:
    arrange(env, faced="grass")
    reward, parts = act(env, "make_wood_pickaxe")  # no wood, no table
    assert parts["penalty"] == -0.5 and reward == pytest.approx(-0.5)
    assert act(env, "make_wood_pickaxe")[1]["penalty"] == 0.0  # only the first time
    # One precondition of make_stone_pickaxe holds (a table): a poor choice, not a blind one.
    arrange(env, faced="grass", near=["table"])
    assert act(env, "make_stone_pickaxe")[1]["penalty"] == 0.0
    arrange(env, faced="grass")
    assert act(env, "make_stone_pickaxe")[1]["penalty"] == -0.5
    # Sleep needs energy below full: at full energy it is a no-op in crafter,
    # so it earns no bonus and is a blind choice; below full it pays once.
    parts = act(env, "sleep")[1]
    assert parts["laws"] == 0.0 and parts["penalty"] == -0.5
    env.reset()
    arrange(env, faced="grass", inventory={"energy": 4})
    assert act(env, "sleep")[1]["laws"] == 1.0
    env.reset()
    arrange(env, faced="grass")
    assert act(env, "make_wood_pickaxe")[1]["penalty"] == -0.5


def test_moves_and_noop_earn_nothing(env: LawReward) -> None:
    arrange(env, faced="grass")
    for action in ("noop", "move_left", "move_up"):
        _, parts = act(env, action)
        assert parts["laws"] == 0.0 and parts["penalty"] == 0.0


def test_health_part_is_the_health_change(env: LawReward) -> None:
    arrange(env, faced="stone")
    player = env.unwrapped.core.players[0]  # type: ignore[attr-defined]
    player.inventory["health"] = 5
    player._recover = 24.5  # one more healthy step regenerates a point
    reward, parts = act(env, "noop")
    assert player.health == 6 and parts["health"] == pytest.approx(0.1)
    assert reward == pytest.approx(0.1)
    player.inventory["food"] = 0
    player._recover = -14.9  # starving: the next step costs a point
    reward, parts = act(env, "noop")
    assert player.health == 5 and parts["health"] == pytest.approx(-0.1)
    assert reward == pytest.approx(-0.1)


def test_parts_switch_off() -> None:
    exp = oracle_experience()
    only_laws = RewardParts(health=False, laws=True, penalty=False)
    env = make_reward_env("laws", experience=exp, parts=only_laws)
    env.reset(seed=3)
    arrange(env, faced="grass")
    reward, parts = act(env, "make_wood_pickaxe")
    assert parts["penalty"] == 0.0 and reward == 0.0  # penalty off
    player = env.unwrapped.core.players[0]  # type: ignore[attr-defined]
    arrange(env, faced="tree")
    player._recover = 24.5
    player.inventory["health"] = 5
    reward, parts = act(env, "collect_wood")
    assert parts["health"] == pytest.approx(0.1) and parts["laws"] == 1.0
    assert reward == pytest.approx(1.0)  # health computed, not counted

    health_only = make_reward_env("health")
    health_only.reset(seed=3)
    arrange(health_only, faced="tree")
    reward, parts = act(health_only, "collect_wood")
    assert parts["laws"] == 0.0 and reward == pytest.approx(parts["health"])


def test_crafter_variant_passes_crafters_reward() -> None:
    env = make_reward_env("crafter")
    env.reset(seed=3)
    arrange(env, faced="tree")
    reward, parts = act(env, "collect_wood")
    assert reward == pytest.approx(1.0) and parts["crafter"] == pytest.approx(1.0)
    reward, _ = act(env, "collect_wood")
    assert reward == pytest.approx(0.0)  # crafter pays an achievement once


def test_learned_laws_drive_the_reward() -> None:
    # A wrong law (collect_wood needs a sapling) changes what is rewarded.
    exp = oracle_experience()
    exp.laws["collect_wood"].requires = {"sapling": 1}
    env = make_reward_env("laws", experience=exp)
    env.reset(seed=3)
    arrange(env, faced="tree")
    assert act(env, "collect_wood")[1]["laws"] == 0.0
    arrange(env, faced="tree", inventory={"sapling": 1})
    assert act(env, "collect_wood")[1]["laws"] == 1.0


def test_failing_predicate_pays_nothing_and_is_counted() -> None:
    broken = PredicateSet(
        {
            "collect_wood": PredicateEntry(
                "collect_wood",
                "collect_wood",
                "def valid(state, target):\n    return state.inventory['nothing'] > 0\n",
                "def partly(state, target):\n    return 1 // 0 == 0\n",
            )
        }
    )
    env = make_reward_env("laws+penalty", predicates=broken)
    env.reset(seed=3)
    arrange(env, faced="tree")
    reward, parts = act(env, "collect_wood")
    assert parts["laws"] == 0.0 and parts["penalty"] == 0.0 and env.predicate_errors == 2
    assert reward == pytest.approx(parts["health"])


def test_variant_errors_are_actionable() -> None:
    with pytest.raises(ValueError, match="unknown reward variant 'lawz'"):
        make_reward_env("lawz")
    with pytest.raises(ValueError, match="needs laws: pass experience="):
        make_reward_env("laws+penalty")
    assert set(VARIANTS) == {
        "health",
        "crafter",
        "laws",
        "laws+penalty",
        "oracle",
        "laws+small-penalty",
    }


def test_factory_pickles_and_builds_in_another_process_shape() -> None:
    factory = reward_env_factory("laws", experience=oracle_experience())
    rebuilt = pickle.loads(pickle.dumps(factory))
    env = rebuilt()
    env.reset(seed=3)
    arrange(env, faced="tree")
    assert act(env, "collect_wood")[1]["laws"] == 1.0


CASES: list[tuple[str, str, dict[str, Any], list[str]]] = [
    # (action, faced, inventory, nearby materials)
    ("make_wood_pickaxe", "grass", {"wood": 1}, ["table"]),
    ("make_wood_pickaxe", "grass", {"wood": 1}, []),
    ("make_wood_pickaxe", "grass", {}, ["table"]),
    ("make_stone_sword", "grass", {"wood": 1, "stone": 1}, ["table"]),
    ("make_iron_pickaxe", "grass", {"wood": 1, "coal": 1, "iron": 1}, ["table", "furnace"]),
    ("make_iron_pickaxe", "grass", {"wood": 1, "coal": 1, "iron": 1}, ["table"]),
    ("place_table", "grass", {"wood": 9}, []),
    ("place_table", "water", {"wood": 9}, []),
    ("place_stone", "water", {"stone": 1}, []),
    ("place_furnace", "sand", {"stone": 9}, ["table"]),
    ("collect_stone", "stone", {"wood_pickaxe": 1}, []),
    ("collect_stone", "stone", {}, []),
    ("collect_coal", "coal", {"wood_pickaxe": 1}, []),
    ("collect_iron", "iron", {"wood_pickaxe": 1}, []),
    ("collect_diamond", "diamond", {"iron_pickaxe": 1}, []),
    ("collect_drink", "water", {}, []),
    ("collect_wood", "grass", {}, []),
]


@pytest.mark.parametrize(("action", "faced", "inventory", "near"), CASES)
def test_oracle_predicates_agree_with_the_game(
    env: LawReward, action: str, faced: str, inventory: dict[str, Any], near: list[str]
) -> None:
    """On deterministic actions the oracle's +1 comes exactly when crafter
    grants the achievement."""
    arrange(env, faced=faced, inventory=inventory, near=near)
    achievements = env.unwrapped.core.players[0].achievements  # type: ignore[attr-defined]
    achievement = {v.action: k for k, v in oracle_experience().laws.items()}[action]
    before = achievements[achievement]
    if action == "collect_drink":
        env.unwrapped.core.players[0].inventory["drink"] = 5  # type: ignore[attr-defined]
    _, parts = act(env, action)
    assert (parts["laws"] == 1.0) == (achievements[achievement] > before)


def test_eat_plant_needs_a_ripe_plant(env: LawReward) -> None:
    arrange(env, faced="grass")
    core = env.unwrapped.core  # type: ignore[attr-defined]
    player = core.players[0]
    plant = objects.Plant(core.world, (int(player.pos[0]) + 1, int(player.pos[1])))
    core.world.add(plant)
    assert act(env, "eat_plant")[1]["laws"] == 0.0  # young plant
    plant.grown = 400
    assert act(env, "eat_plant")[1]["laws"] == 1.0
    assert player.achievements["eat_plant"] == 1


def test_oracle_set_covers_every_action_but_moves() -> None:
    actions = {e.action for e in predicates_from_experience(oracle_experience()).entries.values()}
    assert set(EXPANDED_ACTIONS) - actions == {
        "noop",
        "move_left",
        "move_right",
        "move_up",
        "move_down",
    }


@pytest.mark.filterwarnings("ignore:.*different from the unwrapped")
def test_passes_gymnasiums_env_checker() -> None:
    from gymnasium.utils.env_checker import check_env

    check_env(make_reward_env("oracle"), skip_render_check=True)


def test_reward_is_computed_inside_subprocess_envs() -> None:
    import gymnasium

    factory = reward_env_factory("oracle")
    envs = gymnasium.vector.AsyncVectorEnv([factory, factory], context="spawn")
    try:
        envs.reset(seed=5)
        penalties = total = health = 0.0
        for _ in range(3):
            action = EXPANDED_ACTIONS.index("make_iron_sword")  # nothing held: penalised once
            _, rewards, _, _, infos = envs.step([action, action])
            penalties += float(sum(infos["reward_parts"]["penalty"]))
            health += float(sum(infos["reward_parts"]["health"]))
            total += float(sum(rewards))
        assert penalties == -1.0  # -0.5 in each env, once
        assert total == pytest.approx(penalties + health)
    finally:
        envs.close()


def test_actions_chosen_while_asleep_earn_and_cost_nothing(env: LawReward) -> None:
    arrange(env, faced="tree")
    player = env.unwrapped.core.players[0]  # type: ignore[attr-defined]
    player.sleeping = True
    player.inventory["energy"] = 3  # crafter keeps it asleep and ignores the action
    assert act(env, "collect_wood")[1]["laws"] == 0.0
    assert act(env, "make_iron_sword")[1]["penalty"] == 0.0
    assert player.inventory["wood"] == 0
    player.sleeping = False
    assert act(env, "collect_wood")[1]["laws"] == 1.0  # awake: the first real attempt pays


def test_last_step_reports_the_episodes_sums_per_part() -> None:
    env = make_reward_env("oracle", length=4)
    env.reset(seed=3)
    arrange(env, faced="tree")
    seen: dict[str, float] = {}
    info: dict[str, Any] = {}
    for action in ("collect_wood", "collect_diamond", "noop", "noop"):
        _, _, terminated, truncated, info = env.step(EXPANDED_ACTIONS.index(action))
        for name, value in info["reward_parts"].items():
            seen[name] = seen.get(name, 0.0) + value
        assert ("episode_reward_parts" in info) == (terminated or truncated)
    assert info["episode_reward_parts"] == pytest.approx(seen)
    assert seen["laws"] == 1.0 and seen["penalty"] == -0.5


def test_small_penalty_variant_charges_a_fifth(tmp_path: Any) -> None:
    # our labelled reading of the paper's penalty: same rule, weight -0.1
    from lorekit.laws.experience import oracle_experience
    from lorekit.laws.rl_env import make_env

    small = make_reward_env("laws+small-penalty", experience=oracle_experience())
    small.reset(seed=3)
    arrange(small, faced="grass")
    reward, parts = act(small, "make_wood_pickaxe")
    assert parts["penalty"] == pytest.approx(-0.1) and reward == pytest.approx(-0.1)
    path = tmp_path / "oracle.json"
    oracle_experience().save(path)
    env = make_env("laws+small-penalty", seed=0, options={"experience": str(path)}, length=5)
    env.reset()
    env.close()
