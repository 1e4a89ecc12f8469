"""Score an Experience against crafter's true laws.

Preconditions are compared as sets of *atoms*: ``requires:ITEM>=N`` (the
count must match too: a wrong count is one false and one missed atom),
``below:ITEM<N`` (an upper bound: crafter's sleep needs energy below 9),
``nearby:NAME`` and ``faced:NAME`` (each allowed faced thing is one atom; a
``ripe plant`` is told apart from a ``plant``: only the ripe one is eaten).
Per achievement, precision = matched / claimed atoms and recall = matched /
true atoms (1.0 when the set is empty); totals pool the atoms of all 22
achievements. Costs and gains score 1 only on an exact match, and so does
what the faced cell becomes (``leaves``), scored wherever the truth knows
it: a change (mining leaves a path, placing a table leaves a table, an eaten
plant stays a young plant) or no change (water stays water, crafting leaves
the faced cell alone, so a law that claims a change there is wrong).
``leaves_ok`` is None only where the truth says the cell varies (a defeated
creature uncovers whatever it stood on).

Given records, a true atom is **revealable** when some failure of its
achievement lacks it while meeting every other true precondition (for a
faced atom: some failure faced none of the allowed things, and some success
faced this one). Only such records prove the atom is needed; the others are
out of any learner's reach, and ``revealable_recall`` leaves them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lorekit.envs.crafter.core import ACHIEVEMENTS
from lorekit.laws.experience import Experience, Law, oracle_experience
from lorekit.laws.record_format import LawRecord


def atoms(law: Law | None) -> set[str]:
    """A law's preconditions as comparable strings."""
    if law is None:
        return set()
    out = {f"requires:{k}>={n}" for k, n in law.requires.items() if n > 0}
    out |= {f"below:{k}<{n}" for k, n in law.below.items()}
    out |= {f"nearby:{k}" for k in law.nearby}
    out |= {f"faced:{k}" for k in law.faced}
    return out


def _holds(atom: str, record: LawRecord, truth: Law) -> bool:
    kind, rest = atom.split(":", 1)
    if kind == "requires":
        item, count = rest.split(">=")
        return record.inventory().get(item, 0) >= int(count)
    if kind == "below":
        item, count = rest.split("<")
        return record.inventory().get(item, 0) < int(count)
    if kind == "nearby":
        return rest in record.nearby()
    return str(record.before["face"]) in set(truth.faced)


def revealable(truth: Law, records: Sequence[LawRecord]) -> set[str]:
    """The true atoms that some failure isolates (see the module docstring)."""
    mine = [r for r in records if r.achievement == truth.achievement]
    fails = [r for r in mine if not r.success]
    faces = {str(r.before["face"]) for r in mine if r.success}
    true_atoms = atoms(truth)
    kinds = {a if not a.startswith("faced:") else "faced" for a in true_atoms}
    shown: set[str] = set()
    for kind in kinds:
        probe = next(a for a in true_atoms if a == kind or a.startswith(kind + ":"))
        for record in fails:
            broken = {
                (a if not a.startswith("faced:") else "faced")
                for a in true_atoms
                if not _holds(a, record, truth)
            }
            if broken == {kind}:
                if kind == "faced":
                    shown |= {a for a in true_atoms if a.startswith("faced:") and a[6:] in faces}
                else:
                    shown.add(probe)
                break
    return shown


def _cell_known(truth: Law) -> bool:
    """Whether the truth knows what the faced cell holds after a success. The
    oracle says so in its evidence (``cell``); for a truth without that note,
    only a named cell is known."""
    cell = truth.evidence.get("cell")
    return truth.leaves is not None if cell is None else cell != "varies"


@dataclass
class Row:
    """One achievement's comparison."""

    achievement: str
    claimed: int
    true: int
    matched: int
    revealable: int | None = None
    revealed: int | None = None
    costs_ok: bool = False
    gains_ok: bool = False
    leaves_ok: bool | None = None
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.matched / self.claimed if self.claimed else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.true if self.true else 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "achievement": self.achievement,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "claimed": self.claimed,
            "true": self.true,
            "matched": self.matched,
            "revealable": self.revealable,
            "revealed": self.revealed,
            "costs_ok": self.costs_ok,
            "gains_ok": self.gains_ok,
            "leaves_ok": self.leaves_ok,
            "missing": self.missing,
            "extra": self.extra,
        }


@dataclass
class Score:
    rows: list[Row]

    def totals(self) -> dict[str, Any]:
        claimed = sum(r.claimed for r in self.rows)
        true = sum(r.true for r in self.rows)
        matched = sum(r.matched for r in self.rows)
        out: dict[str, Any] = {
            "precision": round(matched / claimed, 4) if claimed else 1.0,
            "recall": round(matched / true, 4) if true else 1.0,
            "costs_exact": sum(r.costs_ok for r in self.rows),
            "gains_exact": sum(r.gains_ok for r in self.rows),
            "leaves_exact": sum(bool(r.leaves_ok) for r in self.rows),
            "leaves_known": sum(r.leaves_ok is not None for r in self.rows),
            "achievements": len(self.rows),
        }
        if all(r.revealable is not None for r in self.rows):
            can = sum(r.revealable or 0 for r in self.rows)
            got = sum(r.revealed or 0 for r in self.rows)
            out["revealable"] = can
            out["revealable_recall"] = round(got / can, 4) if can else 1.0
            out["unrevealable"] = true - can
        return out

    def to_json(self) -> dict[str, Any]:
        return {"rows": [r.to_json() for r in self.rows], "totals": self.totals()}


def score(
    experience: Experience,
    records: Sequence[LawRecord] | None = None,
    truth: Experience | None = None,
) -> Score:
    """Compare ``experience`` with ``truth`` (the oracle) on all 22 achievements."""
    truth = truth or oracle_experience()
    rows = []
    for name in ACHIEVEMENTS:
        law, real = experience.laws.get(name), truth.laws[name]
        got, want = atoms(law), atoms(real)
        row = Row(
            achievement=name,
            claimed=len(got),
            true=len(want),
            matched=len(got & want),
            costs_ok=law is not None and law.costs == real.costs,
            gains_ok=law is not None and law.gains == real.gains,
            leaves_ok=law is not None and law.leaves == real.leaves if _cell_known(real) else None,
            missing=sorted(want - got),
            extra=sorted(got - want),
        )
        if records is not None:
            shown = revealable(real, records)
            row.revealable, row.revealed = len(shown), len(shown & got)
        rows.append(row)
    return Score(rows)
