"""The staged shelter of S-Agents' construction task, built on crafter's map.

In the paper a basic shelter is a stone foundation, wooden walls and a stone
ceiling, built in that order: the task tests whether a leader schedules
dependent stages. Crafter is flat, so the shelter is drawn as a house seen
from the side around a point: the foundation is the row of three cells south
of it (stone), the walls the cells west and east of it (wood: crafter's
wooden block is the table), and the roof the row of three cells north of it
(stone). The layout lives in ``data.yaml`` (``party.house``).

The order is the world's rule, checked every tick: a piece that stands on a
stage whose stages below are not all finished falls down (its cell turns back
to grass, the material is lost), and so does a piece of the wrong material on
a site cell. :meth:`StagedShelter.progress` states each stage's count and the
pieces that fell. The site is cleared to grass when the episode starts, so
every piece on it was built by the players.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Cell = tuple[int, int]
PLACED = ("stone", "table", "furnace")  # materials a player can put on a cell
GROUND = "grass"


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage: its name, the material it is built of and its map cells."""

    name: str
    item: str
    cells: tuple[Cell, ...]


def house_stages(point: Cell, layout: Sequence[Mapping[str, Any]]) -> tuple[Stage, ...]:
    """The stages of a shelter around ``point`` from ``layout`` (offsets per stage)."""
    x, y = point
    return tuple(
        Stage(
            str(s["name"]),
            str(s["item"]),
            tuple((x + int(dx), y + int(dy)) for dx, dy in s["cells"]),
        )
        for s in layout
    )


@dataclass
class StagedShelter:
    """A shelter's stages on one world, and the pieces that fell so far."""

    stages: tuple[Stage, ...]
    fell: list[dict[str, Any]] = field(default_factory=list)

    @property
    def cells(self) -> list[Cell]:
        return [c for s in self.stages for c in s.cells]

    def clear_site(self, world: Any) -> None:
        """Grass on every site cell (and the point itself), so nothing counts unbuilt."""
        xs = [c[0] for c in self.cells]
        ys = [c[1] for c in self.cells]
        for x in range(min(xs), max(xs) + 1):
            for y in range(min(ys), max(ys) + 1):
                world[x, y] = GROUND

    def built(self, world: Any, stage: Stage) -> int:
        return sum(world[c][0] == stage.item for c in stage.cells)

    def check(self, world: Any, tick: int) -> None:
        """Enforce the order: pieces on an unopened stage, or of the wrong material, fall."""
        unfinished: str | None = None  # the first stage below that is not finished
        for stage in self.stages:
            for cell in stage.cells:
                material = world[cell][0]
                if material not in PLACED:
                    continue
                why = None
                if material != stage.item:
                    why = f"{stage.name} are built of {stage.item}, not {material}"
                elif unfinished is not None:
                    why = f"built before the {unfinished} stage was finished"
                if why is not None:
                    world[cell] = GROUND
                    self.fell.append(
                        {
                            "tick": tick,
                            "stage": stage.name,
                            "cell": list(cell),
                            "material": material,
                            "why": why,
                        }
                    )
            if unfinished is None and self.built(world, stage) < len(stage.cells):
                unfinished = stage.name

    def complete(self, world: Any) -> bool:
        return all(self.built(world, s) == len(s.cells) for s in self.stages)

    def fraction(self, world: Any) -> float:
        return sum(self.built(world, s) for s in self.stages) / max(1, len(self.cells))

    def progress(self, world: Any) -> str:
        """``foundation 3/3, walls 1/2, roof 0/3`` and how many pieces fell."""
        text = ", ".join(f"{s.name} {self.built(world, s)}/{len(s.cells)}" for s in self.stages)
        if self.fell:
            last = self.fell[-1]
            text += (
                f"; {len(self.fell)} piece(s) fell, the last a {last['stage']} piece at "
                f"{last['cell'][0]},{last['cell'][1]} ({last['why']})"
            )
        return text
