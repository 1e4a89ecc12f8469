"""Generated rooms are as full as ALFWorld's official games (issue 28, item 4)."""

from __future__ import annotations

import re

import pytest

from lorekit.envs import make
from lorekit.envs.alfworld import rules, stats
from lorekit.envs.alfworld.games import GENERATED_SPLITS, generated_split
from lorekit.envs.alfworld.generate import GeneratedGame, generate_games

_FACT = re.compile(r"\((\w+) ([^\s()]+)(?: ([^\s()]+))?\)")


def _facts(game: GeneratedGame) -> list[tuple[str, str, str]]:
    problem = str(game.game["pddl_problem"])
    return _FACT.findall(problem[problem.index("(:init") : problem.index("(:goal")])


def _types(game: GeneratedGame, predicate: str) -> set[str]:
    return {b.removesuffix("Type") for p, _, b in _facts(game) if p == predicate}


@pytest.mark.parametrize("split", GENERATED_SPLITS)
def test_views_come_within_a_quarter_of_the_official_figures(split: str) -> None:
    games = generated_split(split, "move")  # every shipped split has the rich rooms
    fig = stats.figures(
        (str(g.game["pddl_problem"]), str(g.traj_data["pddl_params"]["object_target"]))
        for g in games
    )
    official = rules.settings()["official_figures"]
    for name in ("empty_view_share", "objects_per_nonempty_view", "max_objects_per_view"):
        ours, theirs = getattr(fig, name), official[name]
        assert abs(ours / theirs - 1) <= 0.25, (name, ours, theirs)
    assert fig.objects_per_game >= 25


def test_an_agent_starting_at_the_countertops_sees_as_many_objects_as_reacts() -> None:
    # ReAct's agents saw 18 distinct objects after 2 receptacles and 35 after 11:
    # they start at the countertops, tables and desks, which hold the most.
    games = generated_split("test", "move")
    fig = stats.figures(
        (str(g.game["pddl_problem"]), str(g.traj_data["pddl_params"]["object_target"]))
        for g in games
    )
    official = rules.settings()["official_figures"]["distinct_seen"]
    for k, theirs in official.items():
        ours = fig.distinct_seen_surfaces_first[k]
        assert abs(ours / theirs - 1) <= 0.25, (k, ours, theirs)
        assert ours > fig.distinct_seen[k]  # the order matters: surfaces hold the most


def test_every_carryable_type_of_the_floor_plan_is_placed() -> None:
    for game in generate_games(6, seed=28):
        plan = next(
            p for p in rules.floor_plans() if p.number == game.traj_data["scene"]["scene_num"]
        )
        placed = _types(game, "objectType")
        takers = {rules.receptacle_type_of(r) for r in plan.receptacle_points}
        wanted = {
            t
            for t in plan.object_types & rules.pickupable()
            if any(rules.accepts(r, t) for r in takers)
        }
        assert wanted <= placed, (game.path, sorted(wanted - placed))


def test_sliceable_nested_and_lamps_are_written_like_alfworlds() -> None:
    games = generate_games(24, seed=28)
    sliceable = sliced_types = nested = 0
    lamps: set[str] = set()
    for game in games:
        facts = _facts(game)
        types = {a: b.removesuffix("Type") for p, a, b in facts if p == "objectType"}
        marked = {a for p, a, _ in facts if p == "sliceable"}
        sliced_types += sum(rules.has_property(t, "Sliceable") for t in types.values())
        sliceable += len(marked)
        assert all(rules.has_property(types[o], "Sliceable") for o in marked)
        nested += sum(p == "inReceptacleObject" for p, _, _ in facts)
        toggles = {types[a] for p, a, _ in facts if p == "toggleable"}
        lamps |= toggles
        assert not toggles & {types[a] for p, a, _ in facts if p == "pickupable"}
    assert sliceable == sliced_types > 0
    assert nested > 0
    assert lamps == {"DeskLamp", "FloorLamp"}


def test_receptacles_the_layout_omits_are_added() -> None:
    # FloorPlan420 lists a bathtub but neither its layout nor its objects list the basin.
    plan = next(p for p in rules.floor_plans() if p.number == 420)
    assert "BathtubBasin" not in plan.object_types
    game = generate_games(1, seed=0, task_types=["pick_and_place_simple"], floor_plans=[420])[0]
    assert "BathtubBasin" in _types(game, "receptacleType")


def test_a_knife_slices_on_the_engine() -> None:
    env = make("alfworld", split="test")
    task = next(
        t
        for t in env.tasks("test")
        if t.group == "pick_cool_then_place_in_recep" and "Knife" in _all_types(t.id)
    )
    env.reset(task)
    world = env.world()
    knife = next(o for o, t in world.obj_type.items() if t in ("knife", "butterknife"))
    recep = world.inside[knife]
    env.step(f"go to {recep}")
    if recep in world.openable:
        env.step(f"open {recep}")
    assert env.step(f"take {knife} from {recep}").info["valid"]
    world = env.world()
    food = next(
        o
        for o in sorted(world.inside)
        if world.obj_type[o] in ("apple", "bread", "potato", "tomato", "lettuce", "egg")
    )
    place = world.inside[food]
    env.step(f"go to {place}")
    if place in world.openable:
        env.step(f"open {place}")
    assert f"slice {food} with {knife}" in env.candidate_actions()


def _all_types(task_id: str) -> set[str]:
    game = next(g for g in generated_split("test", "move") if g.path == task_id)
    return _types(game, "objectType")
