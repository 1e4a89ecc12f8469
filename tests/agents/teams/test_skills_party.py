"""Skills of several players in one crafter-party world, and the party's tasks."""

from __future__ import annotations

from lorekit.agents.teams.world.party import CrafterParty
from lorekit.agents.teams.world.skills import SkillResult, make_skill, run_skills
from lorekit.agents.teams.world.skills_base import built_cells

# Task ids from before the skills work: studies and stored runs refer to them.
OLD_IDS = [
    "collect-20-wood/seed-0",
    "collect-50-wood/seed-0",
    "collect-6-sapling/seed-0",
    "collect-20-stone/seed-0",
    "collect-30-drink/seed-0",
    "shelter-0_-3/seed-0",
    "shelter-3_0/seed-0",
    "shelter--4_2/seed-0",
]


def party(task: str = "collect-20-wood/seed-0", players: int = 2) -> CrafterParty:
    env = CrafterParty(players, length=2_000)
    env.reset(task)
    return env


def equip(env: CrafterParty, *calls: str) -> None:
    """Run each call for every player side by side; all must succeed."""
    everyone = range(len(env.names))
    for call in calls:
        results = run_skills(env.core, {i: call for i in everyone})
        assert all(r.success for r in results.values()), (call, results)


def test_party_has_iron_and_large_stone_tasks_and_keeps_old_ids() -> None:
    env = CrafterParty(2)
    ids = [t.id for t in env.tasks("test")]
    assert ids[: len(OLD_IDS) - 3] == OLD_IDS[:-3]  # the collect tasks keep their order
    assert set(OLD_IDS) <= set(ids)
    for new in ("collect-50-stone/seed-0", "collect-2-iron/seed-0", "collect-5-iron/seed-0"):
        assert new in ids
    task = next(t for t in env.tasks("dev") if t.id.startswith("collect-5-iron"))
    assert task.data == {"kind": "collect", "item": "iron", "amount": 5, "seed": 3}
    env.reset(task)
    assert env.progress() == "0/5 iron"


def test_two_players_collect_side_by_side_and_each_counts_its_own() -> None:
    env = party()
    results = run_skills(env.core, {"p1": "collect(wood, 4)", "p2": "collect(wood, 6)"})
    assert results[0].success and results[1].success
    assert "collected 4 wood" in results[0].reason and "collected 6 wood" in results[1].reason
    counts = [int(p.achievements["collect_wood"]) for p in env.core.players]
    assert counts == [4, 6] and env.collected("wood") == 10


def test_two_players_heading_for_one_cell_both_end_well() -> None:
    env = party("collect-20-wood/seed-1")
    results = run_skills(env.core, {0: "go_to(29, 33)", 1: "go_to(29, 33)"})
    spots = [tuple(int(v) for v in p.pos) for p in env.core.players]
    assert (29, 33) in spots and spots[0] != spots[1]
    assert all(r.success for r in results.values())
    reasons = sorted(r.reason for r in results.values())
    assert reasons == ["reached (29, 33)", "stood next to (29, 33), which holds player"]


def test_built_walls_are_never_mined_or_dug_by_teammates() -> None:
    env = party("shelter-0_-3/seed-0")
    equip(env, "collect(wood, 3)", "place(table)", "craft(wood_pickaxe)")
    assert run_skills(env.core, {0: "collect(stone, 2)"})[0].success
    px, py = (int(v) for v in env.core.players[1].pos)
    wall = next(
        cell
        for cell in ((px + 1, py), (px - 1, py), (px, py + 1), (px, py - 1))
        if env.core.world[cell] == ("grass", None)
    )
    placed = run_skills(env.core, {0: f"place(stone, {wall[0]}, {wall[1]})"})[0]
    assert placed.success and env.core.world[wall][0] == "stone"
    # The wall is the stone nearest to p2, yet p2 mines elsewhere and walks around it.
    mined = run_skills(env.core, {1: "collect(stone, 2)"})[1]
    assert mined.success and env.core.world[wall][0] == "stone"
    far = (wall[0] + 2 * (wall[0] - px), wall[1] + 2 * (wall[1] - py))
    run_skills(env.core, {1: f"go_to({far[0]}, {far[1]})"})
    assert env.core.world[wall][0] == "stone"
    assert wall in built_cells(env.core)
    env.reset("shelter-0_-3/seed-0")  # a new world forgets the old walls
    assert not built_cells(env.core)


def test_skills_started_at_different_times_do_not_disturb_each_other() -> None:
    env = party("collect-20-wood/seed-2", players=3)
    core = env.core
    queues = {
        0: ["collect(wood, 3)", "place(table)", "craft(wood_pickaxe)", "collect(stone, 2)"],
        1: ["collect(wood, 5)", "collect(sapling, 1)"],
        2: ["drink()", "collect(wood, 2)", "eat(cow)"],
    }
    results: dict[int, list[SkillResult]] = {i: [] for i in queues}
    running = {i: make_skill(core, i, queue.pop(0)) for i, queue in queues.items()}
    for _ in range(1_500):
        joint = []
        for i in range(3):
            skill = running.get(i)
            action = skill.next_action() if skill is not None else None
            while skill is not None and action is None:
                assert skill.result is not None
                results[i].append(skill.result)
                skill = make_skill(core, i, queues[i].pop(0)) if queues[i] else None
                action = skill.next_action() if skill is not None else None
            if skill is None:
                running.pop(i, None)
            else:
                running[i] = skill
            joint.append(action or "noop")
        if not running:
            break
        core.step(joint)
    assert not running
    assert [len(r) for r in results.values()] == [4, 2, 3]
    assert all(r.success for rs in results.values() for r in rs), results
    assert core.players[0].inventory["wood_pickaxe"] == 1
