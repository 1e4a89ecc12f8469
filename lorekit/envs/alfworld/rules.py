"""The rule tables, floor plans and game files the alfworld wheel ships.

Everything here is read from the installed ``alfworld`` package (pinned to
0.4.2 by the ``alfworld`` extra), so the generated games follow ALFWorld's own
rules: what each receptacle may contain, what can be cleaned, heated, cooled
or switched on, each task type's PDDL goal and wording, and the receptacles
and object types of each AI2-THOR floor plan.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import alfworld
import alfworld.gen.constants as constants
import alfworld.gen.goal_library as goal_library

from lorekit import yamlio

PACKAGE_DIR = Path(alfworld.__file__).parent
DOMAIN_FILE = PACKAGE_DIR / "data" / "alfred.pddl"
GRAMMAR_FILE = PACKAGE_DIR / "data" / "alfred.twl2"
LAYOUTS_DIR = PACKAGE_DIR / "gen" / "layouts"
DATA_FILE = Path(__file__).with_name("data.yaml")


@functools.cache
def settings() -> Mapping[str, Any]:
    """LoreKit's own generation settings (``data.yaml``)."""
    data: dict[str, Any] = yamlio.safe_load(
        DATA_FILE.read_text(encoding="utf-8"), source=str(DATA_FILE)
    )
    return data


@functools.cache
def domain_text() -> str:
    return DOMAIN_FILE.read_text(encoding="utf-8")


@functools.cache
def grammar_text() -> str:
    return GRAMMAR_FILE.read_text(encoding="utf-8")


def room_type(floor_plan: int) -> str:
    """Kitchen, LivingRoom, Bedroom or Bathroom, by ALFRED's numbering."""
    for name, numbers in constants.SCENE_TYPE.items():
        if floor_plan in numbers:
            return str(name)
    raise ValueError(f"FloorPlan{floor_plan} is in no ALFRED room type")


def valid_rooms(task_type: str) -> set[str]:
    """Room types ALFRED generates ``task_type`` in."""
    return set(constants.GOALS_VALID[task_type])


@functools.cache
def static_receptacles() -> frozenset[str]:
    """Receptacle types that stay put (not bowls, mugs, boxes, ...)."""
    return frozenset(constants.VAL_RECEPTACLE_OBJECTS) - frozenset(constants.MOVABLE_RECEPTACLES)


@functools.cache
def pickupable() -> frozenset[str]:
    """Object types some receptacle may hold, whole (not sliced): the ones that can be carried."""
    held: set[str] = set()
    for contents in constants.VAL_RECEPTACLE_OBJECTS.values():
        held |= {o for o in contents if not o.endswith("Sliced")}
    return frozenset(held)


def accepts(recep_type: str, obj_type: str) -> bool:
    return obj_type in constants.VAL_RECEPTACLE_OBJECTS.get(recep_type, ())


def has_property(obj_type: str, prop: str) -> bool:
    """``prop`` is one of Cleanable, Heatable, Coolable, Toggleable."""
    return obj_type in constants.VAL_ACTION_OBJECTS[prop]


def movable(obj_type: str) -> bool:
    """Bowls, mugs, pans, ...: objects that are receptacles too."""
    return obj_type in constants.MOVABLE_RECEPTACLES_SET


def openable(recep_type: str) -> bool:
    return recep_type in constants.OPENABLE_CLASS_SET


def goal_pddl(task_type: str, obj: str, recep: str, toggle: str) -> str:
    """The PDDL goal of ``task_type`` (it also closes the problem's ``define``)."""
    text: str = goal_library.gdict[task_type]["pddl"]
    return text.format(obj=obj, recep=recep, toggle=toggle, mrecep="").replace("#", "-")


def goal_templates(task_type: str) -> list[str]:
    return list(goal_library.gdict[task_type]["templates"])


@dataclass(frozen=True)
class FloorPlan:
    """One AI2-THOR floor plan as the wheel describes it."""

    number: int
    room: str
    object_types: frozenset[str]
    receptacle_points: Mapping[str, tuple[float, float, int, int]]
    """Receptacle id (``Cabinet|+00.68|+00.50|-02.20``) -> where the agent stands to use it."""


@functools.cache
def floor_plans() -> tuple[FloorPlan, ...]:
    """Every floor plan with both an objects list and a receptacle layout, by number."""
    plans = []
    for objects_file in LAYOUTS_DIR.glob("FloorPlan*-objects.json"):
        number = int(objects_file.name[len("FloorPlan") :].split("-")[0])
        points_file = LAYOUTS_DIR / f"FloorPlan{number}-openable.json"
        if not points_file.exists():
            continue
        objects = json.loads(objects_file.read_text(encoding="utf-8"))
        points = json.loads(points_file.read_text(encoding="utf-8"))
        plans.append(
            FloorPlan(
                number,
                room_type(number),
                frozenset(objects),
                {k: (float(v[0]), float(v[1]), int(v[2]), int(v[3])) for k, v in points.items()},
            )
        )
    return tuple(sorted(plans, key=lambda p: p.number))


def receptacle_type_of(recep_id: str) -> str:
    """``Sink|..|SinkBasin`` -> SinkBasin; ``Cabinet|...`` -> Cabinet."""
    parts = recep_id.split("|")
    return parts[-1] if len(parts) > 4 else parts[0]
