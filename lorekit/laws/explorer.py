"""A scripted explorer that seeks what an achievement needs.

It reads the true world map (it is a data-collection policy, not an agent),
resolves prerequisites through :class:`CrafterRules` (tools, materials,
nearby stations), walks there with the shared
:class:`~lorekit.envs.crafter.navigation.Navigator` (breadth-first search,
digging through rock it can mine), and acts. Survival comes first: it fights
adjacent enemies, drinks, eats and sleeps when needed. For ``eat_plant`` it plants a sapling in
a pocket with one open side and guards it until it ripens.

It is the policy of the laws' record collectors (:mod:`lorekit.laws.records`,
:mod:`lorekit.laws.collector`), so it lives with them; the navigator it walks
with is the env's, shared with the skills of crafter-party.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from crafter import constants, objects

from lorekit.envs.crafter.core import CrafterCore
from lorekit.envs.crafter.navigation import DIRS, MOVE_OF, WALKABLE, Cell, Navigator
from lorekit.envs.crafter.rules import CrafterRules

_SOURCE = {
    item: f"collect_{item}" for item in ("wood", "stone", "coal", "iron", "diamond", "sapling")
}


class Explorer(Navigator):
    """``act(wanted)`` returns the next crafter action name for player ``index``."""

    def __init__(self, core: CrafterCore, seed: int = 0, index: int = 0) -> None:
        super().__init__(core, index, random.Random(seed))
        self.rules = CrafterRules()
        self._plant: Cell | None = None

    def reset(self) -> None:
        self.path = []
        self._plant = None

    def _face_free(self, ok: Callable[[Cell], bool], action: str) -> str:
        """Face an empty cell that ``ok`` accepts (placing), then ``action``."""
        here = self.pos()
        facing = (here[0] + self.player.facing[0], here[1] + self.player.facing[1])
        if ok(facing) and self.object_at(facing) is None:
            return action
        moves = list(DIRS.items())
        self.rng.shuffle(moves)
        for move, (dx, dy) in moves:
            one, two = (here[0] + dx, here[1] + dy), (here[0] + 2 * dx, here[1] + 2 * dy)
            if not self.free(one) and ok(one) and self.object_at(one) is None:
                return move
            if self.free(one) and ok(two) and self.object_at(two) is None:
                return move
        return self.wander()

    # -- policy ------------------------------------------------------------------

    def act(self, wanted: Sequence[str]) -> str:
        """Next action given the achievements still wanted, most wanted first."""
        player = self.player
        if player.sleeping:
            return "noop"
        self.refresh()
        inv = player.inventory
        for move, (dx, dy) in DIRS.items():
            obj = self.object_at(self.offset(dx, dy))
            if isinstance(obj, (objects.Zombie, objects.Skeleton)):
                return "do" if tuple(player.facing) == (dx, dy) else move
        threat = self._threat()
        if threat is not None:
            return threat
        if inv["drink"] <= 4:
            return self._pursue("collect_drink", 0)
        if inv["food"] <= 4:
            return self._pursue("eat_cow", 0)
        if self.near("table") and inv["wood"] >= 1 and not inv["wood_sword"]:
            return "make_wood_sword"
        if self.near("table") and inv["wood"] and inv["stone"] and not inv["stone_sword"]:
            return "make_stone_sword"
        if inv["energy"] <= 2:
            return "sleep"
        if self._plant is not None and "eat_plant" in wanted:
            return self._guard()
        for goal in wanted:
            action = self._pursue(goal, 0)
            if action is not None:
                return action
        return self.wander()

    def _threat(self) -> str | None:
        """Go for a zombie within two steps before it gets the first hit."""
        here = self.pos()
        for obj in self.core.world.objects:
            if isinstance(obj, objects.Zombie):
                gap = abs(int(obj.pos[0]) - here[0]) + abs(int(obj.pos[1]) - here[1])
                if gap == 2:
                    self.path = []
                    return self.face_and(self.matcher("zombie"), "do")
        return None

    def _pursue(self, goal: str, depth: int) -> str:
        action = self._attempt(goal, depth)
        return action if action is not None else self.wander()

    def _attempt(self, goal: str, depth: int) -> str | None:
        if depth > 8:
            return None
        inv = self.player.inventory
        if goal == "wake_up":
            return "sleep" if inv["energy"] < constants.items["energy"]["max"] else None
        if goal == "eat_plant":
            return self._plant_plan(depth)
        rule = self.rules.for_achievement(goal)
        for item, amount in rule.requires.items():
            if inv[item] < amount:
                source = _SOURCE.get(item, f"make_{item}")
                return self._attempt(source, depth + 1)
        for station in rule.nearby:
            if not self.near(station):
                found = self.face_and(self.matcher(station), "noop")
                if found is not None and found != "noop":
                    return found
                if found is None:
                    return self._attempt(f"place_{station}", depth + 1)
        if rule.action == "do":
            kind = rule.faced[0]
            if kind == "grass":
                return self._face_free(lambda c: self.material(c) == "grass", "do")
            return self.face_and(self.matcher(kind), "do")
        if rule.action.startswith("place_"):
            where = set(rule.faced)
            return self._face_free(lambda c: self.material(c) in where, rule.action)
        return rule.action

    # -- plants ------------------------------------------------------------------

    def _pocket(self, cell: Cell) -> bool:
        """A stand cell next to an empty grass cell closed on its other sides."""
        for dx, dy in DIRS.values():
            plot = (cell[0] + dx, cell[1] + dy)
            if self.material(plot) != "grass" or self.object_at(plot) is not None:
                continue
            sides = [(plot[0] + ex, plot[1] + ey) for ex, ey in DIRS.values()]
            closed = sum(1 for s in sides if s != cell and self.material(s) not in WALKABLE)
            behind = (cell[0] - dx, cell[1] - dy)
            if closed == 3 and self.free(behind):
                return True
        return False

    def _plant_plan(self, depth: int) -> str | None:
        if self.player.inventory["sapling"] < 1:
            return self._attempt("collect_sapling", depth + 1)
        step = self.follow()
        if step is not None:
            return step
        here = self.pos()
        if self._pocket(here):
            for dx, dy in DIRS.values():
                plot = (here[0] + dx, here[1] + dy)
                if self.material(plot) == "grass" and self.object_at(plot) is None:
                    if tuple(self.player.facing) == (dx, dy):
                        self._plant = plot
                        return "place_plant"
                    behind = (here[0] - dx, here[1] - dy)
                    self.path = [behind, here]
                    return self.follow()
        path = self.search(self._pocket, limit=1500)
        if not path:
            return self._face_free(lambda c: self.material(c) == "grass", "place_plant")
        self.path = path
        return self.follow()

    def _guard(self) -> str:
        plot = self._plant
        assert plot is not None
        obj = self.object_at(plot)
        if not isinstance(obj, objects.Plant):
            self._plant = None
            return "noop"
        if obj.ripe:
            return self.face_and(lambda c: c == plot, "do") or "noop"
        inv = self.player.inventory
        if inv["energy"] < constants.items["energy"]["max"]:
            return "sleep"
        here = self.pos()
        if abs(here[0] - plot[0]) + abs(here[1] - plot[1]) > 1:
            return self.face_and(lambda c: c == plot, "noop") or "noop"
        for move, (dx, dy) in DIRS.items():
            if self.material(self.offset(dx, dy)) == "water" and inv["drink"] < 7:
                return "do" if tuple(self.player.facing) == (dx, dy) else move
        step = (plot[0] - here[0], plot[1] - here[1])
        return "noop" if tuple(self.player.facing) == step else MOVE_OF[step]


def random_policy(rng: random.Random) -> Callable[[Sequence[str]], str]:
    """A uniform random policy over crafter's 17 actions, with the same call shape."""
    names: list[str] = [str(name) for name in constants.actions]

    def act(_wanted: Sequence[str]) -> str:
        return rng.choice(names)

    return act
