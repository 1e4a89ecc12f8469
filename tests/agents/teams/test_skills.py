"""Crafter skills on the real engine: parsing, errors, each skill, budgets."""

from __future__ import annotations

import numpy as np
import pytest
from crafter import objects

from lorekit.agents.teams.world.skills import (
    SKILLS,
    Skill,
    SkillCall,
    SkillError,
    SkillResult,
    make_skill,
    parse_skill_call,
    position_text,
    run_skills,
    skills_prompt,
)
from lorekit.envs.crafter import CrafterCore, CrafterTextEnv
from lorekit.envs.crafter.core import world_seed

CHAIN = (
    "collect(wood, 5)",
    "place(table)",
    "craft(wood_pickaxe)",
    "collect(stone, 1)",
    "craft(stone_pickaxe)",
    "collect(iron, 1)",
)


def fresh(seed: int = 0) -> CrafterCore:
    core = CrafterCore(length=None)
    core.reset(world_seed(seed))
    return core


def drive(core: CrafterCore, skill: Skill) -> tuple[SkillResult, list[str]]:
    """Apply the skill's actions one tick at a time, as a team world would."""
    actions: list[str] = []
    while (action := skill.next_action()) is not None:
        actions.append(action)
        core.step([action])
    assert skill.result is not None
    return skill.result, actions


def run(core: CrafterCore, call: str) -> SkillResult:
    return run_skills(core, {0: call})[0]


def with_stone(seed: int = 0, stone: int = 3) -> CrafterCore:
    """A world where player 0 earned a wood pickaxe and some stone through skills."""
    core = fresh(seed)
    for call in (
        "collect(wood, 5)",
        "place(table)",
        "craft(wood_pickaxe)",
        f"collect(stone, {stone})",
    ):
        assert run(core, call).success, call
    return core


def grass_cell(core: CrafterCore, distance: int) -> tuple[int, int]:
    """An empty grass cell ``distance`` steps (Manhattan) from player 0."""
    px, py = (int(v) for v in core.players[0].pos)
    for dx in range(-distance, distance + 1):
        for dy in (distance - abs(dx), abs(dx) - distance):
            cell = (px + dx, py + dy)
            if core.world[cell] == ("grass", None):
                return cell
    raise AssertionError("no grass cell at that distance")


# -- calls -------------------------------------------------------------------------


def test_parse_calls_aliases_and_numbers() -> None:
    assert parse_skill_call("collect(wood, 5)") == SkillCall("collect", ("wood", 5))
    assert parse_skill_call("  Make( Stone_Pickaxe ) ") == SkillCall("craft", ("stone_pickaxe",))
    assert parse_skill_call("place(stone, 32, 29)") == SkillCall("place", ("stone", 32, 29))
    assert parse_skill_call("go to(30, 31)") == SkillCall("go_to", (30, 31))
    assert parse_skill_call("collect(material='iron', count=2)") == SkillCall(
        "collect", ("iron", 2)
    )
    assert parse_skill_call("gather(Water, 3)") == SkillCall("collect", ("drink", 3))
    assert parse_skill_call("drink()") == SkillCall("drink")
    assert parse_skill_call("sleep") == SkillCall("sleep")
    assert str(parse_skill_call("fight( 'zombie' )")) == "fight(zombie)"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("collect(wood, 5", "cannot read"),
        ("dance(now)", "unknown skill 'dance'; skills are: collect, craft"),
        ("collect(wood,,2)", "cannot read"),
    ],
)
def test_parse_errors_are_skill_errors(text: str, words: str) -> None:
    with pytest.raises(SkillError, match=words):
        parse_skill_call(text)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        ("collect(gold, 2)", "collect cannot take 'gold'; choose one of: wood, stone"),
        ("collect(wood, 0)", "whole number from 1 to 99"),
        ("collect(wood, many)", "whole number from 1 to 99"),
        ("collect()", r"collect takes \(material, \[count\]\); got 0 argument"),
        ("craft(diamond_pickaxe)", "choose one of: wood_pickaxe"),
        ("place(stone, 3)", "got 2 argument"),
        ("place(stone, 64, 2)", r"two whole numbers \(x, y\) inside the 64x64 map"),
        ("go_to(-1, 5)", "inside the 64x64 map"),
        ("fight(dragon)", "choose one of: zombie, skeleton, cow"),
        ("eat(bread)", "choose one of: cow, plant"),
        ("drink(3)", "got 1 argument"),
    ],
)
def test_bad_calls_raise_a_clear_skill_error(call: str, words: str) -> None:
    with pytest.raises(SkillError, match=words):
        make_skill(fresh(), 0, call)


