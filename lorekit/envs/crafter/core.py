"""The crafter simulation loop, without images unless asked for.

``CrafterCore`` drives crafter's own ``World`` and creature classes exactly as
``crafter.Env`` does (day cycle, object updates near the player, chunk
balancing every 10 steps, crafter's reward), with three differences that are
the point of this module:

* worlds come from :mod:`lorekit.envs.crafter.worldgen` (same worlds, fast);
* a frame is rendered only when the caller wants one. Crafter's night-time
  renderer draws noise from the world's random stream, so when no frame is
  rendered we advance the stream by the same count (``rng_parity``) and the
  episode stays identical to crafter's with images;
* chunk member sets iterate in insertion order. Crafter keeps them in plain
  sets, whose order follows memory addresses, so which creature it despawns
  can differ between runs; ours is reproducible from the seed.

It also holds several players in one world (the party environment), and
offers a ``peaceful`` world: no zombie or skeleton is ever placed, at world
generation or by chunk balancing, so none can act; cows, terrain, the day
cycle and every other rule stay crafter's. The default world is hostile, as
crafter's. A peaceful world has the same terrain and cows as the hostile one
from the same seed at reset; the episodes then part ways, since zombies draw
from the world's random stream when they move.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from crafter import constants, engine, objects

from lorekit.envs.crafter import worldgen

ACTIONS: tuple[str, ...] = tuple(constants.actions)
ACHIEVEMENTS: tuple[str, ...] = tuple(constants.achievements)
UPDATE_FACTOR = 2  # objects within UPDATE_FACTOR * max(view) of a player move


class OrderedObjects:
    """A set that iterates in insertion order, for reproducible chunk scans."""

    def __init__(self) -> None:
        self._items: dict[Any, None] = {}

    def add(self, item: Any) -> None:
        self._items[item] = None

    def remove(self, item: Any) -> None:
        del self._items[item]

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item: object) -> bool:
        return item in self._items


class DeterministicWorld(engine.World):  # type: ignore[misc]
    """crafter's World with insertion-ordered chunk sets."""

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._chunks: collections.defaultdict[Any, OrderedObjects] = collections.defaultdict(
            OrderedObjects
        )


class PartyZombie(objects.Zombie):  # type: ignore[misc]
    """A zombie that chases whichever living player is nearest."""

    def __init__(self, world: Any, pos: Any, players: Sequence[Any]) -> None:
        super().__init__(world, pos, players[0])
        self.players = players

    def update(self) -> None:
        self.player = _nearest(self, self.players)
        super().update()


class PartySkeleton(objects.Skeleton):  # type: ignore[misc]
    """A skeleton that shoots at whichever living player is nearest."""

    def __init__(self, world: Any, pos: Any, players: Sequence[Any]) -> None:
        super().__init__(world, pos, players[0])
        self.players = players

    def update(self) -> None:
        self.player = _nearest(self, self.players)
        super().update()


def _nearest(obj: Any, players: Sequence[Any]) -> Any:
    alive = [p for p in players if not p.removed] or list(players)
    return min(alive, key=lambda p: int(np.abs(p.pos - obj.pos).sum()))


@functools.cache
def _textures() -> Any:
    """crafter's sprite set, loaded once per process and only for images."""
    return engine.Textures(constants.root / "assets")


def world_seed(seed: int, episode: int = 1) -> int:
    """The world seed crafter.Env(seed=seed) uses for its ``episode``-th reset."""
    return hash((seed, episode)) % (2**31 - 1)


# Party spawn offsets around the centre: all inside crafter's grass start area.
_SPAWN_OFFSETS = ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1))


