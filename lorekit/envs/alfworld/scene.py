"""One sampled room for a generated ALFWorld game: receptacles, objects, task.

The room is filled the way ALFRED set up its scenes before ALFWorld wrote
them down: every object type of the floor plan that can be carried, one to
three times (the task's object up to four), each where the rule tables allow,
some inside a bowl, mug or pot standing there; the floor plan's lamps and
house plants in their usual places. Then the problem in the PDDL form ALFRED
wrote (AI2-THOR ids such as ``Mug|+00.32|+00.91|-02.71`` mangled to PDDL
names) and a :class:`~lorekit.envs.alfworld.world.World` for the planner,
named the way alfworld's ``Demangler`` will name things in the engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from lorekit.envs.alfworld import rules
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
        self.nested: dict[str, str] = {}  # object id -> the movable receptacle it is in
        self.fixed: set[str] = set()  # objects that cannot be carried (lamps, plants)
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
        cfg = rules.settings()
        taken: set[str] = set()
        empty = set(cfg["empty_receptacles"].get(self.task_type, []))
        # The task's object never starts where the task wants it, nor in its appliance.
        avoid = {self.recep, *empty}
        change = STATE_CHANGE.get(self.task_type)
        if change is not None:
            avoid.add(_APPLIANCE[change[0]])
        if not self._spots(self.obj, avoid):
            return False
        two = self.task_type == "pick_two_obj_and_place"
        counts = {
            self.obj: rng.randint(*cfg["target_instances_two" if two else "target_instances"])
        }
        for otype in sorted(self.plan.object_types & rules.pickupable() - {self.obj}):
            counts[otype] = rng.randint(*cfg["other_instances"])
        # Movable receptacles first, so smaller things can go inside them.
        order = sorted(counts, key=lambda t: (not rules.movable(t), t))
        room = int(cfg["receptacle_capacity"])
        for otype in order:
            spots = self._spots(otype, avoid if otype == self.obj else empty)
            for _ in range(counts[otype]):
                spots = [r for r in spots if self._count(r) < room]
                if spots:
                    self._add(rng, otype, _weighted(rng, spots, self.receptacles), taken)
        self._nest(rng, set(counts) - {self.obj}, empty, avoid)
        return self._place_fixed(rng, taken)

    def _nest(self, rng: random.Random, others: set[str], empty: set[str], avoid: set[str]) -> None:
        """Move some small objects into a bowl, mug, ... that accepts them; they stay
        in that one's receptacle too, as AI2-THOR lists every parent."""
        share = float(rules.settings()["nested_share"])
        limit = int(rules.settings()["view_limit"])
        holders = sorted(o for o, t in self.objects.items() if rules.movable(t))
        for ident in sorted(self.objects):
            otype = self.objects[ident]
            if rules.movable(otype) or rng.random() >= share:
                continue
            banned = empty if otype in others else avoid
            options = [
                h
                for h in holders
                if rules.accepts(self.objects[h], otype)
                and self.receptacles[self.inside[h]] not in banned
                and (self.inside[h] == self.inside[ident] or self._count(self.inside[h]) < limit)
            ]
            if options:
                holder = rng.choice(options)
                self.nested[ident] = holder
                self.inside[ident] = self.inside[holder]

    def _place_fixed(self, rng: random.Random, taken: set[str]) -> bool:
        """Lamps and plants: in every game where the floor plan has them."""
        cfg = rules.settings()
        fixed = {**cfg["fixtures"], **cfg["lamps"]}
        for otype in sorted(self.plan.object_types & set(fixed)):
            spots = [r for r in sorted(self.receptacles) if self.receptacles[r] in fixed[otype]]
            if not spots:
                if otype == self.toggle:
                    return False
                continue
            self.fixed.add(self._add(rng, otype, rng.choice(spots), taken))
        return True

    def _count(self, recep: str) -> int:
        return sum(1 for r in self.inside.values() if r == recep)

    def _spots(self, otype: str, avoid: set[str]) -> list[str]:
        return [
            r
            for r in sorted(self.receptacles)
            if self.receptacles[r] not in avoid and rules.accepts(self.receptacles[r], otype)
        ]

    def _add(self, rng: random.Random, otype: str, recep: str, taken: set[str]) -> str:
        ident = _new_id(rng, otype, taken)
        self.objects[ident] = otype
        self.inside[ident] = recep
        return ident

    def world(self, names: Mapping[str, str]) -> World:
        def having(prop: str) -> set[str]:
            return {names[o] for o, t in self.objects.items() if rules.has_property(t, prop)}

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
            pickupable={names[o] for o in self.objects if o not in self.fixed},
            cleanable=having("Cleanable"),
            heatable=having("Heatable"),
            coolable=having("Coolable"),
            toggleable=having("Toggleable"),
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
            facts = _object_facts(otype, o in self.fixed)
            lines += [f"    ({fact} {mangle(o)})" for fact in facts]
            if o in self.nested:
                lines.append(f"    (inReceptacleObject {mangle(o)} {mangle(self.nested[o])})")
        for rtype in recep_types:
            lines += [
                f"    (canContain {rtype}Type {otype}Type)"
                for otype in obj_types
                if rules.accepts(rtype, otype)
            ]
        lines.append("    )")
        goal = rules.goal_pddl(self.task_type, self.obj, self.recep, self.toggle)
        return "\n".join(lines) + "\n" + goal.strip() + "\n"


