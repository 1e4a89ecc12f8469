"""TextCraft actions: every failure message, friendly vs compat, limits, parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from lorekit.envs import Observation, Step
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.envs.textcraft.sources import DEFAULT_DATAPACK_DIR

needs_datapack = pytest.mark.skipif(
    not DEFAULT_DATAPACK_DIR.is_dir(), reason=f"{DEFAULT_DATAPACK_DIR} not present"
)


def _run(env: TextCraftEnv, *actions: str) -> Step:
    step = None
    for action in actions:
        step = env.step(action)
    assert step is not None
    return step


def test_reset_observation_format(env: TextCraftEnv) -> None:
    obs = env.reset("wooden_pickaxe", seed=1)
    assert isinstance(obs, Observation)
    assert obs.text.startswith("Crafting commands:\n")
    assert obs.text.endswith("\n\nGoal: craft wooden pickaxe.")
    assert "craft 1 wooden pickaxe using 3 planks, 2 stick" in obs.text
    assert env.reset("wooden pickaxe", seed=1).text == obs.text


def test_reset_unknown_task_is_an_error(env: TextCraftEnv) -> None:
    with pytest.raises(KeyError, match="unknown TextCraft task"):
        env.reset("no_such_item")


def test_step_before_reset_and_after_done() -> None:
    env = TextCraftEnv()
    first = env.step("inventory")
    assert first.done and "reset()" in first.observation and not first.info["valid"]
    env.reset("stick")
    last = _run(env, "get 2 bamboo", "craft 1 stick using 2 bamboo")
    assert last.done and last.reward == 1.0 and last.info["success"]
    after = env.step("inventory")
    assert after.done and after.reward == 0.0 and "episode is over" in after.observation


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("", "Empty action"),
        ("dance", "Could not understand 'dance'. Use one of: get <count> <item>"),
        ("get", "Could not understand 'get'"),
        ("get 1 oak planks", "oak planks is not a base item"),
        ("get 0 oak log", "Bad count '0'"),
        ("get -2 oak log", "Bad count '-2'"),
        ("get 1.5 oak log", "Bad count '1.5'"),
        ("get 99999 oak log", "Bad count '99999'"),
        ("get oak log", "Missing count in 'get oak log'"),
        ("get 1 unobtainium", "Unknown item 'unobtainium'."),
        ("get 1 oak lgo", "Did you mean 'oak log'?"),
        ("get 2 planks", "planks is a category and none of its kinds can be fetched"),
        ("craft 1 planks using 1 oak log", "planks is a category, not an item"),
        ("craft 1 oak log using 1 oak log", "oak log has no crafting recipe; it is a base item"),
        ("craft 4 oak planks", "Name the ingredients"),
        ("craft 4 oak planks using", "Name the ingredients"),
        ("craft 1 zzz using 1 stick", "Unknown item 'zzz'"),
        ("craft 4 oak planks using 1 qqq", "Unknown item 'qqq'"),
        ("craft 4 oak planks using 1 stick", "No recipe for oak planks uses stick. Known recipe:"),
        ("craft 4 stick using 1 oak planks, 1 oak planks", "listed twice"),
        ("craft 4 oak planks using 1 oak log", "Missing ingredients to craft 4 oak planks: 1 oak"),
        ("x" * 5000, "Could not understand"),
    ],
)
def test_friendly_failure_messages(env: TextCraftEnv, action: str, expected: str) -> None:
    env.reset("wooden_pickaxe")
    step = env.step(action)
    assert expected in step.observation
    assert not step.info["valid"] and step.reward == 0.0 and not step.done


def test_missing_lists_each_shortfall(env: TextCraftEnv) -> None:
    env.reset("wooden_pickaxe")
    step = _run(env, "get 1 bamboo", "craft 1 wooden pickaxe using 3 planks, 2 stick")
    assert "2 stick (have 0), 3 planks (have 0)" in step.observation


@pytest.mark.parametrize(
    "action",
    [
        "get 1 oak log",
        "GET 1 OAK LOG",
        "  get   1   oak   log  ",
        "get 1 oak log.",
        "get 1 minecraft:oak_log",
        "get 1 Oak_Log",
        "> get 1 oak log",
    ],
)
def test_actions_tolerate_case_space_period_prefix(env: TextCraftEnv, action: str) -> None:
    env.reset("wooden_pickaxe")
    step = env.step(action)
    assert step.observation == "Got 1 oak log." and step.info["valid"]


def test_friendly_craft_semantics(env: TextCraftEnv) -> None:
    env.reset("wooden_pickaxe")
    # A category name in `get` hands out its first base kind.
    assert env.step("get 1 oak logs").observation == "Got 1 oak log (a kind of oak logs)."
    # Stated counts are ignored: one batch needs 1 log whatever is written.
    assert env.step("craft 4 oak planks using 7 oak log").observation == "Crafted 4 oak planks."
    # Counts may be omitted; asking for 8 sticks runs two batches (4 planks).
    _run(env, "get 1 spruce log", "craft 4 spruce planks using spruce log")
    step = env.step("craft 8 stick using planks")
    assert step.observation == "Crafted 8 stick."
    assert env.inventory == {"stick": 8, "spruce_planks": 4}
    # A named category may be paid with any mix of kinds.
    _run(env, "get 1 birch log", "craft 4 birch planks using 1 birch log", "get 1 bamboo")
    assert env.inventory["birch_planks"] == 4
    # Plural tolerated in friendly mode.
    step = env.step("craft 1 wooden pickaxe using 3 planks, 2 sticks")
    assert step.done and step.reward == 1.0


def test_friendly_mixes_category_members(env: TextCraftEnv) -> None:
    env.reset("crafting_table")
    _run(env, "get 1 oak log", "craft 4 oak planks using 1 oak log")
    _run(env, "get 1 birch log", "craft 4 birch planks using 1 birch log")
    assert env.step("craft 1 stick using 1 oak planks").info["valid"]  # uses 2 oak planks
    step = env.step("craft 1 crafting table using 4 planks")
    assert step.reward == 1.0  # 2 oak + 2 birch


def test_compat_rules_and_wording(compat_env: TextCraftEnv) -> None:
    """The original's rules, as its published transcripts show them."""
    env = compat_env
    env.reset("wooden_pickaxe")
    assert env.step("dance").observation == "Could not execute dance"
    # Actions are case-sensitive and taken as typed.
    assert env.step("get 1 Oak Log").observation == "Could not find Oak Log"
    assert env.step("> get 1 oak log").observation == "Could not execute > get 1 oak log"
    assert env.step("get 1 oak planks").observation == "Could not find oak planks"
    assert env.step("get 1 planks").observation == "Could not find planks"
    # A log tag without recipes is a fetchable pseudo-item; `get` echoes the name.
    assert env.step("get 1 oak logs").observation == "Got 1 oak logs"
    assert env.step("get 1 oak log").observation == "Got 1 oak log"
    assert env.step("inventory").observation == "Inventory: [oak logs] (1) [oak log] (1) "
    step = env.step("craft 4 oak planks using oak logs")
    assert step.observation == "Wrong item format: oak logs"
    # Oak planks take the pseudo-item "oak logs", not an oak log.
    step = env.step("craft 4 oak planks using 1 oak log")
    assert step.observation == (
        "Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=None, "
        "item_id='minecraft:oak_planks'), count=4)"
    )
    step = env.step("craft 4 oak planks using 2 oak logs")
    assert step.observation == "Could not find enough items to craft minecraft:oak_planks"
    # One batch whatever count is asked for.
    step = env.step("craft 8 oak planks using 1 oak logs")
    assert step.observation == "Crafted 4 minecraft:oak_planks"
    # A group ingredient ("planks") takes a member of the group, at its exact count.
    step = env.step("craft 4 stick using 4 oak planks")
    assert step.observation.startswith("Could not find a valid recipe for ")
    step = env.step("craft 4 stick using 2 planks")
    assert step.observation == "Could not find enough items to craft minecraft:stick"
    assert env.step("craft 4 stick using 2 oak planks").observation == "Crafted 4 minecraft:stick"
    assert env.step("inventory").observation == (
        "Inventory: [oak log] (1) [oak planks] (2) [stick] (4) "
    )
    step = env.step("get 0 stone")
    assert step.observation == "Got 0 stone" and env.inventory["stone"] == 0


