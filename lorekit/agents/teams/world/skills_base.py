"""What the skill API (``skills``) and the controllers (``skills_library``)
share: calls, results, the error, ``skills.yaml``, and :class:`SkillBase`,
the loop every controller runs.

The loop, once per tick: refresh the navigator's map snapshot; end on
success, death, an unfixable failure or the tick budget; otherwise hit a
zombie or skeleton standing next to the player (as anyone would), or plan
the skill's own action. Cells that a place skill built on (walls of a
shelter, say) are remembered per world and never dug by any skill of that
world, nor mined by ``collect(stone)``: teammates must not undo each other's
work.
"""

from __future__ import annotations

import functools
import random
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from crafter import constants, objects

from lorekit import yamlio
from lorekit.envs.crafter.core import CrafterCore
from lorekit.envs.crafter.navigation import DIRS, Cell, Navigator

SKILLS_FILE = Path(__file__).with_name("skills.yaml")
VITALS = ("health", "food", "drink", "energy")


class SkillError(ValueError):
    """A skill call that cannot be run (bad syntax, name or arguments)."""


@dataclass(frozen=True)
class SkillCall:
    """A parsed call: the skill's canonical name and its arguments."""

    name: str
    args: tuple[str | int, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class SkillResult:
    """How a skill ended: ``reason`` says why, ``ticks`` counts the actions it gave."""

    success: bool
    reason: str
    ticks: int


class Skill(Protocol):
    """One running skill of one player.

    Call :meth:`next_action` once per tick, apply the action, and call it
    again after the world has stepped; None means the skill has ended and
    :attr:`result` says how.
    """

    name: str
    call: SkillCall
    player: int

    def next_action(self) -> str | None:
        """The next crafter action for the player, or None once finished."""
        ...

    @property
    def result(self) -> SkillResult | None:
        """Set once the skill has finished (success or failure)."""
        ...


@dataclass(frozen=True)
class SkillSpec:
    """A skill as described to a model: ``name(params): summary``."""

    name: str
    params: str
    summary: str

    def line(self) -> str:
        return f"{self.name}({self.params}): {self.summary}"


@functools.cache
def skill_data() -> Mapping[str, Any]:
    """The parsed ``skills.yaml``."""
    with SKILLS_FILE.open(encoding="utf-8") as fh:
        loaded: dict[str, Any] = yamlio.safe_load(fh)
    return loaded


def error(key: str, **fields: Any) -> SkillError:
    """A :class:`SkillError` with the ``errors`` message ``key`` filled in."""
    return SkillError(str(skill_data()["errors"][key]).format(**fields))


def message(key: str, **fields: Any) -> str:
    """The ``messages`` text ``key`` filled in (a skill's reason)."""
    return str(skill_data()["messages"][key]).format(**fields)


def canonical_item(word: str | int) -> str:
    """An argument word with item aliases resolved (``water`` -> ``drink``)."""
    text = str(word).lower()
    return str(skill_data()["aliases"]["items"].get(text, text))


def inventory_text(inventory: Mapping[str, int]) -> str:
    """Items held, vitals left out: ``"wood 3, stone 1"``."""
    items = [f"{k} {v}" for k, v in inventory.items() if k not in VITALS and v > 0]
    return ", ".join(items) or message("inventory_empty")


_ENEMIES = (objects.Zombie, objects.Skeleton)
FULL: dict[str, int] = {name: int(info["max"]) for name, info in constants.items.items()}
_BUILT: weakref.WeakKeyDictionary[CrafterCore, tuple[Any, set[Cell]]] = weakref.WeakKeyDictionary()


def built_cells(core: CrafterCore) -> set[Cell]:
    """Cells skills built on in ``core``'s current world (a reset starts afresh:
    crafter makes a new map array on every reset)."""
    entry = _BUILT.get(core)
    if entry is None or entry[0] is not core.world._mat_map:
        entry = (core.world._mat_map, set())
        _BUILT[core] = entry
    return entry[1]


class SkillBase:
    """Shared loop: end checks, budget, self-defence, patience when stuck."""

    name = ""
    defends = True

    def __init__(self, core: CrafterCore, player: int, call: SkillCall) -> None:
        self.core = core
        self.player = player
        self.call = call
        self.nav = Navigator(core, player, random.Random(player), protected=built_cells(core))
        self.budget = int(skill_data()["skills"][self.name]["budget"]["base"])
        self.ticks = 0
        self._result: SkillResult | None = None
        self._stuck = 0
        self._patience = int(skill_data()["patience"])

    # -- the contract ----------------------------------------------------------------

    @property
    def result(self) -> SkillResult | None:
        return self._result

    def next_action(self) -> str | None:
        if self._result is not None:
            return None
        self.nav.refresh()
        outcome = self.check()
        if outcome is not None and outcome[0]:
            self._end(*outcome)  # reached, even if the player died on the same tick
            return None
        if not self.core.alive(self.body):
            inv = self.inventory
            vitals = ", ".join(f"{k} {inv[k]}" for k in ("food", "drink", "energy"))
            self._end(
                False, message("died", progress=self.progress(), vitals=vitals) + self._threats()
            )
            return None
        if outcome is not None:
            self._end(*outcome)
            return None
        if self.ticks >= self.budget:
            self._end(False, message("gave_up", ticks=self.ticks, progress=self.progress()))
            return None
        if self.defends and self.body.sleeping:
            action: str | None = "noop"  # crafter ignores a sleeper's actions
        else:
            action = (self._defend() if self.defends else None) or self.plan()
        if self._result is not None or action is None:
            return None
        self.ticks += 1
        return action

    # -- for the skills --------------------------------------------------------------

    @property
    def body(self) -> Any:
        return self.core.players[self.player]

    @property
    def inventory(self) -> dict[str, int]:
        inventory: dict[str, int] = self.body.inventory
        return inventory

    def counter(self, achievement: str) -> int:
        return int(self.body.achievements[achievement])

    def check(self) -> tuple[bool, str] | None:
        """(success, reason) once the skill has ended, else None."""
        raise NotImplementedError

    def plan(self) -> str | None:
        """This tick's action; None after :meth:`fail`."""
        raise NotImplementedError

    def progress(self) -> str:
        raise NotImplementedError

    def fail(self, reason: str) -> None:
        self._end(False, reason)

    def go(self, action: str | None, reason: Callable[[], str]) -> str | None:
        """``action``, or - when there is none - a random step while patience
        lasts (a cow or a teammate may clear the way), then failure."""
        if action is not None:
            self._stuck = 0
            return action
        self._stuck += 1
        if self._stuck > self._patience:
            self.fail(reason())
            return None
        return self.nav.wander()

    def _end(self, success: bool, reason: str) -> None:
        self._result = SkillResult(success, reason, self.ticks)

    def _threats(self) -> str:
        """Enemies within 3 steps, for the reason of a death."""
        here = self.nav.pos()
        kinds = sorted(
            type(obj).__name__.lower().replace("party", "")
            for obj in self.core.world.objects
            if isinstance(obj, _ENEMIES)
            and abs(int(obj.pos[0]) - here[0]) + abs(int(obj.pos[1]) - here[1]) <= 3
        )
        if not kinds:
            return ""
        counted = ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))
        return message("died_near", enemies=counted)

    def _defend(self) -> str | None:
        for move, step in DIRS.items():
            if isinstance(self.nav.object_at(self.nav.offset(*step)), _ENEMIES):
                return "do" if tuple(self.body.facing) == step else move
        return None

    def _missing(self, needed: dict[str, int]) -> str:
        inv = self.inventory
        return ", ".join(f"{v - inv[k]} {k}" for k, v in needed.items() if inv[k] < v)

    def _stations_near(self, stations: list[str], cell: Cell) -> bool:
        """Every station lies in the 3x3 square around ``cell`` (crafter's rule)."""
        around = {
            self.nav.material((cell[0] + dx, cell[1] + dy))
            for dx in (-1, 0, 1)
            for dy in (-1, 0, 1)
        }
        return all(station in around for station in stations)

    def _walk(self, goal: Callable[[Cell], bool]) -> str | None:
        """Next step towards a cell satisfying ``goal``: the cached path while it
        still ends well, else a fresh path, walking around rock before digging."""
        if self.nav.path and goal(self.nav.path[-1]):
            step = self.nav.follow()
            if step is not None:
                return step
        path = self.nav.search(goal, dig=False)
        digs = path is None
        if path is None:
            path = self.nav.search(goal, dig=True)
        if not path:
            return None
        self.nav.path, self.nav.path_digs = path, digs
        return self.nav.follow()


def arity(call: SkillCall, low: int, high: int) -> None:
    if not low <= len(call.args) <= high:
        params = skill_data()["skills"][call.name]["params"]
        raise error("arity", name=call.name, params=params, count=len(call.args), call=call)


def choice(call: SkillCall, value: str, choices: list[str]) -> str:
    if value not in choices:
        raise error("choice", name=call.name, value=value, choices=", ".join(choices))
    return value


def cell_arg(core: CrafterCore, call: SkillCall, x: str | int, y: str | int) -> Cell:
    width, height = core.area
    if not (isinstance(x, int) and isinstance(y, int) and 0 <= x < width and 0 <= y < height):
        raise error("coordinate", call=call, width=width, height=height)
    return x, y
