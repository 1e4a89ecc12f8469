"""Version 1 rooms: the sparse rooms LoreKit generated before issue 28.

The task's object, its target and lamp, and 6-14 other object types; no
sliceable facts, no objects in bowls, desk lamps only. The ``dev`` split is
still made of these (``generator_version: 1`` in ``data.yaml``) because the
prompts' worked examples and the agents' tests replay dev games word for
word; new games use :mod:`lorekit.envs.alfworld.scene`. Same seed, same bytes
as before: do not change this module, retire it once dev moves to version 2.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from lorekit.envs.alfworld import rules
from lorekit.envs.alfworld.scene import _new_id, _new_location, mangle
from lorekit.envs.alfworld.world import STATE_CHANGE, World

_APPLIANCE = {"clean": "SinkBasin", "hot": "Microwave", "cool": "Fridge"}
_PROPERTY = {"clean": "Cleanable", "hot": "Heatable", "cool": "Coolable"}


class Scene:
    """A sampled room: receptacles, objects and the task, before naming."""

    def __init__(self, plan_: rules.FloorPlan, goal_types: tuple[str, str, str], task_type: str):
        self.plan = plan_
        self.task_type = task_type
        self.obj, self.recep, self.toggle = goal_types
        self.receptacles: dict[str, str] = {}  # id -> type
        self.points: dict[str, str] = {}  # receptacle id -> location id
        self.objects: dict[str, str] = {}  # id -> type
        self.inside: dict[str, str] = {}  # object id -> receptacle id
        self.agent_at = ""

    @classmethod
    def sample(cls, rng: random.Random, plan_: rules.FloorPlan, task_type: str) -> Scene | None:
        receptacles, points = _receptacles(rng, plan_)
        present = set(receptacles.values())
        goal = _choose_goal(rng, plan_, present, task_type)
        if goal is None:
            return None
        scene = cls(plan_, goal, task_type)
        scene.receptacles, scene.points = receptacles, points
        if not scene._place_objects(rng):
            return None
        used = set(points.values())
        scene.agent_at = _new_location(rng, used)
        return scene

    def _place_objects(self, rng: random.Random) -> bool:
        cfg = _settings()
        taken: set[str] = set()
        change = STATE_CHANGE.get(self.task_type)
        avoid = {self.recep}
        if change is not None:
            avoid.add(_APPLIANCE[change[0]])
        spots = self._spots(self.obj, avoid)
        if not spots:
            return False
        key = (
            "target_instances_two"
            if self.task_type == "pick_two_obj_and_place"
            else "target_instances"
        )
        for _ in range(rng.randint(*cfg[key])):
            self._add(rng, self.obj, rng.choice(spots), taken)
        if self.toggle:
            lamp_spots = [
                r
                for r in sorted(self.receptacles)
                if self.receptacles[r] in cfg["lamp_receptacles"]
            ]
            if not lamp_spots:
                return False
            self._add(rng, self.toggle, rng.choice(lamp_spots), taken)
        others = sorted(
            t
            for t in self.plan.object_types & rules.pickupable()
            if t not in (self.obj, self.toggle)
        )
        rng.shuffle(others)
        low, high = cfg["clutter_types"]
        for otype in others[: rng.randint(low, high)]:
            options = self._spots(otype, set())
            for _ in range(rng.randint(*cfg["clutter_instances"])) if options else ():
                self._add(rng, otype, rng.choice(options), taken)
        return True

    def _spots(self, otype: str, avoid: set[str]) -> list[str]:
        return [
            r
            for r in sorted(self.receptacles)
            if self.receptacles[r] not in avoid and rules.accepts(self.receptacles[r], otype)
        ]

    def _add(self, rng: random.Random, otype: str, recep: str, taken: set[str]) -> None:
        ident = _new_id(rng, otype, taken)
        self.objects[ident] = otype
        self.inside[ident] = recep

    def world(self, names: Mapping[str, str]) -> World:
        cfg_lamp = self.toggle
        return World(
            recep_type={names[r]: t.lower() for r, t in self.receptacles.items()},
            obj_type={names[o]: t.lower() for o, t in self.objects.items()},
            location={names[r]: self.points[r] for r in self.receptacles},
            openable={names[r] for r, t in self.receptacles.items() if rules.openable(t)},
            inside={names[o]: names[r] for o, r in self.inside.items()},
            can_contain={
                t.lower(): {o.lower() for o in set(self.objects.values()) if rules.accepts(t, o)}
                for t in set(self.receptacles.values())
            },
            pickupable={names[o] for o, t in self.objects.items() if t != cfg_lamp},
            cleanable={
                names[o] for o, t in self.objects.items() if rules.has_property(t, "Cleanable")
            },
            heatable={
                names[o] for o, t in self.objects.items() if rules.has_property(t, "Heatable")
            },
            coolable={
                names[o] for o, t in self.objects.items() if rules.has_property(t, "Coolable")
            },
            toggleable={names[o] for o, t in self.objects.items() if t == cfg_lamp},
            agent_at=self.agent_at,
        )

    def problem(self, name: str) -> str:
        recep_types = sorted(set(self.receptacles.values()))
        obj_types = sorted(set(self.objects.values()))
        objs = sorted(self.objects)
        receps = sorted(self.receptacles)
        locations = sorted({*self.points.values(), self.agent_at})
        lines = [
            f"(define (problem {mangle(name)})",
            "(:domain alfred)",
            "(:objects",
            "    agent1 - agent",
        ]
        lines += [f"    {t}Type - otype" for t in obj_types]
        lines += [f"    {t}Type - rtype" for t in recep_types]
        lines += [f"    {mangle(o)} - object" for o in objs]
        lines += [f"    {mangle(r)} - receptacle" for r in receps]
        lines += [f"    {mangle(loc)} - location" for loc in locations]
        lines += ["    )", "(:init", f"    (atLocation agent1 {mangle(self.agent_at)})"]
        for r in receps:
            rtype = self.receptacles[r]
            lines.append(f"    (receptacleType {mangle(r)} {rtype}Type)")
            lines.append(f"    (receptacleAtLocation {mangle(r)} {mangle(self.points[r])})")
            if rules.openable(rtype):
                lines.append(f"    (openable {mangle(r)})")
        for o in objs:
            otype = self.objects[o]
            recep = self.inside[o]
            lines.append(f"    (objectType {mangle(o)} {otype}Type)")
            lines.append(f"    (inReceptacle {mangle(o)} {mangle(recep)})")
            lines.append(f"    (objectAtLocation {mangle(o)} {mangle(self.points[recep])})")
            facts = _object_facts(otype, self.toggle)
            lines += [f"    ({fact} {mangle(o)})" for fact in facts]
        for rtype in recep_types:
            lines += [
                f"    (canContain {rtype}Type {otype}Type)"
                for otype in obj_types
                if rules.accepts(rtype, otype)
            ]
        lines.append("    )")
        goal = rules.goal_pddl(self.task_type, self.obj, self.recep, self.toggle)
        return "\n".join(lines) + "\n" + goal.strip() + "\n"


def _object_facts(otype: str, lamp: str) -> list[str]:
    facts = [] if otype == lamp else ["pickupable"]
    for prop, fact in (
        ("Cleanable", "cleanable"),
        ("Heatable", "heatable"),
        ("Coolable", "coolable"),
    ):
        if rules.has_property(otype, prop):
            facts.append(fact)
    if rules.has_property(otype, "Toggleable"):
        facts.append("toggleable")
    if rules.movable(otype):
        facts.append("isReceptacleObject")
    return facts


def _choose_goal(
    rng: random.Random, plan_: rules.FloorPlan, present: set[str], task_type: str
) -> tuple[str, str, str] | None:
    """(object type, target receptacle type, lamp type) for ``task_type`` in this room."""
    cfg = _settings()
    change = STATE_CHANGE.get(task_type)
    objects = sorted(plan_.object_types & rules.pickupable())
    if change is not None:
        if _APPLIANCE[change[0]] not in present:
            return None
        objects = [o for o in objects if rules.has_property(o, _PROPERTY[change[0]])]
    if not objects:
        return None
    obj = rng.choice(objects)
    if task_type == "look_at_obj_in_light":
        lamp = str(cfg["lamp_type"])
        if lamp not in plan_.object_types or not present & set(cfg["lamp_receptacles"]):
            return None
        return obj, "", lamp
    excluded = set(cfg["excluded_targets"].get(task_type, [])) | set(cfg["excluded_targets"]["all"])
    targets = sorted(t for t in present if t not in excluded and rules.accepts(t, obj))
    if not targets:
        return None
    return obj, rng.choice(targets), ""


def _receptacles(
    rng: random.Random, plan_: rules.FloorPlan
) -> tuple[dict[str, str], dict[str, str]]:
    """Receptacle id -> type and id -> location id: the layout's, plus made-up ones."""
    static = rules.static_receptacles()
    types: dict[str, str] = {}
    points: dict[str, str] = {}
    for ident, (x, z, rot, hor) in sorted(plan_.receptacle_points.items()):
        rtype = rules.receptacle_type_of(ident)
        if rtype in static:
            types[ident] = rtype
            points[ident] = f"loc|{round(x / 0.25)}|{round(z / 0.25)}|{rot // 90}|{hor}"
    have = set(types.values())
    counts = rules.settings()["synthesized_receptacles"]
    taken = set(types)
    used = set(points.values())
    for rtype in sorted((plan_.object_types & static) - have):
        low, high = counts.get(rtype, counts["default"])
        for _ in range(rng.randint(low, high)):
            ident = _new_id(rng, rtype, taken)
            types[ident] = rtype
            points[ident] = _new_location(rng, used)
    return types, points


def _settings() -> Mapping[str, Any]:
    """``data.yaml``'s settings with its ``v1_rooms`` ones on top."""
    cfg = dict(rules.settings())
    cfg.update(cfg["v1_rooms"])
    return cfg