def test_compat_rewards_the_craft_of_the_goal(compat_env: TextCraftEnv) -> None:
    env = compat_env
    env.reset("crafting_table")
    _run(env, "get 1 oak logs", "craft 4 oak planks using 1 oak logs")
    step = env.step("craft 1 crafting table using 4 oak planks")
    assert step.observation == "Crafted 1 minecraft:crafting_table"
    assert step.reward == 1.0 and step.done and step.info["success"]


def test_compat_subtree_recipes_answer_for_the_goal(compat_env: TextCraftEnv) -> None:
    """The original's tree walk extends the goal's recipe list in place, so
    within the episode crafting the goal from a sub-recipe's ingredients makes
    that sub-recipe's output. Another episode's goal does not leak in."""
    env = compat_env
    env.reset("polished_granite_stairs")
    _run(env, "get 2 quartz", "get 2 cobblestone")
    step = env.step("craft 1 polished granite stairs using 2 quartz, 2 cobblestone")
    assert step.observation == "Crafted 2 minecraft:diorite" and not step.done
    env.reset("lodestone")
    env.reset("polished_granite_slab")
    _run(env, "get 2 quartz", "get 2 cobblestone")
    step = env.step("craft 1 polished granite stairs using 2 quartz, 2 cobblestone")
    assert step.observation.startswith("Could not find a valid recipe for ")


