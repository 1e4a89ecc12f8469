"""The skill controllers behind :func:`lorekit.agents.teams.world.skills.make_skill`.

One class per skill on :class:`~lorekit.agents.teams.world.skills_base.SkillBase`:
``check`` says whether the skill has ended (its goal reached, or something it
cannot fix: a missing tool, a missing station), ``plan`` picks this tick's
action with the shared navigator. Gains are measured on the player's own
crafter counters, so a full inventory (crafter caps items at 9) and other
players working nearby do not confuse them.
"""

from __future__ import annotations

from crafter import constants, objects

from lorekit.agents.teams.world.skills_base import (
    FULL,
    Skill,
    SkillBase,
    SkillCall,
    arity,
    built_cells,
    canonical_item,
    cell_arg,
    choice,
    error,
    inventory_text,
    message,
    skill_data,
)
from lorekit.envs.crafter.core import CrafterCore
from lorekit.envs.crafter.navigation import WALKABLE, Cell
from lorekit.envs.crafter.textobs import thing_name


class Collect(SkillBase):
    """collect(material, [count]): gain ``count`` of a material."""

    name = "collect"

    def __init__(self, core: CrafterCore, player: int, call: SkillCall) -> None:
        super().__init__(core, player, call)
        arity(call, 1, 2)
        sources: dict[str, str] = dict(skill_data()["sources"])
        self.item = choice(call, canonical_item(call.args[0]), list(sources))
        count = call.args[1] if len(call.args) == 2 else 1
        limit = int(skill_data()["max_count"])
        if not isinstance(count, int) or not 1 <= count <= limit:
            raise error("count", call=call, limit=limit)
        self.count = count
        self.source = sources[self.item]
        budget = skill_data()["skills"][self.name]["budget"]
        per_unit = budget["per_sapling"] if self.item == "sapling" else budget["per_unit"]
        self.budget += int(per_unit) * self.count
        self._counter = f"collect_{self.item}"
        self._start = self.counter(self._counter)

    def gained(self) -> int:
        return self.counter(self._counter) - self._start

    def progress(self) -> str:
        return message("collect_progress", gained=self.gained(), count=self.count, item=self.item)

    def check(self) -> tuple[bool, str] | None:
        inv = self.inventory
        if self.gained() >= self.count:
            text = message(
                "collected", count=self.gained(), item=self.item, inventory=inventory_text(inv)
            )
            return True, text
        tools = dict(constants.collect[self.source]["require"])
        if any(inv[k] < v for k, v in tools.items()):
            return False, message(
                "needs_tool", tools=", ".join(tools), item=self.item, inventory=inventory_text(inv)
            )
        return None

    def plan(self) -> str | None:
        if self.item == "sapling":
            action = self.nav.face_open(lambda c: self.nav.material(c) == "grass", "do")
        else:
            matches, built = self.nav.matcher(self.source), self.nav.protected
            action = self.nav.face_and(lambda c: matches(c) and c not in built, "do", recheck=True)
        return self.go(
            action, lambda: message("out_of_reach", thing=self.source, progress=self.progress())
        )


class Craft(SkillBase):
    """craft(item): make a tool at a table (and furnace), never gathering."""

    name = "craft"

    def __init__(self, core: CrafterCore, player: int, call: SkillCall) -> None:
        super().__init__(core, player, call)
        arity(call, 1, 1)
        self.item = choice(call, canonical_item(call.args[0]), list(constants.make))
        info = constants.make[self.item]
        self.uses: dict[str, int] = dict(info["uses"])
        self.stations: list[str] = list(info["nearby"])
        self._start = self.counter(f"make_{self.item}")
        self._tries = 0

    def progress(self) -> str:
        return message("craft_progress", stations=" and ".join(self.stations), item=self.item)

    def _no_station(self) -> str:
        return message("needs_station", stations=" and ".join(self.stations), item=self.item)

    def check(self) -> tuple[bool, str] | None:
        inv = inventory_text(self.inventory)
        if self.counter(f"make_{self.item}") > self._start:
            return True, message("made", item=self.item, inventory=inv)
        missing = self._missing(self.uses)
        if missing:
            return False, message(
                "needs_items", missing=missing, verb="make", item=self.item, inventory=inv
            )
        if self._tries > 2:
            return False, message("no_effect", action=f"make_{self.item}")
        return None

    def plan(self) -> str | None:
        def near(cell: Cell) -> bool:
            return self._stations_near(self.stations, cell)

        if near(self.nav.pos()):
            self._tries += 1
            return f"make_{self.item}"
        return self.go(self._walk(near), self._no_station)


