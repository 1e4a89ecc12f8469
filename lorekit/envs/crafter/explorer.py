"""A scripted explorer that seeks what an achievement needs.

It reads the true world map (it is a data-collection policy, not an agent),
resolves prerequisites through :class:`CrafterRules` (tools, materials,
nearby stations), walks there by breadth-first search, digging through rock
it can mine, and acts. Survival comes first: it fights adjacent enemies,
drinks, eats and sleeps when needed. For ``eat_plant`` it plants a sapling in
a pocket with one open side and guards it until it ripens. Plans are cached
and recomputed when blocked, so most ticks cost no search.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from crafter import constants, objects

from lorekit.envs.crafter.core import CrafterCore
from lorekit.envs.crafter.rules import CrafterRules

_DIRS = {"move_left": (-1, 0), "move_right": (1, 0), "move_up": (0, -1), "move_down": (0, 1)}
_MOVE_OF = {v: k for k, v in _DIRS.items()}
_WALK = frozenset(constants.walkable)
_CREATURES = {"cow": objects.Cow, "zombie": objects.Zombie, "skeleton": objects.Skeleton}
_SOURCE = {
    item: f"collect_{item}" for item in ("wood", "stone", "coal", "iron", "diamond", "sapling")
}
Cell = tuple[int, int]


class Explorer:
    """``act(wanted)`` returns the next crafter action name for player ``index``."""

    def __init__(self, core: CrafterCore, seed: int = 0, index: int = 0) -> None:
        self.core = core
        self.index = index
        self.rules = CrafterRules()
        self.rng = random.Random(seed)
        self._path: list[Cell] = []
        self._plant: Cell | None = None

    def reset(self) -> None:
        self._path = []
        self._plant = None

    # -- helpers -----------------------------------------------------------------

    @property
    def player(self) -> Any:
        return self.core.players[self.index]

    def _pos(self) -> Cell:
        return int(self.player.pos[0]), int(self.player.pos[1])

    def _inside(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.core.area[0] and 0 <= cell[1] < self.core.area[1]

    def _material(self, cell: Cell) -> str | None:
        if not self._inside(cell):
            return None
        return str(self.core.world._mat_names[self._mat[cell[0]][cell[1]]])

    def _object(self, cell: Cell) -> Any:
        if not self._inside(cell):
            return None
        index = self._occ[cell[0]][cell[1]]
        return self.core.world._objects[index] if index else None

    def _free(self, cell: Cell) -> bool:
        if not self._inside(cell) or self._occ[cell[0]][cell[1]]:
            return False
        return self._mat[cell[0]][cell[1]] in self._walk_ids

    def _diggable(self, cell: Cell) -> bool:
        if not self._inside(cell) or self._occ[cell[0]][cell[1]]:
            return False
        return self._mat[cell[0]][cell[1]] in self._dig_ids

    def _refresh(self) -> None:
        """Snapshot the map as lists: list indexing beats numpy item access."""
        world = self.core.world
        self._mat = world._mat_map.tolist()
        self._occ = world._obj_map.tolist()
        ids = world._mat_ids
        self._walk_ids = {ids[name] for name in _WALK}
        inv = self.player.inventory
        self._dig_ids = {
            ids[name]
            for name, info in constants.collect.items()
            if name not in _WALK
            and info["leaves"] in _WALK
            and all(inv[k] >= v for k, v in info["require"].items())
        }

    def _search(self, goal: Callable[[Cell], bool], limit: int = 4000) -> list[Cell] | None:
        """Shortest path (cells after the start) to a stand cell satisfying ``goal``."""
        start = self._pos()
        if goal(start):
            return []
        parent: dict[Cell, Cell] = {start: start}
        queue = deque([start])
        while queue and len(parent) < limit:
            cell = queue.popleft()
            for dx, dy in _DIRS.values():
                nxt = (cell[0] + dx, cell[1] + dy)
                if nxt in parent or not (self._free(nxt) or self._diggable(nxt)):
                    continue
                parent[nxt] = cell
                if goal(nxt):
                    path = [nxt]
                    while parent[path[-1]] != start:
                        path.append(parent[path[-1]])
                    return path[::-1]
                queue.append(nxt)
        return None

    def _follow(self) -> str | None:
        """Next action along the cached path, or None when it is used up."""
        while self._path and self._path[0] == self._pos():
            self._path.pop(0)
        if not self._path:
            return None
        nxt = self._path[0]
        here = self._pos()
        step = (nxt[0] - here[0], nxt[1] - here[1])
        if step not in _MOVE_OF:
            self._path = []
            return None
        if self._diggable(nxt) and tuple(self.player.facing) == step:
            return "do"
        if not self._free(nxt) and not self._diggable(nxt):
            self._path = []
            return None
        return _MOVE_OF[step]

    def _face_and(self, targets: Callable[[Cell], bool], action: str) -> str | None:
        """Walk next to a cell matching ``targets``, turn to it, then ``action``."""
        here = self._pos()
        facing = (here[0] + self.player.facing[0], here[1] + self.player.facing[1])
        if targets(facing):
            return action
        for move, (dx, dy) in _DIRS.items():
            cell = (here[0] + dx, here[1] + dy)
            if targets(cell) and not self._free(cell):
                return move  # blocked: this only turns us
        following = self._follow()
        if following is not None:
            return following

        def stand(cell: Cell) -> bool:
            return any(
                targets((cell[0] + dx, cell[1] + dy))
                and not self._free((cell[0] + dx, cell[1] + dy))
                for dx, dy in _DIRS.values()
            )

        path = self._search(stand)
        if not path:
            return None
        self._path = path
        return self._follow()

    def _face_free(self, ok: Callable[[Cell], bool], action: str) -> str:
        """Face an empty cell that ``ok`` accepts (placing), then ``action``."""
        here = self._pos()
        facing = (here[0] + self.player.facing[0], here[1] + self.player.facing[1])
        if ok(facing) and self._object(facing) is None:
            return action
        moves = list(_DIRS.items())
        self.rng.shuffle(moves)
        for move, (dx, dy) in moves:
            one, two = (here[0] + dx, here[1] + dy), (here[0] + 2 * dx, here[1] + 2 * dy)
            if not self._free(one) and ok(one) and self._object(one) is None:
                return move
            if self._free(one) and ok(two) and self._object(two) is None:
                return move
        return self._wander()

    def _wander(self) -> str:
        moves = [m for m, (dx, dy) in _DIRS.items() if self._free(self._offset(dx, dy))]
        return self.rng.choice(moves) if moves else "noop"

    def _offset(self, dx: int, dy: int) -> Cell:
        here = self._pos()
        return here[0] + dx, here[1] + dy

    def _is(self, kind: str) -> Callable[[Cell], bool]:
        cls = _CREATURES.get(kind)
        if kind == "plant":
            return lambda c: isinstance(self._object(c), objects.Plant)
        if kind == "ripe":
            return lambda c: getattr(self._object(c), "ripe", False) is True
        if cls is not None:
            return lambda c: isinstance(self._object(c), cls)
        wanted = self.core.world._mat_ids.get(kind)

        def matches(c: Cell) -> bool:
            x, y = c
            inside = 0 <= x < self.core.area[0] and 0 <= y < self.core.area[1]
            return inside and self._mat[x][y] == wanted and not self._occ[x][y]

        return matches

    def _near(self, kind: str) -> bool:
        nearby, _ = self.core.world.nearby(self.player.pos, 1)
        return kind in nearby

    # -- policy ------------------------------------------------------------------

    def act(self, wanted: Sequence[str]) -> str:
        """Next action given the achievements still wanted, most wanted first."""
        player = self.player
        if player.sleeping:
            return "noop"
        self._refresh()
        inv = player.inventory
        for move, (dx, dy) in _DIRS.items():
            obj = self._object(self._offset(dx, dy))
            if isinstance(obj, (objects.Zombie, objects.Skeleton)):
                return "do" if tuple(player.facing) == (dx, dy) else move
        threat = self._threat()
        if threat is not None:
            return threat
        if inv["drink"] <= 4:
            return self._pursue("collect_drink", 0)
        if inv["food"] <= 4:
            return self._pursue("eat_cow", 0)
        if self._near("table") and inv["wood"] >= 1 and not inv["wood_sword"]:
            return "make_wood_sword"
        if self._near("table") and inv["wood"] and inv["stone"] and not inv["stone_sword"]:
            return "make_stone_sword"
        if inv["energy"] <= 2:
            return "sleep"
        if self._plant is not None and "eat_plant" in wanted:
            return self._guard()
        for goal in wanted:
            action = self._pursue(goal, 0)
            if action is not None:
                return action
        return self._wander()

    def _threat(self) -> str | None:
        """Go for a zombie within two steps before it gets the first hit."""
        here = self._pos()
        for obj in self.core.world.objects:
            if isinstance(obj, objects.Zombie):
                gap = abs(int(obj.pos[0]) - here[0]) + abs(int(obj.pos[1]) - here[1])
                if gap == 2:
                    self._path = []
                    return self._face_and(self._is("zombie"), "do")
        return None

    def _pursue(self, goal: str, depth: int) -> str:
        action = self._attempt(goal, depth)
        return action if action is not None else self._wander()

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
            if not self._near(station):
                found = self._face_and(self._is(station), "noop")
                if found is not None and found != "noop":
                    return found
                if found is None:
                    return self._attempt(f"place_{station}", depth + 1)
        if rule.action == "do":
            kind = rule.faced[0]
            if kind == "grass":
                return self._face_free(lambda c: self._material(c) == "grass", "do")
            return self._face_and(self._is(kind), "do")
        if rule.action.startswith("place_"):
            where = set(rule.faced)
            return self._face_free(lambda c: self._material(c) in where, rule.action)
        return rule.action

    # -- plants ------------------------------------------------------------------

    def _pocket(self, cell: Cell) -> bool:
        """A stand cell next to an empty grass cell closed on its other sides."""
        for dx, dy in _DIRS.values():
            plot = (cell[0] + dx, cell[1] + dy)
            if self._material(plot) != "grass" or self._object(plot) is not None:
                continue
            sides = [(plot[0] + ex, plot[1] + ey) for ex, ey in _DIRS.values()]
            closed = sum(1 for s in sides if s != cell and self._material(s) not in _WALK)
            behind = (cell[0] - dx, cell[1] - dy)
            if closed == 3 and self._free(behind):
                return True
        return False

    def _plant_plan(self, depth: int) -> str | None:
        if self.player.inventory["sapling"] < 1:
            return self._attempt("collect_sapling", depth + 1)
        step = self._follow()
        if step is not None:
            return step
        here = self._pos()
        if self._pocket(here):
            for dx, dy in _DIRS.values():
                plot = (here[0] + dx, here[1] + dy)
                if self._material(plot) == "grass" and self._object(plot) is None:
                    if tuple(self.player.facing) == (dx, dy):
                        self._plant = plot
                        return "place_plant"
                    behind = (here[0] - dx, here[1] - dy)
                    self._path = [behind, here]
                    return self._follow()
        path = self._search(self._pocket, limit=1500)
        if not path:
            return self._face_free(lambda c: self._material(c) == "grass", "place_plant")
        self._path = path
        return self._follow()

    def _guard(self) -> str:
        plot = self._plant
        assert plot is not None
        obj = self._object(plot)
        if not isinstance(obj, objects.Plant):
            self._plant = None
            return "noop"
        if obj.ripe:
            return self._face_and(lambda c: c == plot, "do") or "noop"
        inv = self.player.inventory
        if inv["energy"] < constants.items["energy"]["max"]:
            return "sleep"
        here = self._pos()
        if abs(here[0] - plot[0]) + abs(here[1] - plot[1]) > 1:
            return self._face_and(lambda c: c == plot, "noop") or "noop"
        for move, (dx, dy) in _DIRS.items():
            if self._material(self._offset(dx, dy)) == "water" and inv["drink"] < 7:
                return "do" if tuple(self.player.facing) == (dx, dy) else move
        step = (plot[0] - here[0], plot[1] - here[1])
        return "noop" if tuple(self.player.facing) == step else _MOVE_OF[step]


def random_policy(rng: random.Random) -> Callable[[Sequence[str]], str]:
    """A uniform random policy over crafter's 17 actions, with the same call shape."""
    names: list[str] = [str(name) for name in constants.actions]

    def act(_wanted: Sequence[str]) -> str:
        return rng.choice(names)

    return act
