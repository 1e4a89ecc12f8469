"""A law learner without an LLM: preconditions and effects by set reasoning.

The paper asks an LLM to read records; this learner does the same job with
counting, as a baseline and as a check of what the records can teach. Per
achievement:

* **Candidates** are what held in *every* success: each tool or material
  with its least count, each name in the 3x3 area, and the set of faced
  things (one "faced one of" condition). The true preconditions are always
  among them (a success meets them all); the rest hold by coincidence.
* **Costs and gains** are the inventory changes (vitals included) seen in
  most successes, reading only successes where the item did not hit crafter's
  cap of 9 (a capped gain looks smaller than it is).
* A consumed item is required (an inventory cannot go below zero).
* A **near miss** is a failure that breaks exactly one candidate: that
  candidate must be a true precondition. Failures that break several
  candidates and none accepted so far are then covered greedily, faced
  first, then inventory, then the 3x3 area (see ``_cover``); ties are kept,
  so two items always held together are both required.
* Failures that break no candidate mean chance or hidden state (a sapling
  drops one time in ten, a cow needs several hits, a sleeper wakes when
  rested). Where they occur a near miss proves less, so a faced condition is
  kept only if every success faced the same kind of thing, and any other
  candidate needs two near misses.

A required count is the smallest one the records allow: at least the cost,
and above every near miss's count. ``confidence`` is the share of failures
the law explains, scaled by ``n / (n + 1)`` for ``n`` successes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from lorekit.envs.crafter.core import ACHIEVEMENTS
from lorekit.envs.crafter.records import MATERIALS, TOOLS
from lorekit.laws.experience import LAW_ACTIONS, Experience, Law
from lorekit.laws.records import LawRecord

CAP = 9
Atom = tuple[str, str]  # ("requires", item) | ("nearby", name) | ("faced", "")
FACED: Atom = ("faced", "")


def learn(records: Sequence[LawRecord], meta: dict[str, object] | None = None) -> Experience:
    """An Experience inferred from records, one law per achievement seen."""
    laws: dict[str, Law] = {}
    for name in ACHIEVEMENTS:
        mine = [r for r in records if r.achievement == name]
        if mine:
            laws[name] = learn_law(name, mine)
    info = {"records": len(records), **(meta or {})}
    return Experience(laws=laws, source="symbolic", meta=info)


def learn_law(achievement: str, records: Sequence[LawRecord]) -> Law:
    """The law of one achievement from its successes and failures."""
    wins = [r for r in records if r.success]
    fails = [r for r in records if not r.success]
    action = LAW_ACTIONS[achievement]
    if not wins:
        return Law(
            achievement, action, {}, [], [], {}, {}, confidence=0.0,
            evidence={"successes": 0, "failures": len(fails)},
        )  # fmt: skip
    costs, gains = _effects(wins)
    least = _least_held(wins)
    nearby = set.intersection(*(r.nearby() for r in wins))
    faces = sorted({str(r.before["face"]) for r in wins})
    candidates: list[Atom] = [("requires", k) for k in sorted(least)]
    candidates += [("nearby", k) for k in sorted(nearby)] + [FACED]

    def broken(record: LawRecord) -> set[Atom]:
        inv = record.inventory()
        out: set[Atom] = {("requires", k) for k, n in least.items() if inv.get(k, 0) < n}
        here = record.nearby()
        out |= {("nearby", k) for k in nearby if k not in here}
        if str(record.before["face"]) not in faces:
            out.add(FACED)
        return out

    breaks = [broken(r) for r in fails]
    chance = sum(1 for b in breaks if not b)
    near = Counter(next(iter(b)) for b in breaks if len(b) == 1)
    accepted: set[Atom] = {("requires", k) for k in costs if ("requires", k) in candidates}
    for atom, count in near.items():
        if not chance or (atom == FACED and len(faces) == 1) or (atom != FACED and count >= 2):
            accepted.add(atom)
    left = [b for b in breaks if b and not b & accepted]
    if not chance:
        accepted |= _cover(left)
    elif len(faces) == 1:  # chance decides, but every success faced one kind
        accepted |= _cover([{FACED}] if any(FACED in b for b in left) else [])
    requires = {
        item: _count(item, least[item], costs.get(item, 0), fails, broken)
        for kind, item in sorted(accepted)
        if kind == "requires"
    }
    explained = sum(1 for b in breaks if b & accepted)
    share = explained / len(fails) if fails else 1.0
    return Law(
        achievement=achievement,
        action=action,
        requires=requires,
        nearby=sorted(k for kind, k in accepted if kind == "nearby"),
        faced=faces if FACED in accepted else [],
        costs=costs,
        gains=gains,
        confidence=round(share * len(wins) / (len(wins) + 1), 3),
        evidence={
            "successes": len(wins),
            "failures": len(fails),
            "near_misses": {_label(a): n for a, n in sorted(near.items())},
            "unexplained_failures": chance,
            "explained_failures": explained,
            "candidates": [_label(a) for a in candidates],
            "rejected": [_label(a) for a in candidates if a not in accepted],
        },
    )


def _least_held(wins: Sequence[LawRecord]) -> dict[str, int]:
    """Each tool or material held in every success, with its least count."""
    out: dict[str, int] = {}
    for item in TOOLS + MATERIALS:
        low = min(r.inventory().get(item, 0) for r in wins)
        if low > 0:
            out[item] = low
    return out


def _effects(wins: Sequence[LawRecord]) -> tuple[dict[str, int], dict[str, int]]:
    """(costs, gains): the most common change of each item over successes."""
    costs: dict[str, int] = {}
    gains: dict[str, int] = {}
    items = sorted({k for r in wins for k in r.inventory()})
    for item in items:
        deltas = []
        for r in wins:
            before, after = r.inventory().get(item, 0), r.inventory("after").get(item, 0)
            if after < CAP:  # a change that reached the cap may be cut short
                deltas.append(after - before)
        if not deltas:  # always capped: the largest change is the best bound
            deltas = [max(r.inventory("after")[item] - r.inventory()[item] for r in wins)]
        (delta, _), *_ = Counter(deltas).most_common(1)
        if delta > 0:
            gains[item] = delta
        elif delta < 0:
            costs[item] = -delta
    return costs, gains


def _cover(unexplained: list[set[Atom]]) -> set[Atom]:
    """Cover these failures, trying faced, then requires, then nearby atoms;
    within a kind greedily by how many failures an atom breaks (ties kept).

    The order encodes a prior: the faced thing and the inventory decide most
    actions; the 3x3 area is where coincidences hide (a cave's path)."""
    chosen: set[Atom] = set()
    left = [b for b in unexplained if b]
    for kind in ("faced", "requires", "nearby"):
        while True:
            counts = Counter(a for b in left for a in b if a[0] == kind)
            if not counts:
                break
            top = max(counts.values())
            best = {a for a, n in counts.items() if n == top}
            chosen |= best
            left = [b for b in left if not b & best]
    return chosen


def _count(
    item: str,
    least: int,
    cost: int,
    fails: Sequence[LawRecord],
    broken: Callable[[LawRecord], set[Atom]],
) -> int:
    """Smallest required count: the cost, and above each near miss's count."""
    floor = max(cost, 1)
    for record in fails:
        held = record.inventory().get(item, 0)
        if held < least and broken(record) == {("requires", item)}:
            floor = max(floor, held + 1)
    return min(floor, least)


def _label(atom: Atom) -> str:
    kind, name = atom
    return kind if not name else f"{kind}:{name}"
