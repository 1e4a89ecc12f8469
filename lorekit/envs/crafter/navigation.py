"""Path finding for one crafter player over the true map.

The scripted controllers walk with it: the data-collection
:class:`~lorekit.envs.crafter.explorer.Explorer` of this package, and the
S-Agents teams' skills. It reads the world directly (it is a
scripted policy, not an agent), finds shortest paths by breadth-first search
over walkable cells, optionally digging through what the player can mine
(mining yields the material, so a path through rock is never wasted), and
turns the player towards a target before acting. Paths are cached and
recomputed when blocked, so most ticks cost no search.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Set
from typing import Any

from crafter import constants, objects

from lorekit.envs.crafter.core import CrafterCore

Cell = tuple[int, int]
DIRS: dict[str, Cell] = {
    "move_left": (-1, 0),
    "move_right": (1, 0),
    "move_up": (0, -1),
    "move_down": (0, 1),
}
MOVE_OF: dict[Cell, str] = {v: k for k, v in DIRS.items()}
WALKABLE = frozenset(constants.walkable)
CREATURES: dict[str, type] = {
    "cow": objects.Cow,
    "zombie": objects.Zombie,
    "skeleton": objects.Skeleton,
}
SEARCH_LIMIT = 4000  # cells visited; crafter's whole 64x64 area is 4096


class Navigator:
    """Shortest paths, path following and facing for player ``index`` of ``core``.

    Call :meth:`refresh` once per tick before planning: the map snapshot and
    the set of cells the player could mine are taken then. Cells in
    ``protected`` (walls a team built) are never dug. ``path_digs`` says
    whether the cached path was planned through rock; a path planned around
    rock is dropped, not dug through, when something is built on it later.
    """

    def __init__(
        self,
        core: CrafterCore,
        index: int = 0,
        rng: random.Random | None = None,
        *,
        protected: Set[Cell] = frozenset(),
    ) -> None:
        self.core = core
        self.index = index
        self.rng = rng if rng is not None else random.Random(0)
        self.protected = protected
        self.path: list[Cell] = []
        self.path_digs = True
        self._mat: list[list[int]] = []
        self._occ: list[list[int]] = []
        self._walk_ids: set[int] = set()
        self._dig_ids: set[int] = set()

    # -- the map -----------------------------------------------------------------

    @property
    def player(self) -> Any:
        return self.core.players[self.index]

    def pos(self) -> Cell:
        return int(self.player.pos[0]), int(self.player.pos[1])

    def facing(self) -> Cell:
        """The cell the player faces."""
        here = self.pos()
        return here[0] + int(self.player.facing[0]), here[1] + int(self.player.facing[1])

    def offset(self, dx: int, dy: int) -> Cell:
        here = self.pos()
        return here[0] + dx, here[1] + dy

    def inside(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.core.area[0] and 0 <= cell[1] < self.core.area[1]

    def material(self, cell: Cell) -> str | None:
        if not self.inside(cell):
            return None
        return str(self.core.world._mat_names[self._mat[cell[0]][cell[1]]])

    def object_at(self, cell: Cell) -> Any:
        if not self.inside(cell):
            return None
        index = self._occ[cell[0]][cell[1]]
        return self.core.world._objects[index] if index else None

    def free(self, cell: Cell) -> bool:
        """Walkable and unoccupied (lava is never free: it kills)."""
        if not self.inside(cell) or self._occ[cell[0]][cell[1]]:
            return False
        return self._mat[cell[0]][cell[1]] in self._walk_ids

    def diggable(self, cell: Cell) -> bool:
        """Minable now with the player's tools, leaving a walkable cell."""
        if not self.inside(cell) or self._occ[cell[0]][cell[1]]:
            return False
        return self._mat[cell[0]][cell[1]] in self._dig_ids and cell not in self.protected

    def refresh(self) -> None:
        """Snapshot the map as lists: list indexing beats numpy item access."""
        world = self.core.world
        self._mat = world._mat_map.tolist()
        self._occ = world._obj_map.tolist()
        ids = world._mat_ids
        self._walk_ids = {ids[name] for name in WALKABLE}
        inv = self.player.inventory
        self._dig_ids = {
            ids[name]
            for name, info in constants.collect.items()
            if name not in WALKABLE
            and info["leaves"] in WALKABLE
            and all(inv[k] >= v for k, v in info["require"].items())
        }

    def matcher(self, kind: str) -> Callable[[Cell], bool]:
        """Cells holding ``kind``: a creature, ``plant``, ``ripe`` (plant) or a material."""
        cls = CREATURES.get(kind)
        if kind == "plant":
            return lambda c: isinstance(self.object_at(c), objects.Plant)
        if kind == "ripe":
            return lambda c: getattr(self.object_at(c), "ripe", False) is True
        if cls is not None:
            return lambda c: isinstance(self.object_at(c), cls)
        wanted = self.core.world._mat_ids.get(kind)

        def matches(c: Cell) -> bool:
            x, y = c
            inside = 0 <= x < self.core.area[0] and 0 <= y < self.core.area[1]
            return inside and self._mat[x][y] == wanted and not self._occ[x][y]

        return matches

    def near(self, kind: str, cell: Cell | None = None) -> bool:
        """``kind`` lies in the 3x3 square around ``cell`` (default: the player),
        the area crafter checks for tables and furnaces."""
        centre = self.player.pos if cell is None else cell
        nearby, _ = self.core.world.nearby(centre, 1)
        return kind in nearby

    # -- paths -------------------------------------------------------------------

    def search(
        self, goal: Callable[[Cell], bool], limit: int = SEARCH_LIMIT, *, dig: bool = True
    ) -> list[Cell] | None:
        """Shortest path (cells after the start) to a stand cell satisfying ``goal``.

        With ``dig`` the path may cross cells the player can mine.
        """
        start = self.pos()
        if goal(start):
            return []
        parent: dict[Cell, Cell] = {start: start}
        queue = deque([start])
        while queue and len(parent) < limit:
            cell = queue.popleft()
            for dx, dy in DIRS.values():
                nxt = (cell[0] + dx, cell[1] + dy)
                if nxt in parent or not (self.free(nxt) or (dig and self.diggable(nxt))):
                    continue
                parent[nxt] = cell
                if goal(nxt):
                    path = [nxt]
                    while parent[path[-1]] != start:
                        path.append(parent[path[-1]])
                    return path[::-1]
                queue.append(nxt)
        return None

    def follow(self) -> str | None:
        """Next action along the cached path, or None when it is used up."""
        while self.path and self.path[0] == self.pos():
            self.path.pop(0)
        if not self.path:
            return None
        nxt = self.path[0]
        here = self.pos()
        step = (nxt[0] - here[0], nxt[1] - here[1])
        if step not in MOVE_OF:
            self.path = []
            return None
        digs = self.path_digs and self.diggable(nxt)
        if digs and tuple(self.player.facing) == step:
            return "do"
        if not self.free(nxt) and not digs:
            self.path = []
            return None
        return MOVE_OF[step]

    def face_and(
        self,
        targets: Callable[[Cell], bool],
        action: str,
        *,
        recheck: bool = False,
        dig: bool = True,
    ) -> str | None:
        """Walk next to a cell matching ``targets``, turn to it, then ``action``.

        None when no such cell is within reach. With ``recheck`` a cached path
        is dropped once its end no longer borders a target (another player
        took the tree, the cow walked off).
        """
        here = self.pos()
        if targets(self.facing()):
            return action
        for move, (dx, dy) in DIRS.items():
            cell = (here[0] + dx, here[1] + dy)
            if targets(cell) and not self.free(cell):
                return move  # blocked: this only turns us

        def stand(cell: Cell) -> bool:
            return any(
                targets((cell[0] + dx, cell[1] + dy))
                and not self.free((cell[0] + dx, cell[1] + dy))
                for dx, dy in DIRS.values()
            )

        if recheck and self.path and not stand(self.path[-1]):
            self.path = []
        following = self.follow()
        if following is not None:
            return following
        path = self.search(stand, dig=dig)
        if not path:
            return None
        self.path, self.path_digs = path, dig
        return self.follow()

    def face_open(
        self,
        ok: Callable[[Cell], bool],
        action: str,
        *,
        stand_ok: Callable[[Cell], bool] | None = None,
        dig: bool = True,
    ) -> str | None:
        """Face an empty cell that ``ok`` accepts, then ``action`` (placing, saplings).

        Crafter has no turn action: moving towards a free cell walks into it.
        So the player faces a walkable cell (or lava) by stepping towards it
        from two cells away, and a blocked one (water) by bumping into it. The
        search finds the nearest place where either works; ``stand_ok``
        restricts where the player may stand when it acts. None when no such
        cell is within reach.
        """
        here = self.pos()

        def stands(cell: Cell) -> bool:
            return stand_ok is None or stand_ok(cell)

        if ok(self.facing()) and self.object_at(self.facing()) is None and stands(here):
            return action
        for move, (dx, dy) in DIRS.items():
            cell = (here[0] + dx, here[1] + dy)
            if ok(cell) and self.object_at(cell) is None and self.bumps(cell) and stands(here):
                return move  # blocked: this only turns us
        following = self.follow()
        if following is not None:
            return following
        last_step: dict[Cell, Cell] = {}

        def empty(cell: Cell) -> bool:
            return self.object_at(cell) in (None, self.player)

        def goal(cell: Cell) -> bool:
            for dx, dy in DIRS.values():
                one, two = (cell[0] + dx, cell[1] + dy), (cell[0] + 2 * dx, cell[1] + 2 * dy)
                if ok(one) and self.object_at(one) is None and self.bumps(one) and stands(cell):
                    return True
                if self.free(one) and ok(two) and empty(two) and stands(one):
                    last_step[cell] = one
                    return True
            return False

        path = self.search(goal, dig=dig)
        if path is None:
            return None
        end = path[-1] if path else here
        if end in last_step:
            path.append(last_step[end])
        self.path, self.path_digs = path, dig
        return self.follow()

    def bumps(self, cell: Cell) -> bool:
        """Moving towards ``cell`` only turns the player: it is occupied or a
        material the player cannot enter. Lava does not count: the player
        walks into it and dies."""
        if not self.inside(cell):
            return False
        if self._occ[cell[0]][cell[1]]:
            return True
        return self.material(cell) not in WALKABLE and self.material(cell) != "lava"

    def wander(self) -> str:
        """A random step to a free neighbour (noop when boxed in)."""
        moves = [m for m, (dx, dy) in DIRS.items() if self.free(self.offset(dx, dy))]
        return self.rng.choice(moves) if moves else "noop"
