"""Candidate preconditions: what held in every success of an achievement.

Shared by the symbolic learner (which decides which candidates are real) and
the collector (which keeps the failures that say most about them). The true
preconditions are always candidates, since every success meets them; the
rest hold by coincidence, and only a failure can tell the two apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from lorekit.envs.crafter.records import MATERIALS, TOOLS
from lorekit.laws.records import LawRecord

Atom = tuple[str, str]  # ("requires", item) | ("nearby", name) | ("faced", "")
FACED: Atom = ("faced", "")


@dataclass(frozen=True)
class Candidates:
    """Least held count per item, names always in the 3x3, faced things."""

    least: dict[str, int]
    nearby: frozenset[str]
    faces: tuple[str, ...]

    @classmethod
    def of(cls, wins: Sequence[LawRecord]) -> Candidates:
        if not wins:
            return cls({}, frozenset(), ())
        least = {}
        for item in TOOLS + MATERIALS:
            low = min(r.inventory().get(item, 0) for r in wins)
            if low > 0:
                least[item] = low
        nearby = frozenset.intersection(*(frozenset(r.nearby()) for r in wins))
        faces = tuple(sorted({str(r.before["face"]) for r in wins}))
        return cls(least, nearby, faces)

    def atoms(self) -> list[Atom]:
        out: list[Atom] = [("requires", k) for k in sorted(self.least)]
        return out + [("nearby", k) for k in sorted(self.nearby)] + [FACED]

    def broken(self, record: LawRecord) -> set[Atom]:
        """The candidates this record's state does not meet."""
        inv = record.inventory()
        out: set[Atom] = {("requires", k) for k, n in self.least.items() if inv.get(k, 0) < n}
        here = record.nearby()
        out |= {("nearby", k) for k in self.nearby if k not in here}
        if self.faces and str(record.before["face"]) not in self.faces:
            out.add(FACED)
        return out


def informative(
    wins: Sequence[LawRecord], fails: Sequence[LawRecord], count: int
) -> list[LawRecord]:
    """``count`` failures, the most telling first: one per distinct set of
    broken candidates, smallest sets first (a failure breaking one candidate
    proves it), round after round; failures breaking none (chance) rank
    after those breaking one."""
    if len(fails) <= count:
        return list(fails)
    cands = Candidates.of(wins)
    groups: dict[frozenset[Atom], list[LawRecord]] = defaultdict(list)
    for record in fails:
        groups[frozenset(cands.broken(record))].append(record)
    order = sorted(groups, key=lambda g: (len(g) if g else 1.5, sorted(g)))
    chosen: list[LawRecord] = []
    depth = 0
    while len(chosen) < count:
        for key in order:
            if depth < len(groups[key]) and len(chosen) < count:
                chosen.append(groups[key][depth])
        depth += 1
    return chosen