def test_unknown_player_and_skill_list() -> None:
    core = fresh()
    with pytest.raises(SkillError, match="no player 'p2'"):
        make_skill(core, "p2", "drink()")
    assert make_skill(core, "p1", "drink()").player == 0
    names = [spec.name for spec in SKILLS]
    assert names == ["collect", "craft", "place", "go_to", "fight", "eat", "drink", "sleep"]
    prompt = skills_prompt()
    assert all(f"{name}(" in prompt for name in names) and len(prompt.splitlines()) == 8
    for name in names:  # every listed skill parses under its listed name
        assert parse_skill_call(f"{name}()").name == name


# -- single skills on seeded worlds ------------------------------------------------------


def test_collect_wood_gains_exactly_what_was_asked() -> None:
    core = fresh(0)
    skill = make_skill(core, 0, "collect(wood, 5)")
    result, actions = drive(core, skill)
    assert result.success and result.ticks == len(actions)
    assert core.players[0].inventory["wood"] == 5
    assert core.players[0].achievements["collect_wood"] == 5
    assert "collected 5 wood" in result.reason
    assert skill.next_action() is None  # finished skills stay finished


def test_skill_actions_drive_the_single_player_text_env() -> None:
    env = CrafterTextEnv()
    env.reset(seed=0)
    skill = make_skill(env.core, 0, "collect(wood, 3)")
    while (action := skill.next_action()) is not None:
        step = env.step(action)  # crafter's names are accepted as aliases
        assert step.info["valid"], step.observation
    assert skill.result is not None and skill.result.success
    assert env.core.players[0].inventory["wood"] == 3


def test_craft_without_materials_fails_naming_what_is_missing() -> None:
    core = fresh(0)
    result, actions = drive(core, make_skill(core, 0, "craft(wood_pickaxe)"))
    assert not result.success and actions == [] and result.ticks == 0
    assert "needs 1 wood" in result.reason and "wood_pickaxe" in result.reason
    assert run(core, "collect(wood, 1)").success
    stone = run(core, "craft(stone_pickaxe)")
    assert not stone.success and "needs 1 stone" in stone.reason
    assert core.players[0].inventory["wood"] == 1  # nothing collected behind our back


def test_craft_needs_a_table_within_reach_and_never_places_one() -> None:
    core = fresh(0)
    assert run(core, "collect(wood, 2)").success
    result = run(core, "craft(wood_pickaxe)")
    assert not result.success and "no table within reach" in result.reason
    assert core.players[0].achievements["place_table"] == 0


def test_missing_tool_fails_at_once() -> None:
    core = fresh(0)
    result = run(core, "collect(iron)")
    assert not result.success and result.ticks == 0
    assert "needs stone_pickaxe to collect iron" in result.reason


@pytest.mark.parametrize("seed", [0, 3])
def test_full_chain_from_wood_to_iron(seed: int) -> None:
    core = fresh(seed)
    for call in CHAIN:
        result = run(core, call)
        assert result.success, f"{call}: {result.reason}"
    inv = core.players[0].inventory
    assert inv["iron"] >= 1 and inv["stone_pickaxe"] == 1 and inv["wood_pickaxe"] == 1
    assert core.players[0].achievements["place_table"] == 1


def test_skills_replay_identically_on_a_seed() -> None:
    def play() -> list[tuple[SkillResult, list[str]]]:
        core = fresh(5)
        return [drive(core, make_skill(core, 0, call)) for call in CHAIN]

    first = play()
    assert first == play() and all(result.success for result, _ in first)


def test_place_stone_at_a_cell_and_on_the_players_own_cell() -> None:
    core = with_stone(0)
    target = grass_cell(core, 3)
    result = run(core, f"place(stone, {target[0]}, {target[1]})")
    assert result.success and f"({target[0]}, {target[1]})" in result.reason
    assert core.world[target][0] == "stone"
    here = tuple(int(v) for v in core.players[0].pos)
    result = run(core, f"place(stone, {here[0]}, {here[1]})")
    assert result.success and core.world[here][0] == "stone"
    assert tuple(int(v) for v in core.players[0].pos) != here
    again = run(core, f"place(stone, {here[0]}, {here[1]})")
    assert again.success and again.ticks == 0 and "already holds stone" in again.reason