class Place(SkillBase):
    """place(item, [x, y]): put a table, furnace, stone or plant on a cell."""

    name = "place"

    def __init__(self, core: CrafterCore, player: int, call: SkillCall) -> None:
        super().__init__(core, player, call)
        if len(call.args) == 2:
            arity(call, 1, 1)  # x without y: report the expected shape
        arity(call, 1, 3)
        word = canonical_item(call.args[0])
        self.item = choice(call, "plant" if word == "sapling" else word, list(constants.place))
        self.target = cell_arg(core, call, *call.args[1:]) if len(call.args) == 3 else None
        info = constants.place[self.item]
        self.where: list[str] = list(info["where"])
        self.uses: dict[str, int] = dict(info["uses"])
        self.stations: list[str] = list(info.get("nearby", ()))
        self._object = info["type"] == "object"
        self._start = self.counter(f"place_{self.item}")
        self._at: Cell | None = None
        self._tries = 0

    def holds(self, cell: Cell) -> bool:
        if self._object:
            return isinstance(self.nav.object_at(cell), objects.Plant)
        return self.nav.material(cell) == self.item

    def progress(self) -> str:
        return message("place_progress", item=self.item)

    def check(self) -> tuple[bool, str] | None:
        inv = inventory_text(self.inventory)
        placed = self.counter(f"place_{self.item}") > self._start
        built = built_cells(self.core)
        if placed and self._at is not None and self.holds(self._at):
            built.add(self._at)
            return True, message(
                "placed", item=self.item, x=self._at[0], y=self._at[1], inventory=inv
            )
        target = self.target
        if target is not None and self.holds(target):
            built.add(target)
            return True, message("already_there", item=self.item, x=target[0], y=target[1])
        missing = self._missing(self.uses)
        if missing:
            return False, message(
                "needs_items", missing=missing, verb="place", item=self.item, inventory=inv
            )
        if target is not None and self.nav.material(target) not in self.where:
            return False, message(
                "bad_target", item=self.item, material=self.nav.material(target),
                x=target[0], y=target[1], where=", ".join(self.where),
            )  # fmt: skip
        if self._tries > self._patience:
            return False, message("no_effect", action=f"place_{self.item}")
        return None

    def plan(self) -> str | None:
        target = self.target

        def ok(cell: Cell) -> bool:
            return (target is None or cell == target) and self.nav.material(cell) in self.where

        stand_ok = (lambda c: self._stations_near(self.stations, c)) if self.stations else None
        act = f"place_{self.item}"
        action = self.nav.face_open(ok, act, stand_ok=stand_ok, dig=False)
        if action is None:
            action = self.nav.face_open(ok, act, stand_ok=stand_ok, dig=True)
        if action == act:
            self._at = self.nav.facing()
            self._tries += 1
        return self.go(action, self._unreachable)

    def _unreachable(self) -> str:
        if self.target is not None:
            obj = self.nav.object_at(self.target)
            if obj is not None and obj is not self.body:
                return message(
                    "occupied", x=self.target[0], y=self.target[1], thing=thing_name(obj)
                )
            thing = f"way to ({self.target[0]}, {self.target[1]})"
        else:
            thing = f"free cell for a {self.item}"
        return message("out_of_reach", thing=thing, progress=self.progress())


class GoTo(SkillBase):
    """go_to(x, y): walk to a cell, or next to it when it cannot be stood on."""

    name = "go_to"

    def __init__(self, core: CrafterCore, player: int, call: SkillCall) -> None:
        super().__init__(core, player, call)
        arity(call, 2, 2)
        self.target = cell_arg(core, call, *call.args)

    def _steps(self, cell: Cell) -> int:
        return abs(cell[0] - self.target[0]) + abs(cell[1] - self.target[1])

    def _enterable(self) -> bool:
        obj = self.nav.object_at(self.target)
        if obj is not None and obj is not self.body:
            return False
        return self.nav.material(self.target) in WALKABLE or self.nav.diggable(self.target)

    def progress(self) -> str:
        here = self.nav.pos()
        return message(
            "travel_progress", here_x=here[0], here_y=here[1], steps=self._steps(here),
            x=self.target[0], y=self.target[1],
        )  # fmt: skip

    def check(self) -> tuple[bool, str] | None:
        x, y = self.target
        here = self.nav.pos()
        if here == self.target:
            return True, message("reached", x=x, y=y)
        if not self._enterable() and self._steps(here) == 1:
            obj = self.nav.object_at(self.target)
            thing = thing_name(obj) if obj is not None else self.nav.material(self.target)
            return True, message("next_to", x=x, y=y, thing=thing)
        return None

    def plan(self) -> str | None:
        if self._enterable():
            step = self._walk(lambda c: c == self.target)
        else:
            step = self._walk(lambda c: self._steps(c) == 1)
        return self.go(step, lambda: message("no_path", x=self.target[0], y=self.target[1]))


