"""Generate ALFWorld games offline, from the data the alfworld wheel ships.

ALFWorld's official games are downloaded at install time, which these
machines cannot do. This module writes games in the same format (a directory
per game with ``game.tw-pddl`` and ``traj_data.json``), for all six task
types, over the wheel's 120 AI2-THOR floor plans:

- the room's receptacles are the floor plan's own (its layout lists their ids
  and where to stand); receptacle types the room has but the layout omits
  (stove burners, toasters, ...) are added with made-up ids;
- objects go only where ALFWorld's rule tables allow (``canContain``), and
  only object types the room has, plus the task's object;
- the goal is ALFWorld's PDDL goal for the task type, its text one of
  ALFWorld's templates;
- every game is checked solvable by the planner, and its walkthrough is
  stored in the game file. ``verify=True`` also plays the walkthrough through
  the real engine and requires ``won`` exactly at its end.

Everything is drawn from a ``random.Random`` seeded by text, so the same
seed gives byte-identical files on any machine and any ``PYTHONHASHSEED``.
These are *generated* games, not ALFWorld's official ones: their rooms and
rules are ALFWorld's, their object placements are LoreKit's.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit.envs.alfworld import rules
from lorekit.envs.alfworld.planner import Unsolvable, plan
from lorekit.envs.alfworld.scene import Scene, display_names
from lorekit.envs.alfworld.text import Syntax, grammar_for_syntax, render
from lorekit.envs.alfworld.world import TASK_TYPES, Goal

GENERATOR_VERSION = 3
"""Bumped whenever the same seed would give different games (3: countertops, dining
tables and desks hold the most; 2: rooms as full as the official games'; 1: sparse
rooms, the task's object and a few other types)."""

MAX_ATTEMPTS = 200


class GenerationError(RuntimeError):
    """No valid game could be made from the given seed and task type."""


@dataclass(frozen=True)
class GeneratedGame:
    """One game: its directory name (``task dir/trial``) and its two files."""

    path: str
    game: Mapping[str, Any]
    traj_data: Mapping[str, Any]

    @property
    def walkthrough(self) -> list[str]:
        return list(self.game["walkthrough"])

    def write(self, root: Path) -> Path:
        """Write the two files under ``root/path``; returns the game directory."""
        folder = root / self.path
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "game.tw-pddl").write_text(dump_json(self.game), encoding="utf-8")
        (folder / "traj_data.json").write_text(dump_json(self.traj_data), encoding="utf-8")
        return folder


def dump_json(data: Mapping[str, Any]) -> str:
    """The one JSON form generated files use (sorted keys: byte-reproducible)."""
    return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def rng_for(*parts: object) -> random.Random:
    """A generator seeded by text, independent of Python's hash seed."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def generate_games(
    n: int,
    seed: int,
    *,
    task_types: Sequence[str] = TASK_TYPES,
    syntax: Syntax = "move",
    floor_plans: Iterable[int] | None = None,
    label: str = "gen",
    progress: Callable[[int, int], None] | None = None,
) -> list[GeneratedGame]:
    """``n`` games cycling through ``task_types`` (n=12 over six types: two each);
    ``progress(done, n)`` after each game."""
    if n < 0:
        raise ValueError(f"n must be at least 0, got {n}")
    unknown = [t for t in task_types if t not in TASK_TYPES]
    if unknown or not task_types:
        raise ValueError(
            f"unknown task types {unknown or task_types}; known: {', '.join(TASK_TYPES)}"
        )
    plans = _plans(floor_plans)
    games = []
    for i in range(n):
        kind = task_types[i % len(task_types)]
        games.append(generate_game(seed, kind, i, syntax=syntax, plans=plans, label=label))
        if progress is not None:
            progress(i + 1, n)
    return games


def _plans(numbers: Iterable[int] | None) -> tuple[rules.FloorPlan, ...]:
    every = rules.floor_plans()
    if numbers is None:
        return every
    wanted = set(numbers)
    chosen = tuple(p for p in every if p.number in wanted)
    missing = wanted - {p.number for p in chosen}
    if missing:
        raise ValueError(f"no layout in the alfworld wheel for floor plans {sorted(missing)}")
    return chosen


def generate_game(
    seed: int,
    task_type: str,
    index: int,
    *,
    syntax: Syntax = "move",
    plans: Sequence[rules.FloorPlan] | None = None,
    label: str = "gen",
) -> GeneratedGame:
    """Game number ``index`` of ``task_type`` for ``seed`` (tries up to MAX_ATTEMPTS rooms)."""
    plans = tuple(plans) if plans is not None else rules.floor_plans()
    rooms = [p for p in plans if p.room in rules.valid_rooms(task_type)]
    if not rooms:
        raise GenerationError(f"none of the chosen floor plans suits {task_type}")
    rng = rng_for("alfworld", GENERATOR_VERSION, seed, label, task_type, index)
    for _attempt in range(MAX_ATTEMPTS):
        scene = Scene.sample(rng, rng.choice(rooms), task_type)
        if scene is None:
            continue
        try:
            return _finish(scene, rng, seed, index, syntax, label)
        except Unsolvable:
            continue
    raise GenerationError(f"no solvable {task_type} game after {MAX_ATTEMPTS} rooms (seed {seed})")


def _finish(
    scene: Scene, rng: random.Random, seed: int, index: int, syntax: Syntax, label: str
) -> GeneratedGame:
    """Name, plan and write down a sampled room; Unsolvable if no plan wins."""
    names = display_names([*scene.receptacles, *scene.objects])
    goal = Goal(scene.task_type, scene.obj.lower(), scene.recep.lower(), scene.toggle.lower())
    world = scene.world(names)
    if world.satisfied(goal):
        raise Unsolvable("the goal holds before the first step")
    walkthrough = [render(act, syntax) for act in plan(world, goal)]
    template = rng.choice(rules.goal_templates(scene.task_type))
    task_text = template.format(
        obj=scene.obj.lower(), recep=scene.recep.lower(), toggle=scene.toggle.lower(), mrecep=""
    )
    grammar = grammar_for_syntax(rules.grammar_text(), syntax).replace("UNKNOWN GOAL", task_text)
    trial = f"trial_{label}_{seed}_{index:05d}"
    task_dir = f"{scene.task_type}-{scene.obj}-None-{scene.recep or 'None'}-{scene.plan.number}"
    game = {
        "pddl_domain": rules.domain_text(),
        "grammar": grammar,
        "pddl_problem": scene.problem(trial),
        "solvable": True,
        "walkthrough": walkthrough,
    }
    traj = {
        "task_type": scene.task_type,
        "task_id": trial,
        "pddl_params": {
            "object_target": scene.obj,
            "parent_target": scene.recep,
            "toggle_target": scene.toggle,
            "mrecep_target": "",
            "object_sliced": False,
        },
        "scene": {"floor_plan": f"FloorPlan{scene.plan.number}", "scene_num": scene.plan.number},
        "turk_annotations": {"anns": [{"task_desc": task_text}]},
        "lorekit": {
            "generated": True,
            "generator_version": GENERATOR_VERSION,
            "seed": seed,
            "index": index,
            "split_label": label,
            "syntax": syntax,
            "goal_text": task_text,
        },
    }
    return GeneratedGame(f"{task_dir}/{trial}", game, traj)