class CrafterCore:
    """One crafter world with one or more players; see the module docstring."""

    def __init__(
        self,
        *,
        area: tuple[int, int] = (64, 64),
        view: tuple[int, int] = (9, 9),
        size: tuple[int, int] = (64, 64),
        length: int | None = 10_000,
        players: int = 1,
        rng_parity: bool = True,
        peaceful: bool = False,
    ) -> None:
        if not 1 <= players <= len(_SPAWN_OFFSETS):
            raise ValueError(f"players must be between 1 and {len(_SPAWN_OFFSETS)}, got {players}")
        self.area = (int(area[0]), int(area[1]))
        self.view = np.array(view)
        self.size = np.array(size)
        self.length = length
        self.player_count = players
        self.rng_parity = rng_parity
        self.peaceful = bool(peaceful)
        self.world = DeterministicWorld(self.area, constants.materials, (12, 12))
        item_rows = int(np.ceil(len(constants.items) / self.view[0]))
        self._grid = (int(self.view[0]), int(self.view[1]) - item_rows)
        self._item_grid = (int(self.view[0]), item_rows)
        unit = self.size // self.view
        self._noise_draws = int(self._grid[0] * unit[0] * self._grid[1] * unit[1])
        names = list(worldgen.CODE_NAMES)
        self._code_to_id = np.array([self.world._mat_ids[n] for n in names], np.uint8)
        self._local_view: Any = None
        self._item_view: Any = None
        self.players: list[Any] = []
        self.unlocked: list[set[str]] = []
        self._last_health: list[int] = []
        self.step_count = 0
        self.seed = 0

    # -- episode -------------------------------------------------------------

    def reset(self, world_seed: int) -> None:
        """Build a new world from ``world_seed`` (see :func:`world_seed`)."""
        self.seed = world_seed
        center = np.array((self.area[0] // 2, self.area[1] // 2))
        self.world.reset(seed=world_seed)
        self.step_count = 0
        self._update_time()
        self.players = []
        for offset in _SPAWN_OFFSETS[: self.player_count]:
            player = objects.Player(self.world, center + np.array(offset))
            self.world.add(player)
            self.players.append(player)
        generated = worldgen.generate(self.world.random, self.area, center)
        self.world._mat_map[:, :] = self._code_to_id[generated.codes]
        for kind, x, y in generated.creatures.tolist():
            if self.peaceful and kind != worldgen.COW:
                continue  # the map's random draws are made all the same
            self.world.add(self._creature(kind, (x, y)))
        self.unlocked = [set() for _ in self.players]
        self._last_health = [int(p.health) for p in self.players]

    def _creature(self, kind: int, pos: Any) -> Any:
        if kind == worldgen.COW:
            return objects.Cow(self.world, pos)
        party = self.player_count > 1
        if kind == worldgen.ZOMBIE:
            if party:
                return PartyZombie(self.world, pos, self.players)
            return objects.Zombie(self.world, pos, self.players[0])
        if party:
            return PartySkeleton(self.world, pos, self.players)
        return objects.Skeleton(self.world, pos, self.players[0])

    def step(self, actions: Sequence[str], *, render: bool = False) -> list[float]:
        """Advance one tick with one action name per player; crafter's rewards.

        With ``render`` the caller will call :meth:`render` for this frame
        (which draws crafter's night noise itself); otherwise the random
        stream is advanced as if it had.
        """
        self.step_count += 1
        self._update_time()
        for player, action in zip(self.players, actions, strict=True):
            player.action = action if self.alive(player) else "noop"
        reach = UPDATE_FACTOR * int(self.view.max())
        living = [p for p in self.players if not p.removed]
        for obj in self.world.objects:
            # Positions are read afresh: players move during this loop, and
            # crafter measures each object against the player's current cell.
            ox, oy = obj.pos.tolist()
            for other in living:
                px, py = other.pos.tolist()
                if abs(ox - px) + abs(oy - py) < reach:
                    obj.update()
                    break
        if self.step_count % 10 == 0:
            for chunk, members in self.world.chunks.items():
                self._balance(chunk, members)
        if not render and self.rng_parity and self.world.daylight < 0.5:
            self.world.random.random_sample(self._noise_draws)
        rewards = []
        for index, player in enumerate(self.players):
            reward = (int(player.health) - self._last_health[index]) / 10
            self._last_health[index] = int(player.health)
            new = {k for k, v in player.achievements.items() if v > 0} - self.unlocked[index]
            if new:
                self.unlocked[index] |= new
                reward += 1.0
            rewards.append(reward)
        if self.player_count > 1:
            for player in self.players:
                if player.health <= 0 and not player.removed:
                    self.world.remove(player)
        return rewards

    def alive(self, player: Any) -> bool:
        return bool(player.health > 0) and not player.removed

    @property
    def over(self) -> bool:
        """The length limit was reached."""
        return bool(self.length) and self.step_count >= int(self.length or 0)

    def _update_time(self) -> None:
        progress = (self.step_count / 300) % 1 + 0.3
        self.world.daylight = 1 - np.abs(np.cos(np.pi * progress)) ** 3

    # -- chunk balancing (crafter's spawn and despawn rules) -------------------

    def _balance(self, chunk: tuple[int, int, int, int], members: Any) -> None:
        light = self.world.daylight
        party = self.player_count > 1

        def zombie(pos: Any) -> Any:
            if party:
                return PartyZombie(self.world, pos, self.players)
            return objects.Zombie(self.world, pos, self.players[0])

        def skeleton(pos: Any) -> Any:
            if party:
                return PartySkeleton(self.world, pos, self.players)
            return objects.Skeleton(self.world, pos, self.players[0])

        def cow(pos: Any) -> Any:
            return objects.Cow(self.world, pos)

        most = 3.5 - 3 * light
        if not self.peaceful:  # a peaceful world never balances hostile creatures in
            self._balance_kind(
                chunk, members, objects.Zombie, "grass", (6, 0), (0.3, 0.4), zombie,
                lambda space: (0 if space < 50 else most, most),
            )  # fmt: skip
            self._balance_kind(
                chunk, members, objects.Skeleton, "path", (7, 7), (0.1, 0.1), skeleton,
                lambda space: (0 if space < 6 else 1, 2),
            )  # fmt: skip
        self._balance_kind(
            chunk, members, objects.Cow, "grass", (5, 5), (0.01, 0.1), cow,
            lambda space: (0 if space < 30 else 1, 1.5 + light),
        )  # fmt: skip

    def _balance_kind(
        self,
        chunk: tuple[int, int, int, int],
        members: Any,
        kind: type,
        material: str,
        distances: tuple[int, int],
        chances: tuple[float, float],
        make: Any,
        targets: Any,
    ) -> None:
        xmin, _, ymin, _ = chunk
        random = self.world.random
        creatures = [obj for obj in members if isinstance(obj, kind)]
        mask = self.world.mask(*chunk, material)
        low, high = targets(int(mask.sum()))
        if len(creatures) < int(low) and random.uniform() < chances[0]:
            xs, ys = np.nonzero(mask)
            i = random.randint(0, len(xs))
            pos = np.array((xs[i] + xmin, ys[i] + ymin))
            if self.world[pos][1] is None and self._player_distance(pos) >= distances[0]:
                self.world.add(make(pos))
        elif len(creatures) > int(high) and random.uniform() < chances[1]:
            victim = creatures[random.randint(0, len(creatures))]
            if self._player_distance(victim.pos) >= distances[1]:
                self.world.remove(victim)

    def _player_distance(self, pos: Any) -> int:
        living = [p for p in self.players if not p.removed] or self.players
        return min(int(np.abs(np.asarray(pos) - p.pos).sum()) for p in living)

    # -- images ----------------------------------------------------------------

    def render(self, player: int = 0, size: Any = None) -> np.ndarray:
        """crafter's image of ``player``'s view and inventory (uint8 HxWx3)."""
        if self._local_view is None:
            self._local_view = engine.LocalView(self.world, _textures(), list(self._grid))
            self._item_view = engine.ItemView(_textures(), list(self._item_grid))
        size = self.size if size is None else np.array(size)
        unit = size // self.view
        canvas = np.zeros((*tuple(size), 3), np.uint8)
        who = self.players[player]
        local = self._local_view(who, unit)
        items = self._item_view(who.inventory, unit)
        frame = np.concatenate([local, items], 1)
        border = (size - (size // self.view) * self.view) // 2
        (x, y), (w, h) = border, frame.shape[:2]
        canvas[x : x + w, y : y + h] = frame
        return canvas.transpose((1, 0, 2))

    def semantic(self) -> np.ndarray:
        """Material ids with creatures on top, like crafter's semantic view."""
        canvas = self.world._mat_map.copy()
        base = len(self.world._mat_ids)
        kinds = (objects.Player, objects.Cow, objects.Zombie, objects.Skeleton)
        extra = (objects.Arrow, objects.Plant, objects.Fence)
        for obj in self.world.objects:
            for offset, kind in enumerate(kinds + extra):
                if isinstance(obj, kind):
                    canvas[tuple(obj.pos)] = base + offset
                    break
        result: np.ndarray = canvas
        return result