_DEFEAT = {"zombie": "defeat_zombie", "skeleton": "defeat_skeleton", "cow": "eat_cow"}


class Fight(SkillBase):
    """fight(creature): hunt the nearest one down and hit it until it dies."""

    name = "fight"
    done_message = "defeated"

    def __init__(self, core: CrafterCore, player: int, call: SkillCall) -> None:
        super().__init__(core, player, call)
        arity(call, 1, 1)
        self.kind = choice(call, canonical_item(call.args[0]), list(skill_data()["fight"]))
        self._init_target(_DEFEAT[self.kind], self.kind)

    def _init_target(self, achievement: str, matched: str) -> None:
        self._achievement = achievement
        self._matched = matched
        self._start = self.counter(achievement)

    def progress(self) -> str:
        return message("hunt_progress", kind=self.kind)

    def check(self) -> tuple[bool, str] | None:
        if self.counter(self._achievement) > self._start:
            inv = self.inventory
            text = message(
                self.done_message, kind=self.kind, health=inv["health"], food=inv["food"]
            )
            return True, text
        return None

    def plan(self) -> str | None:
        action = self.nav.face_and(self.nav.matcher(self._matched), "do", recheck=True)
        thing = "ripe plant" if self._matched == "ripe" else self.kind
        return self.go(
            action, lambda: message("out_of_reach", thing=thing, progress=self.progress())
        )


class Eat(Fight):
    """eat([food]): eat the nearest cow (default) or ripe plant."""

    name = "eat"
    done_message = "ate"

    def __init__(self, core: CrafterCore, player: int, call: SkillCall) -> None:
        SkillBase.__init__(self, core, player, call)
        arity(call, 0, 1)
        word = canonical_item(call.args[0]) if call.args else "cow"
        self.kind = choice(call, word, list(skill_data()["food"]))
        if self.kind == "plant":
            self._init_target("eat_plant", "ripe")
        else:
            self._init_target("eat_cow", "cow")


class Drink(SkillBase):
    """drink(): drink at the nearest water until drink is full."""

    name = "drink"

    def __init__(self, core: CrafterCore, player: int, call: SkillCall) -> None:
        super().__init__(core, player, call)
        arity(call, 0, 0)

    def progress(self) -> str:
        return message("drink_progress", drink=self.inventory["drink"])

    def check(self) -> tuple[bool, str] | None:
        drink = self.inventory["drink"]
        if drink >= FULL["drink"]:
            return True, message("drank" if self.ticks else "already_full", drink=drink)
        return None

    def plan(self) -> str | None:
        action = self.nav.face_and(self.nav.matcher("water"), "do", recheck=True)
        return self.go(
            action, lambda: message("out_of_reach", thing="water", progress=self.progress())
        )


class Sleep(SkillBase):
    """sleep(): sleep until woken (rested, or hurt)."""

    name = "sleep"
    defends = False

    def __init__(self, core: CrafterCore, player: int, call: SkillCall) -> None:
        super().__init__(core, player, call)
        arity(call, 0, 0)
        self._slept = False

    def progress(self) -> str:
        return message("sleep_progress", energy=self.inventory["energy"])

    def check(self) -> tuple[bool, str] | None:
        inv = self.inventory
        if self.body.sleeping:
            self._slept = True
            return None
        if self._slept:
            if inv["energy"] >= FULL["energy"]:
                return True, message("woke", energy=inv["energy"])
            return False, message("woken", health=inv["health"], energy=inv["energy"])
        if inv["energy"] >= FULL["energy"]:
            return False, message("not_tired", energy=inv["energy"])
        return None

    def plan(self) -> str | None:
        return "sleep"


_SKILLS: dict[str, type[SkillBase]] = {
    cls.name: cls for cls in (Collect, Craft, Place, GoTo, Fight, Eat, Drink, Sleep)
}


def build(core: CrafterCore, player: int, call: SkillCall, budget: int | None) -> Skill:
    """The controller for ``call`` (its name already checked by the parser)."""
    cls = _SKILLS.get(call.name)
    if cls is None:
        raise error("unknown_skill", name=call.name, names=", ".join(_SKILLS))
    skill = cls(core, player, call)
    if budget is not None:
        skill.budget = int(budget)
    return skill
