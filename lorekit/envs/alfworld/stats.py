"""How full a room is: the figures that compare generated games with ALFWorld's.

A review of ReAct's published ALFWorld trajectories (issue 28) measured the
official games by what agents saw: the share of receptacle views that showed
nothing, how many objects a non-empty view listed (and at most), and how many
distinct objects an agent had seen after a few receptacles. Those are views
agents chose to make, so they are measured here the same way, on a game's
PDDL problem and without the engine, by a searcher that looks for the task's
object as ReAct's prompts teach: it visits, in random order, the receptacles
that can hold that object until one does. A view lists every object
``inReceptacle`` its receptacle (a fork in a mug on a countertop is listed
there too, as the engine lists it).

The distinct objects seen after k receptacles come two ways. In random order
among the likely receptacles (``distinct_seen``), most first visits are
cabinets and drawers. ReAct's agents do not search that way: they start at
the countertops, dining tables and desks (``SURFACES``), which in the official
kitchens list 10-13 objects each, so the review's "18 objects after 2
receptacles" is read as an agent that visits those first
(``distinct_seen_surfaces_first``): distinct object names in its views, the
receptacles themselves and the opening's list of them not counted.
"""

from __future__ import annotations

import random
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_FACT = re.compile(r"\((objectType|receptacleType|inReceptacle|canContain) (\S+) (\S+)\)")
SURFACES = frozenset({"CounterTop", "DiningTable", "Desk"})
"""Where ReAct's agents start looking for an object that can lie there."""


@dataclass(frozen=True)
class Room:
    """One game's room: its objects, what each receptacle holds, and its types."""

    objects: Mapping[str, str]
    """Object -> its type (``Mug``)."""
    contents: Mapping[str, frozenset[str]]
    """Receptacle -> the objects its view lists (empty receptacles included)."""
    holds: Mapping[str, frozenset[str]]
    """Receptacle -> the object types it can hold."""
    kinds: Mapping[str, str]
    """Receptacle -> its type (``CounterTop``)."""

    @classmethod
    def from_problem(cls, problem: str) -> Room:
        init = problem[problem.index("(:init") : problem.index("(:goal")]
        objects: dict[str, str] = {}
        recep_type: dict[str, str] = {}
        contents: dict[str, set[str]] = {}
        can: dict[str, set[str]] = {}
        for predicate, first, second in _FACT.findall(init):
            if predicate == "objectType":
                objects[first] = second.removesuffix("Type")
            elif predicate == "receptacleType":
                recep_type[first] = second.removesuffix("Type")
                contents.setdefault(first, set())
            elif predicate == "inReceptacle":
                contents.setdefault(second, set()).add(first)
            else:
                can.setdefault(first.removesuffix("Type"), set()).add(second.removesuffix("Type"))
        return cls(
            objects,
            {r: frozenset(o) for r, o in contents.items()},
            {r: frozenset(can.get(t, ())) for r, t in recep_type.items()},
            recep_type,
        )

    def visits(
        self, otype: str, rng: random.Random, first: frozenset[str] = frozenset()
    ) -> list[str]:
        """Every receptacle, in the order a searcher for ``otype`` visits them:
        those that can hold it first (of those, the types in ``first`` before
        the others), each group in random order."""
        likely = sorted(r for r in self.contents if otype in self.holds.get(r, ()))
        rest = sorted(set(self.contents) - set(likely))
        rng.shuffle(likely)
        rng.shuffle(rest)
        likely.sort(key=lambda r: self.kinds.get(r) not in first)  # stable: random within
        return likely + rest

    def search(self, otype: str, rng: random.Random) -> list[str]:
        """The receptacles a searcher for ``otype`` visits, up to the first holding one."""
        visits = []
        for recep in self.visits(otype, rng):
            visits.append(recep)
            if any(self.objects.get(o) == otype for o in self.contents[recep]):
                break
        return visits

    def seen_after(
        self, k: int, otype: str, rng: random.Random, first: frozenset[str] = frozenset()
    ) -> int:
        """Distinct objects a searcher for ``otype`` has seen after ``k`` receptacles."""
        order = self.visits(otype, rng, first)[:k]
        return len(set().union(*(self.contents[r] for r in order)))


@dataclass(frozen=True)
class RoomFigures:
    """The figures over many games (means, except the maximum)."""

    games: int
    objects_per_game: float
    views: int
    empty_view_share: float
    objects_per_nonempty_view: float
    max_objects_per_view: int
    distinct_seen: Mapping[int, float]
    """After k receptacles, the likely ones in random order."""
    distinct_seen_surfaces_first: Mapping[int, float]
    """After k receptacles, the likely countertops, tables and desks first (ReAct's way)."""


def figures(
    games: Iterable[tuple[str, str]], ks: Sequence[int] = (2, 11), *, seed: int = 0, tries: int = 20
) -> RoomFigures:
    """The figures of ``games``, each ``(PDDL problem, task object type)``;
    ``tries`` random searches (and visit orders) per game."""
    rng = random.Random(seed)
    rooms: list[tuple[Room, str]] = []
    views: list[int] = []
    for problem, otype in games:
        room = Room.from_problem(problem)
        rooms.append((room, otype))
        for _ in range(tries):
            views += [len(room.contents[r]) for r in room.search(otype, rng)]
    if not rooms or not views:
        raise ValueError("no games to measure")
    full = [v for v in views if v]
    return RoomFigures(
        games=len(rooms),
        objects_per_game=statistics.fmean(len(room.objects) for room, _ in rooms),
        views=len(views),
        empty_view_share=(len(views) - len(full)) / len(views),
        objects_per_nonempty_view=statistics.fmean(full) if full else 0.0,
        max_objects_per_view=max(views),
        distinct_seen=_seen(rooms, ks, rng, tries, frozenset()),
        distinct_seen_surfaces_first=_seen(rooms, ks, rng, tries, SURFACES),
    )


def _seen(
    rooms: Sequence[tuple[Room, str]],
    ks: Sequence[int],
    rng: random.Random,
    tries: int,
    first: frozenset[str],
) -> dict[int, float]:
    return {
        k: statistics.fmean(
            room.seen_after(k, otype, rng, first) for room, otype in rooms for _ in range(tries)
        )
        for k in ks
    }


def report(fig: RoomFigures, official: Mapping[str, object]) -> list[str]:
    """Printable rows: figure, generated, official, generated/official."""
    seen_official = official.get("distinct_seen", {})
    assert isinstance(seen_official, Mapping)
    rows: list[tuple[str, float, object]] = [
        ("objects per game", fig.objects_per_game, None),
        ("empty receptacle views", fig.empty_view_share, official.get("empty_view_share")),
        (
            "objects per non-empty view",
            fig.objects_per_nonempty_view,
            official.get("objects_per_nonempty_view"),
        ),
        (
            "most objects in one view",
            fig.max_objects_per_view,
            official.get("max_objects_per_view"),
        ),
    ]
    rows += [
        (f"distinct objects after {k} receptacles, surfaces first", value, seen_official.get(k))
        for k, value in fig.distinct_seen_surfaces_first.items()
    ]
    rows += [
        (f"distinct objects after {k} receptacles, random order", value, None)
        for k, value in fig.distinct_seen.items()
    ]
    lines = [f"{'':52}{'generated':>10}{'official':>10}{'ratio':>8}"]
    for name, ours, theirs in rows:
        if isinstance(theirs, int | float):
            lines.append(f"{name:52}{ours:10.2f}{theirs:10.2f}{ours / theirs:8.2f}")
        else:
            lines.append(f"{name:52}{ours:10.2f}")
    return lines
