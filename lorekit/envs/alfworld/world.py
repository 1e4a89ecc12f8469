"""A plain-Python picture of one ALFWorld state, for the expert and the generator.

The engine (TextWorld's PDDL state) is the truth; this is a small, typed copy
of the parts that matter for solving a task: where the agent is, what it holds,
which object is in which receptacle, which receptacles are open, and which
objects are clean, hot, cool or switched on. The generator builds one from the
scene it samples; the env rebuilds one from the engine's facts at any moment,
so the expert can plan from states the walkthrough never visited.

Names are the ones players see ("mug 2", "countertop 1") and types are
lower-case ALFRED class names ("mug", "countertop", "sinkbasin").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
"""ALFWorld's six task types, in the order ALFWorld numbers them (1 to 6)."""

#: The state change each task type asks for, and the receptacle type that makes it.
STATE_CHANGE = {
    "pick_clean_then_place_in_recep": ("clean", "sinkbasin"),
    "pick_heat_then_place_in_recep": ("hot", "microwave"),
    "pick_cool_then_place_in_recep": ("cool", "fridge"),
}


@dataclass(frozen=True)
class Goal:
    """What a task asks for, in lower-case type names.

    ``recep`` is empty for ``look_at_obj_in_light``; ``toggle`` is the lamp
    type for that task and empty otherwise.
    """

    task_type: str
    obj: str
    recep: str = ""
    toggle: str = ""

    def __post_init__(self) -> None:
        if self.task_type not in TASK_TYPES:
            raise ValueError(f"unknown ALFWorld task type {self.task_type!r}; known: {TASK_TYPES}")

    @classmethod
    def from_params(cls, task_type: str, params: Mapping[str, Any]) -> Goal:
        """From a ``traj_data.json``'s ``task_type`` and ``pddl_params``."""

        def low(key: str) -> str:
            value = params.get(key) or ""
            return str(value).lower()

        return cls(task_type, low("object_target"), low("parent_target"), low("toggle_target"))


@dataclass
class World:
    """One state, mutable so the planner can simulate its own plan on a copy."""

    recep_type: dict[str, str]
    obj_type: dict[str, str]
    location: dict[str, str]
    """Receptacle name -> location id (several receptacles may share one)."""
    openable: set[str] = field(default_factory=set)
    opened: set[str] = field(default_factory=set)
    inside: dict[str, str] = field(default_factory=dict)
    """Object name -> the receptacle it is in (objects held are not here)."""
    can_contain: dict[str, set[str]] = field(default_factory=dict)
    """Receptacle type -> object types it accepts."""
    pickupable: set[str] = field(default_factory=set)
    cleanable: set[str] = field(default_factory=set)
    heatable: set[str] = field(default_factory=set)
    coolable: set[str] = field(default_factory=set)
    toggleable: set[str] = field(default_factory=set)
    clean: set[str] = field(default_factory=set)
    hot: set[str] = field(default_factory=set)
    cool: set[str] = field(default_factory=set)
    toggled: set[str] = field(default_factory=set)
    agent_at: str = ""
    """The agent's location id."""
    holding: str | None = None

    def copy(self) -> World:
        """A deep enough copy: the mutable state is copied, the static tables shared."""
        return dataclasses.replace(
            self,
            opened=set(self.opened),
            inside=dict(self.inside),
            clean=set(self.clean),
            hot=set(self.hot),
            cool=set(self.cool),
            toggled=set(self.toggled),
        )

    # -- queries -------------------------------------------------------------

    def receptacles_of(self, rtype: str) -> list[str]:
        """Receptacles of type ``rtype``, in name order ("cabinet 1" before "cabinet 2")."""
        return sorted((r for r, t in self.recep_type.items() if t == rtype), key=name_key)

    def objects_of(self, otype: str) -> list[str]:
        return sorted((o for o, t in self.obj_type.items() if t == otype), key=name_key)

    def at(self, recep: str) -> bool:
        """Whether the agent stands where ``recep`` is."""
        return self.location.get(recep) == self.agent_at

    def is_closed(self, recep: str) -> bool:
        return recep in self.openable and recep not in self.opened

    def accepts(self, recep: str, obj: str) -> bool:
        return self.obj_type.get(obj, "") in self.can_contain.get(self.recep_type[recep], set())

    def has_state(self, obj: str, state: str) -> bool:
        return obj in {"clean": self.clean, "hot": self.hot, "cool": self.cool}[state]

    def satisfied(self, goal: Goal) -> bool:
        """Whether ``goal`` holds, by the same conditions as ALFWorld's PDDL goals."""
        if goal.task_type == "look_at_obj_in_light":
            holding = self.holding is not None and self.obj_type[self.holding] == goal.obj
            return holding and any(
                lamp in self.toggled and self.at(self.inside.get(lamp, ""))
                for lamp in self.objects_of(goal.toggle)
            )
        placed = self.placed(goal)
        if goal.task_type == "pick_two_obj_and_place":
            return any(len(objs) >= 2 for objs in placed.values())
        return any(placed.values())

    def placed(self, goal: Goal) -> dict[str, list[str]]:
        """Target receptacle -> the objects in it that already count for ``goal``."""
        change = STATE_CHANGE.get(goal.task_type)
        out: dict[str, list[str]] = {r: [] for r in self.receptacles_of(goal.recep)}
        for obj, recep in sorted(self.inside.items(), key=lambda kv: name_key(kv[0])):
            counts = change is None or self.has_state(obj, change[0])
            if recep in out and self.obj_type[obj] == goal.obj and counts:
                out[recep].append(obj)
        return out


def name_key(name: str) -> tuple[str, int]:
    """Sort key for "cabinet 10" after "cabinet 9"."""
    base, _, number = name.rpartition(" ")
    return (base, int(number)) if number.isdigit() else (name, 0)


def world_from_facts(facts: Iterable[tuple[str, tuple[str, ...]]]) -> World:
    """Build a :class:`World` from ``(predicate, argument names)`` pairs.

    Predicates are ALFRED's, lower-case (as Fast Downward reports them);
    arguments are display names for receptacles and objects and lower-case
    ``...type`` names for types.
    """
    world = World(recep_type={}, obj_type={}, location={})
    sets = {
        "openable": world.openable,
        "opened": world.opened,
        "pickupable": world.pickupable,
        "cleanable": world.cleanable,
        "heatable": world.heatable,
        "coolable": world.coolable,
        "toggleable": world.toggleable,
        "isclean": world.clean,
        "ishot": world.hot,
        "iscool": world.cool,
        "istoggled": world.toggled,
    }
    for predicate, args in facts:
        if predicate in sets and len(args) == 1:
            sets[predicate].add(args[0])
        elif predicate == "receptacletype":
            world.recep_type[args[0]] = _type_name(args[1])
        elif predicate == "objecttype":
            world.obj_type[args[0]] = _type_name(args[1])
        elif predicate == "receptacleatlocation":
            world.location[args[0]] = args[1]
        elif predicate == "inreceptacle":
            world.inside[args[0]] = args[1]
        elif predicate == "cancontain":
            world.can_contain.setdefault(_type_name(args[0]), set()).add(_type_name(args[1]))
        elif predicate == "atlocation":
            world.agent_at = args[1]
        elif predicate == "holds":
            world.holding = args[1]
    # A receptacle listed by type but never placed cannot be visited; drop it.
    world.recep_type = {r: t for r, t in world.recep_type.items() if r in world.location}
    return world


def _type_name(name: str) -> str:
    low = name.lower()
    return low[: -len("type")] if low.endswith("type") else low
