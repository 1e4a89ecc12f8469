"""Ordinary reward predicates over a Crafter-like state, written as plain Python.

They follow the shapes of the law-based reward functions in "From Laws to
Motivation" (facing texture checks, inventory counts, nearby tables and
furnaces, ``isinstance`` on creatures) plus a few aggregates. The tests
compile each one's *source* with ``compile_predicate`` and compare the result
with calling the function itself, so the predicate language is shown to
accept them and to compute the same answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class Zombie:
    """A creature type the predicates test with ``isinstance``."""


class Cow:
    """Another creature type."""


@dataclass
class World:
    """Textures and creatures on a small square grid around the agent."""

    textures: dict[tuple[int, int], str]
    creatures: dict[tuple[int, int], Any] = field(default_factory=dict)

    def __getitem__(self, pos: tuple[int, int]) -> tuple[str, Any]:
        return self.textures.get(pos, "grass"), self.creatures.get(pos)

    def nearby(self, pos: tuple[int, int], distance: int) -> tuple[tuple[str, ...], list[Any]]:
        x, y = pos
        cells = [
            (x + dx, y + dy)
            for dx in range(-distance, distance + 1)
            for dy in range(-distance, distance + 1)
        ]
        textures = tuple(self.textures.get(c, "grass") for c in cells)
        return textures, [self.creatures[c] for c in cells if c in self.creatures]


@dataclass
class Agent:
    """What a reward predicate sees."""

    inventory: dict[str, int]
    world: World
    pos: tuple[int, int]
    previous: dict[str, int]
    zombies: list[tuple[int, int]]
    grid: list[list[str]]


ALLOWED = {"Zombie": Zombie, "Cow": Cow}


def collect_coal(agent: Agent, target: tuple[int, int]) -> bool:
    texture, _ = agent.world[target]
    return texture == "coal" and agent.inventory["wood_pickaxe"] > 0


def defeat_zombie(agent: Agent, target: tuple[int, int]) -> bool:
    _, obj = agent.world[target]
    if isinstance(obj, Zombie):
        swords = ("wood_sword", "stone_sword", "iron_sword")
        return any(agent.inventory.get(sword, 0) > 0 for sword in swords)
    return False


def place_table(agent: Agent, target: tuple[int, int]) -> bool:
    texture, _ = agent.world[target]
    return texture in ["grass", "sand", "path"] and agent.inventory.get("wood", 0) >= 2


def make_iron_pickaxe(agent: Agent, target: tuple[int, int]) -> bool:
    inv = agent.inventory
    if inv["wood"] < 1 or inv["coal"] < 1 or inv["iron"] < 1:
        return False
    textures, _ = agent.world.nearby(agent.pos, 1)
    return "table" in textures and "furnace" in textures


def cows_nearby(agent: Agent, target: tuple[int, int]) -> int:
    _, creatures = agent.world.nearby(agent.pos, 2)
    return sum(1 for creature in creatures if isinstance(creature, Cow))


def survival(agent: Agent, target: tuple[int, int]) -> float:
    inv = agent.inventory
    vitals = [inv[name] for name in ("health", "food", "drink", "energy")]
    low = sum(1 for v in vitals if v < 3)
    healthy = 1.0 if all(v >= 5 for v in vitals) else 0.0
    return min(vitals) / 9 - 0.5 * low + healthy


def material_score(agent: Agent, target: tuple[int, int]) -> int:
    weights = {"wood": 1, "stone": 2, "coal": 3, "iron": 5, "diamond": 10}
    return sum(w * agent.inventory.get(name, 0) for name, w in weights.items())


def zombie_close(agent: Agent, target: tuple[int, int]) -> bool:
    x, y = agent.pos
    distances = [abs(zx - x) + abs(zy - y) for zx, zy in agent.zombies]
    return min(distances, default=99) <= 2


def trees_in_view(agent: Agent, target: tuple[int, int]) -> bool:
    count = 0
    for row in agent.grid:
        for cell in row:
            if cell == "tree":
                count += 1
    return count >= 3


def gained_something(agent: Agent, target: tuple[int, int]) -> bool:
    before = agent.previous
    gained = {
        name: n - before.get(name, 0)
        for name, n in agent.inventory.items()
        if n > before.get(name, 0)
    }
    return len(gained) > 0 and max(gained.values()) >= 1


def first_row_summary(agent: Agent, target: tuple[int, int]) -> str:
    kinds = sorted({cell.upper() for cell in agent.grid[0]})
    return f"{agent.inventory['health']:02d}:{kinds[0]}:{len(kinds)}"


def wood_delta(agent: Agent, target: tuple[int, int]) -> float:
    """Reward each new log, a bit more when a table is in reach."""
    gained = agent.inventory.get("wood", 0) - agent.previous.get("wood", 0)
    bonus = 0.5 if "table" in agent.world.nearby(agent.pos, 1)[0] else 0.0
    total = 0.0
    for _ in range(max(gained, 0)):
        total += 1.0
    return round(total + bonus, 2)


EXAMPLES = [
    collect_coal, defeat_zombie, place_table, make_iron_pickaxe, cows_nearby, survival,
    material_score, zombie_close, trees_in_view, gained_something, first_row_summary, wood_delta,
]  # fmt: skip
