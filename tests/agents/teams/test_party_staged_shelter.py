"""The paper's staged shelter on the party world: foundation, then walls, then roof."""

from __future__ import annotations

from lorekit.agents.teams.world.party import CrafterParty

TASK = "house-0_-3/seed-0"


def _site(env: CrafterParty) -> dict[str, list[tuple[int, int]]]:
    assert env.shelter is not None
    return {stage.name: list(stage.cells) for stage in env.shelter.stages}


def test_the_staged_shelter_names_its_stages_in_the_goal() -> None:
    env = CrafterParty(3, length=50)
    task = next(t for t in env.tasks() if t.id == TASK)
    assert "foundation: stone at 31,30 32,30 33,30" in task.goal
    assert "then walls: table at 31,29 33,29" in task.goal
    assert "then roof: stone at 31,28 32,28 33,28" in task.goal
    env.reset(task)
    assert env.progress() == "foundation 0/3, walls 0/2, roof 0/3"
    assert all(env.core.world[c][0] == "grass" for c in env.shelter.cells)  # type: ignore[union-attr]


def test_a_stage_stands_only_on_the_finished_one_below() -> None:
    env = CrafterParty(2, length=50)
    env.reset(TASK)
    site, world = _site(env), env.core.world
    world[site["walls"][0]] = "table"  # walls before the foundation
    world[site["foundation"][0]] = "stone"
    step = env.step("p1: noop")
    assert world[site["walls"][0]][0] == "grass" and world[site["foundation"][0]][0] == "stone"
    assert step.info["progress"].startswith("foundation 1/3, walls 0/2, roof 0/3; 1 piece(s) fell")
    assert "(built before the foundation stage was finished)" in step.info["progress"]
    for cell in site["foundation"]:
        world[cell] = "stone"
    world[site["walls"][0]] = "table"
    world[site["roof"][0]] = "stone"  # the roof before the walls are finished
    step = env.step("p1: noop")
    assert world[site["walls"][0]][0] == "table" and world[site["roof"][0]][0] == "grass"
    assert step.info["progress"].startswith("foundation 3/3, walls 1/2, roof 0/3; 2 piece(s)")
    assert "(built before the walls stage was finished)" in step.info["progress"]
    world[site["walls"][1]] = "stone"  # walls are wood: a stone wall falls too
    step = env.step("p1: noop")
    assert world[site["walls"][1]][0] == "grass" and not step.done
    assert "walls are built of table, not stone" in step.info["progress"]
    world[site["walls"][1]] = "table"
    env.step("p1: noop")
    for cell in site["roof"]:
        world[cell] = "stone"
    step = env.step("p1: noop")
    assert step.done and step.info["success"] and step.reward == 1.0
    assert step.info["progress"].startswith("foundation 3/3, walls 2/2, roof 3/3")
    assert len(env.shelter.fell) == 3  # type: ignore[union-attr]
