"""Candidate preconditions: what held in every success of an achievement.

Shared by the symbolic learner (which decides which candidates are real) and
the collector (which keeps the failures that say most about them). The true
preconditions are always candidates, since every success meets them; the
rest hold by coincidence, and only a failure can tell the two apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from lorekit.laws.record_format import LawRecord
from lorekit.laws.transitions import ATTRIBUTES, MATERIALS, TOOLS

Atom = tuple[str, str]  # ("requires", item) | ("below", vital) | ("nearby", name) | ("faced", "")
FACED: Atom = ("faced", "")
CAP = 9
"""Crafter's cap on every vital and item."""


@dataclass(frozen=True)
class Candidates:
    """Least held count per item, names always in the 3x3, faced things, and
    upper bounds on vitals never full in a success (``most``: vital -> one
    above the highest level seen; crafter's sleep needs energy below 9)."""

    least: dict[str, int]
    nearby: frozenset[str]
    faces: tuple[str, ...]
    most: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, wins: Sequence[LawRecord]) -> Candidates:
        if not wins:
            return cls({}, frozenset(), ())
        most = {}
        for vital in ATTRIBUTES:
            high = max(r.inventory().get(vital, CAP) for r in wins)
            if high < CAP:
                most[vital] = high + 1
        least = {}
        for item in TOOLS + MATERIALS:
            low = min(r.inventory().get(item, 0) for r in wins)
            if low > 0:
                least[item] = low
        nearby = frozenset.intersection(*(frozenset(r.nearby()) for r in wins))
        faces = tuple(sorted({str(r.before["face"]) for r in wins}))
        return cls(least, nearby, faces, most)

    def atoms(self) -> list[Atom]:
        out: list[Atom] = [("requires", k) for k in sorted(self.least)]
        out += [("below", k) for k in sorted(self.most)]
        return out + [("nearby", k) for k in sorted(self.nearby)] + [FACED]

    def broken(self, record: LawRecord) -> set[Atom]:
        """The candidates this record's state does not meet."""
        inv = record.inventory()
        out: set[Atom] = {("requires", k) for k, n in self.least.items() if inv.get(k, 0) < n}
        out |= {("below", k) for k, n in self.most.items() if inv.get(k, 0) >= n}
        here = record.nearby()
        out |= {("nearby", k) for k in self.nearby if k not in here}
        if self.faces and str(record.before["face"]) not in self.faces:
            out.add(FACED)
        return out


def diverse(wins: Sequence[LawRecord], count: int) -> list[LawRecord]:
    """``count`` successes that together leave the fewest candidates: each
    pick is the one that drops most coincidences (or adds a faced kind),
    starting from the success that holds least. Every true precondition
    survives any choice, so this only removes what is not needed."""
    if len(wins) <= count:
        return list(wins)

    def size(group: list[LawRecord]) -> int:
        cands = Candidates.of(group)
        return len(cands.least) + sum(cands.least.values()) + len(cands.nearby) - len(cands.faces)

    chosen = [min(range(len(wins)), key=lambda i: (size([wins[i]]), i))]
    while len(chosen) < count:
        group = [wins[i] for i in chosen]
        rest = [i for i in range(len(wins)) if i not in chosen]
        chosen.append(min(rest, key=lambda i: (size([*group, wins[i]]), i)))
    return [wins[i] for i in sorted(chosen)]


def informative(
    wins: Sequence[LawRecord], fails: Sequence[LawRecord], count: int
) -> list[LawRecord]:
    """``count`` failures, the most telling first.

    First, for each candidate, the failure that breaks it together with the
    fewest other candidates (a failure breaking one candidate alone proves
    it; one breaking two leaves a choice of two); then one failure per
    distinct set of broken candidates, smallest sets first, round after
    round. Failures breaking nothing (chance) rank like those breaking one.
    """
    if len(fails) <= count:
        return list(fails)
    cands = Candidates.of(wins)
    broken = [frozenset(cands.broken(r)) for r in fails]
    chosen: list[int] = []
    best: dict[Atom, int] = {}
    for i, b in enumerate(broken):
        for atom in b:
            if atom not in best or len(b) < len(broken[best[atom]]):
                best[atom] = i
    for atom in sorted(best, key=lambda a: (len(broken[best[a]]), a)):
        if best[atom] not in chosen and len(chosen) < count:
            chosen.append(best[atom])
    groups: dict[frozenset[Atom], list[int]] = defaultdict(list)
    for i, b in enumerate(broken):
        if i not in chosen:
            groups[b].append(i)
    order = sorted(groups, key=lambda g: (len(g) if g else 1, sorted(g)))
    depth = 0
    while len(chosen) < count:
        for key in order:
            if depth < len(groups[key]) and len(chosen) < count:
                chosen.append(groups[key][depth])
        depth += 1
    return [fails[i] for i in sorted(chosen)]