def _object_facts(otype: str, fixed: bool) -> list[str]:
    facts = [] if fixed else ["pickupable"]
    for prop in ("Cleanable", "Heatable", "Coolable", "Toggleable", "Sliceable"):
        if rules.has_property(otype, prop):
            facts.append(prop.lower())
    if rules.movable(otype):
        facts.append("isReceptacleObject")
    return facts


def _weighted(rng: random.Random, spots: list[str], types: Mapping[str, str]) -> str:
    """One of ``spots``, wide tops (countertops, tables) more often than shelves and drawers."""
    weights = rules.settings()["placement_weight"]
    return rng.choices(spots, weights=[float(weights.get(types[r], 1)) for r in spots])[0]


def _choose_goal(
    rng: random.Random, plan_: rules.FloorPlan, present: set[str], task_type: str
) -> tuple[str, str, str] | None:
    """(object type, target receptacle type, lamp type) for ``task_type`` in this room."""
    cfg = rules.settings()
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
        lamps = cfg["lamps"]
        usable = sorted(t for t in plan_.object_types & set(lamps) if present & set(lamps[t]))
        if not usable:
            return None
        return obj, "", rng.choice(usable)
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
    implied = rules.settings()["implied_receptacles"]
    listed = plan_.object_types | {implied[t] for t in plan_.object_types if t in implied}
    for rtype in sorted((listed & static) - have):
        low, high = counts.get(rtype, counts["default"])
        for _ in range(rng.randint(low, high)):
            ident = _new_id(rng, rtype, taken)
            types[ident] = rtype
            points[ident] = _new_location(rng, used)
    return types, points


def _new_id(rng: random.Random, otype: str, taken: set[str]) -> str:
    """An AI2-THOR style id (``Mug|+00.32|+00.91|-02.71``) not used yet."""
    while True:
        coords = "|".join(f"{rng.uniform(-4, 4):+06.2f}" for _ in range(3))
        prefix = {"SinkBasin": "Sink", "BathtubBasin": "Bathtub"}.get(otype)
        ident = f"{prefix}|{coords}|{otype}" if prefix else f"{otype}|{coords}"
        if ident not in taken:
            taken.add(ident)
            return ident


def _new_location(rng: random.Random, used: set[str]) -> str:
    while True:
        x, z, rot = rng.randint(-20, 20), rng.randint(-20, 20), rng.randint(0, 3)
        loc = f"loc|{x}|{z}|{rot}|{rng.choice((0, 30, 45, 60))}"
        if loc not in used:
            used.add(loc)
            return loc


def mangle(ident: str) -> str:
    """AI2-THOR id -> PDDL name, the way ALFRED wrote its problems."""
    out = ident
    for old, new in (
        ("-", "_minus_"),
        ("|", "_bar_"),
        ("+", "_plus_"),
        (".", "_dot_"),
        (",", "_comma_"),
    ):
        out = out.replace(old, new)
    return out


def display_names(idents: Iterable[str]) -> dict[str, str]:
    """AI2-THOR id -> the name players see ("mug 2"), numbered the way alfworld's
    ``Demangler`` numbers them: per class, over the engine's lower-case names in
    sorted order, the first getting the highest number."""
    mangled = {ident: mangle(ident).lower() for ident in idents}
    by_class: dict[str, list[str]] = {}
    for ident, name in mangled.items():
        by_class.setdefault(_class_of(name), []).append(ident)
    out: dict[str, str] = {}
    for cls, members in by_class.items():
        ordered = sorted(members, key=lambda i: mangled[i])
        for number, ident in zip(range(len(ordered), 0, -1), ordered, strict=True):
            out[ident] = f"{cls} {number}"
    return out


def _class_of(mangled_name: str) -> str:
    head = mangled_name.split("_bar_", 1)[0]
    return head + "basin" if "basin" in mangled_name else head
