"""TextCraft as ADaPT's published run saw it: its first observations, and play after the goal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lorekit.envs.base import Task
from lorekit.envs.textcraft.env import TextCraftEnv
from lorekit.envs.textcraft.published import PublishedOpeningError

TEXTCRAFT = "ADaPT_maxd3_textcraft_gpt-3.5-turbo-instruct.json"
_FOLDERS = (
    Path(__file__).resolve().parents[2].parent / "shared" / "data" / "published-runs" / "adapt",
    Path("/work/shared/data/published-runs/adapt"),
)


def published(name: str) -> Path:
    """A published ADaPT result file beside the repository (never copied into it)."""
    for folder in _FOLDERS:
        if (folder / name).is_file():
            return folder / name
    pytest.skip(f"published ADaPT run {name} not found in ../shared/data/published-runs/adapt")


def compat(**options: object) -> TextCraftEnv:
    return TextCraftEnv("datapack", compat=True, max_steps=None, **options)  # type: ignore[arg-type]


def goal(env: TextCraftEnv, item: str) -> Task:
    return next(t for t in env.tasks("adapt-200") if t.id == item)


def test_every_first_observation_is_the_published_runs() -> None:
    path = published(TEXTCRAFT)
    record = json.loads(path.read_text())
    env = compat(opening_from=path)
    for task in env.tasks("adapt-200"):
        entry = record[f"env_{task.data['seed']}"]
        assert env.reset(task).text == entry["commands"] + "Goal: " + entry["problem"], task.id
    # without the file the lines are drawn with the seed: the published order is not recomputable
    plain = compat()
    first = plain.tasks("adapt-200")[0]
    assert plain.reset(first).text != env.reset(first).text


def one_episode_file(
    tmp_path: Path, lines: list[str], problem: str = "craft chiseled nether bricks."
) -> Path:
    path = tmp_path / "result.json"
    commands = "Crafting commands:\n" + "\n".join(lines) + "\n\n"
    path.write_text(json.dumps({"env_53": {"problem": problem, "commands": commands}}))
    return path


TREE = [
    "craft 1 chiseled nether bricks using 2 nether brick slab",
    "craft 6 nether brick slab using 3 nether bricks",
    "craft 1 nether bricks using 4 nether brick",
]


def test_a_file_whose_lines_do_not_fit_the_recipe_model_is_refused_naming_the_line(
    tmp_path: Path,
) -> None:
    env = compat(
        opening_from=one_episode_file(tmp_path, [*TREE, "craft 4 oak planks using 1 oak logs"])
    )
    with pytest.raises(
        PublishedOpeningError, match=r"result.json: env_53.commands line 'craft 4 oak planks"
    ):
        env.reset(goal(env, "chiseled_nether_bricks"))
    env = compat(opening_from=one_episode_file(tmp_path, TREE[:2]))
    with pytest.raises(
        PublishedOpeningError, match="lacks the recipe-tree line 'craft 1 nether bricks"
    ):
        env.reset(goal(env, "chiseled_nether_bricks"))
    env = compat(opening_from=one_episode_file(tmp_path, TREE, problem="craft lodestone."))
    with pytest.raises(PublishedOpeningError, match=r"env_53\.problem is 'craft lodestone\.'"):
        env.reset(goal(env, "chiseled_nether_bricks"))
    with pytest.raises(PublishedOpeningError, match="no episode env_0"):
        env.reset(goal(env, "polished_granite_stairs"))
    with pytest.raises(ValueError, match="opening_from: published openings need compat=true"):
        TextCraftEnv("datapack", opening_from=tmp_path / "result.json")
    env = compat(opening_from=one_episode_file(tmp_path, [TREE[2], TREE[0], TREE[1]]))
    assert env.reset(goal(env, "chiseled_nether_bricks")).text.splitlines()[1] == TREE[2]


MAKE = [
    "get 12 nether brick",
    *["craft 1 nether bricks using 4 nether brick"] * 3,
    "craft 6 nether brick slab using 3 nether bricks",
    "craft 1 chiseled nether bricks using 2 nether brick slab",
]


def test_after_the_goal_the_original_env_played_on_and_lorekit_can_too() -> None:
    stop, go_on = compat(), compat(after_goal="continue")
    for env in (stop, go_on):
        env.reset(goal(env, "chiseled_nether_bricks"))
        steps = [env.step(a) for a in MAKE]
        assert (steps[-1].reward, steps[-1].done, steps[-1].info["crafted_goal"]) == (
            1.0,
            True,
            True,
        )
    assert stop.step("inventory").observation.startswith("The episode is over")
    again = go_on.step("craft 1 chiseled nether bricks using 2 nether brick slab")
    assert again.observation == "Crafted 1 minecraft:chiseled_nether_bricks"
    assert (again.reward, again.done, again.info["crafted_goal"], again.info["accepts_more"]) == (
        0.0,
        True,
        True,
        True,
    )
    assert again.info["success"] is True
    with pytest.raises(ValueError, match="after_goal: expected one of stop, continue"):
        compat(after_goal="never")


def test_the_inventory_text_is_the_inventory_actions_reply_without_a_step() -> None:
    env = compat()
    env.reset(goal(env, "chiseled_nether_bricks"))
    env.step("get 4 nether brick")
    shown = env.inventory_text()
    assert shown == "Inventory: [nether brick] (4) " == env.step("inventory").observation
    assert env.step("get 1 nether brick").info["steps"] == 3