@needs_datapack
def test_friendly_and_compat_differ_on_the_same_action() -> None:
    actions = ("get 1 oak log", "craft 4 oak planks using 3 oak log")
    outcomes = []
    for compat in (False, True):
        env = TextCraftEnv(compat=compat)
        env.reset("crafting_table")
        outcomes.append(_run(env, *actions).info["valid"])
    assert outcomes == [True, False]


def test_step_limit_ends_episode_with_zero_reward() -> None:
    env = TextCraftEnv(max_steps=3)
    env.reset("wooden_pickaxe")
    assert not env.step("inventory").done
    assert not env.step("dance").done
    last = env.step("inventory")
    assert last.done and last.reward == 0.0 and last.info["truncated"]
    assert not last.info["success"] and "Step limit of 3" in last.observation
    assert env.expert_action() is None


def test_max_steps_none_is_uncapped() -> None:
    env = TextCraftEnv(max_steps=None)
    env.reset("stick")
    steps = [env.step("inventory") for _ in range(500)]
    assert not any(s.done or s.info["truncated"] for s in steps)
    assert env.step("get 2 bamboo").info["valid"]
    assert env.step("craft 1 stick using 2 bamboo").reward == 1.0
    with pytest.raises(ValueError, match="or None for no cap"):
        TextCraftEnv(max_steps=0)


def test_max_steps_none_through_make_and_cli_option() -> None:
    from lorekit.cli.prepare import kv
    from lorekit.envs import make

    opts = kv(["max_steps=none", "compat=false"], "--env-opt")
    assert opts == {"max_steps": None, "compat": False}
    env = make("textcraft", **opts)
    assert isinstance(env, TextCraftEnv) and env.step_limit is None


def test_default_step_limit_is_40() -> None:
    env = TextCraftEnv()
    env.reset("stick")
    steps = [env.step("inventory") for _ in range(40)]
    assert [s.done for s in steps].index(True) == 39


def test_reset_by_seed_picks_from_test_split(env: TextCraftEnv) -> None:
    ids = {t.id for t in env.tasks("test")}
    assert env.reset(seed=3).info["task_id"] in ids
    assert env.reset(seed=3).text == env.reset(seed=3).text


def test_manual_and_action_forms(env: TextCraftEnv) -> None:
    assert "get <count> <item>" in env.action_forms()
    assert "inventory" in env.manual() and "craft" in env.manual()


def test_compat_without_the_data_pack_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="LOREKIT_TEXTCRAFT_DATAPACK"):
        TextCraftEnv(tmp_path / "missing", compat=True)


def test_compat_manual_states_the_original_rules(compat_env: TextCraftEnv) -> None:
    assert "exactly the count" in compat_env.manual()
    assert "two batches" in TextCraftEnv().manual() and "two batches" not in compat_env.manual()


def test_compat_never_raises_on_huge_numbers(compat_env: TextCraftEnv) -> None:
    compat_env.reset("stick")
    for action in ("get " + "9" * 5000 + " oak log", "craft 1 stick using " + "9" * 5000 + " x"):
        assert compat_env.step(action).observation.startswith("Could not execute ")
    assert compat_env.step("get 12 oak log").observation == "Got 12 oak log"


def test_manual_states_the_step_limit_it_plays_with() -> None:
    assert "after 40 steps" in TextCraftEnv().manual()
    assert "after 12 steps" in TextCraftEnv(max_steps=12).manual()
    uncapped = TextCraftEnv(max_steps=None).manual()
    assert "no step limit" in uncapped and "after" not in uncapped