def test_place_refuses_a_wrong_target_and_next_to_player_works() -> None:
    core = with_stone(0)
    trees = np.argwhere(core.world._mat_map == core.world._mat_ids["tree"])
    x, y = (int(v) for v in trees[0])
    result = run(core, f"place(stone, {x}, {y})")
    assert not result.success and f"cannot place stone on tree at ({x}, {y})" in result.reason
    before = core.players[0].inventory["stone"]
    result = run(core, "place(stone)")
    assert result.success and core.players[0].inventory["stone"] == before - 1


def test_placing_stone_on_lava_never_walks_into_it() -> None:
    core = with_stone(0)
    px, py = (int(v) for v in core.players[0].pos)
    lava = (px + 1, py)
    core.world[lava] = "lava"
    core.players[0].facing = (0, 1)
    result = run(core, f"place(stone, {lava[0]}, {lava[1]})")
    assert result.success and core.world[lava][0] == "stone"
    assert core.alive(core.players[0])


def test_go_to_reaches_the_cell_or_stops_next_to_water() -> None:
    core = fresh(1)
    assert position_text(core, "p1").startswith("You stand at (32, 32) on the 64x64 map")
    target = grass_cell(core, 6)
    result = run(core, f"go_to({target[0]}, {target[1]})")
    assert result.success and tuple(int(v) for v in core.players[0].pos) == target
    assert f"({target[0]}, {target[1]})" in position_text(core, 0)
    water = np.argwhere(core.world._mat_map == core.world._mat_ids["water"])
    here = np.array(target)
    x, y = (int(v) for v in min(water, key=lambda c: int(np.abs(c - here).sum())))
    result = run(core, f"go_to({x}, {y})")
    assert result.success and "next to" in result.reason and "water" in result.reason
    assert abs(int(core.players[0].pos[0]) - x) + abs(int(core.players[0].pos[1]) - y) == 1


def test_drink_eat_and_collect_drink() -> None:
    core = fresh(0)
    full = run(core, "drink()")
    assert full.success and full.ticks == 0 and "already 9/9" in full.reason
    result = run(core, "collect(water, 2)")
    assert result.success and core.players[0].achievements["collect_drink"] == 2
    result = run(core, "eat(cow)")
    assert result.success and core.players[0].achievements["eat_cow"] == 1
    result = run(core, "eat(plant)")  # nothing planted on a new world
    assert not result.success and "no ripe plant within reach" in result.reason


def test_sleep_needs_tiredness_and_ends_awake() -> None:
    core = fresh(1)
    rested = run(core, "sleep()")
    assert not rested.success and "not tired" in rested.reason
    core.players[0].inventory["energy"] = 6
    result = run(core, "sleep()")
    assert result.ticks > 0 and not core.players[0].sleeping
    assert ("woke up rested" in result.reason) == result.success


def test_saplings_and_plants() -> None:
    core = fresh(0)
    assert run(core, "collect(sapling, 2)").success
    result = run(core, "place(sapling)")
    assert result.success and core.players[0].achievements["place_plant"] == 1


def test_death_ends_a_skill_with_vitals_and_the_killer() -> None:
    core = fresh(0)
    player = core.players[0]
    player.health = 1
    core.world.add(objects.Zombie(core.world, player.pos + np.array((2, 0)), player))
    result = run(core, "collect(wood, 9)")
    assert not core.alive(player) and not result.success
    assert result.reason.startswith("died (gained ") and "food 9" in result.reason
    assert result.reason.endswith("enemies near: 1 zombie")


# -- budgets -----------------------------------------------------------------------


def test_a_skill_gives_up_at_its_budget() -> None:
    core = fresh(0)
    skill = make_skill(core, 0, "collect(wood, 50)", budget=12)
    result, actions = drive(core, skill)
    assert not result.success and len(actions) == 12 == result.ticks
    assert result.reason.startswith("gave up after 12 ticks (gained ")


@pytest.mark.parametrize(
    "call",
    ["collect(wood, 99)", "collect(sapling, 9)", "place(table)", "go_to(2, 2)", "fight(zombie)",
     "eat(cow)", "drink()", "sleep()", "craft(wood_sword)"],
)  # fmt: skip
def test_every_skill_ends_within_its_budget(call: str) -> None:
    core = fresh(2)
    core.players[0].inventory.update(energy=5, drink=5)
    skill = make_skill(core, 0, call, budget=30)
    result, actions = drive(core, skill)
    assert result.ticks == len(actions) <= 30 and result.reason
