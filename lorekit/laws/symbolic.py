"""A law learner without an LLM: preconditions and effects by set reasoning.

The paper asks an LLM to read records; this learner does the same job with
counting, as a baseline and as a check of what the records can teach. Per
achievement:

* **Candidates** are what held in *every* success: each tool or material
  with its least count, each name in the 3x3 area, and the set of faced
  things (one "faced one of" condition). The true preconditions are always
  among them (a success meets them all); the rest hold by coincidence.
* **Costs and gains** are the inventory changes (vitals included) seen in
  most successes; a rise that hit crafter's cap of 9 was cut short and only
  bounds the gain from below (see ``_effects``).
* An **upper bound** on a vital (``below``: energy < 9 for sleep) is a
  candidate when no success had it full; it is judged like the rest.
* A consumed item is required (an inventory cannot go below zero).
* What the faced cell **leaves** (``leaves``: mined stone leaves a path) is
  the cell after the action when every success but at most one shows the
  same change (a creature or an arrow can step into the cell at the same
  tick); a cell that stays what it was, or one that turns into different
  things (a defeated zombie uncovers whatever it stood on), gives none.
* A **near miss** is a failure that breaks exactly one candidate: that
  candidate must be a true precondition. Failures that break several
  candidates and none accepted so far are then covered by the cheapest set
  of candidates (an item costs 1, a faced condition 1.5 per allowed kind, a
  3x3 name 2.5; see ``_cover``); equally cheap sets are all kept, so two
  tools always made together are both required.
* Failures that break no candidate mean chance or hidden state (a sapling
  drops one time in ten, a cow needs more hits without a sword, a sleeper
  wakes when rested). There a near miss proves nothing (the cow hit without
  a sword failed for its health, not for the missing pickaxe), so the law
  keeps only a faced condition, and only when every success faced the same
  kind of thing and some failure faced another.

A required count is the smallest one the records allow: at least the cost,
and above the count of every failure that only this requirement explains.
``confidence`` is the share of failures the law explains, scaled by
``n / (n + 1)`` for ``n`` successes.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence

from lorekit.envs.crafter.core import ACHIEVEMENTS
from lorekit.laws.candidates import FACED, Atom, Candidates
from lorekit.laws.experience import LAW_ACTIONS, Experience, Law
from lorekit.laws.record_format import LawRecord

CAP = 9


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
    cands = Candidates.of(wins)
    least, faces = cands.least, list(cands.faces)
    candidates = cands.atoms()
    broken = cands.broken

    breaks = [broken(r) for r in fails]
    chance = sum(1 for b in breaks if not b)
    near = Counter(next(iter(b)) for b in breaks if len(b) == 1)
    accepted: set[Atom] = {("requires", k) for k in costs if ("requires", k) in candidates}
    if not chance:
        accepted |= set(near)
        accepted |= _cover([b for b in breaks if not b & accepted], len(faces), least)
    elif len(faces) == 1 and any(FACED in b for b in breaks):
        accepted.add(FACED)  # chance decides, but every success faced one kind
    requires = {
        item: _count(item, least[item], costs.get(item, 0), fails, broken, accepted)
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
        below={
            item: _bound(item, cands.most[item], fails, broken, accepted)
            for kind, item in sorted(accepted)
            if kind == "below"
        },
        costs=costs,
        gains=gains,
        leaves=_leaves(wins, faces),
        confidence=round(share * len(wins) / (len(wins) + 1), 3),
        evidence={
            "successes": len(wins),
            "failures": len(fails),
            "near_misses": {_label(a): n for a, n in sorted(near.items())},
            "unexplained_failures": chance,
            "regime": "chance" if chance else "deterministic",
            "explained_failures": explained,
            "candidates": [_label(a) for a in candidates],
            "rejected": [_label(a) for a in candidates if a not in accepted],
        },
    )


def _effects(wins: Sequence[LawRecord]) -> tuple[dict[str, int], dict[str, int]]:
    """(costs, gains): changes seen in most successes (at least half, and
    twice when there are two or more: a vital ticks on its own every few
    dozen steps).

    A cost is the most common drop. A gain is the most common rise among
    successes that ended below crafter's cap of 9, raised to the largest rise
    that hit the cap: a capped rise was cut short, so it only bounds the gain
    from below (eating at 4 food shows +5 of a cow's +6).
    """
    costs: dict[str, int] = {}
    gains: dict[str, int] = {}
    for item in sorted({k for r in wins for k in r.inventory()}):
        pairs = [(r.inventory().get(item, 0), r.inventory("after").get(item, 0)) for r in wins]
        drops = [after - before for before, after in pairs if after < before]
        if _common(len(drops), len(pairs)):
            costs[item] = -_mode(drops)
            continue
        rises = [(after - before, after >= CAP) for before, after in pairs if after > before]
        if _common(len(rises), len(pairs)):
            exact = [d for d, capped in rises if not capped]
            gains[item] = max([_mode(exact)] if exact else [], default=0)
            gains[item] = max(gains[item], *(d for d, capped in rises if capped), 0)
    return costs, gains


def _leaves(wins: Sequence[LawRecord], faces: Sequence[str]) -> str | None:
    """What the faced cell becomes, when the successes agree on one change.

    Needs three successes, all but one of them showing the same new cell;
    a result that is one of the faced kinds themselves is no change.
    """
    if len(wins) < 3:
        return None
    changed = Counter(
        str(r.after["face"]) for r in wins if str(r.after["face"]) != str(r.before["face"])
    )
    if not changed:
        return None
    cell, seen = changed.most_common(1)[0]
    if seen < len(wins) - 1 or cell in faces:
        return None
    return cell


def _mode(values: list[int]) -> int:
    """The most common value; among equally common ones, the largest change."""
    counts = Counter(values)
    return max(counts, key=lambda v: (counts[v], abs(v)))


def _common(seen: int, total: int) -> bool:
    """Seen in at least half of the cases, and twice when there are two or more
    (vitals drift on their own every few dozen steps)."""
    return seen >= max(min(2, total), total / 2)


#: Prior cost of a condition in the cover: a 3x3 area holds several names by
#: chance (a cave's path, the grass around a table), so one name covering many
#: failures is weak evidence; the faced thing and the inventory are not.
WEIGHTS = {"faced": 1.5, "requires": 1.0, "nearby": 2.5, "below": 3.0}
_EXACT_LIMIT = 16


def _cover(
    unexplained: list[set[Atom]], kinds: int = 1, least: dict[str, int] | None = None
) -> set[Atom]:
    """The cheapest sets of candidates that break every one of these failures
    (a weighted minimum hitting set); all cheapest sets are kept, joined,
    since the records cannot choose between them (two tools always made
    together are both required). A faced condition costs per allowed kind
    (``kinds``): "faces a table or a furnace or grass" is a weak claim; an
    item costs per unit of its least held count (``least``): "holds 2
    saplings" is a stronger claim than "holds one". Past 16 atoms, a greedy
    cover instead."""
    scale = {("faced", ""): max(1, kinds)} | {("requires", k): n for k, n in (least or {}).items()}

    def cost(atom: Atom) -> float:
        return WEIGHTS[atom[0]] * scale.get(atom, 1)

    left = [b for b in unexplained if b]
    if not left:
        return set()
    pool = sorted(set().union(*left))
    if len(pool) > _EXACT_LIMIT:
        return _greedy(left, cost)
    best, chosen = float("inf"), set()
    for size in range(1, len(pool) + 1):
        if size * min(WEIGHTS.values()) > best + 1e-9:
            break
        for combo in itertools.combinations(pool, size):
            picked = set(combo)
            if all(b & picked for b in left):
                weight = sum(cost(a) for a in combo)
                if weight < best - 1e-9:
                    best, chosen = weight, picked
                elif weight <= best + 1e-9:
                    chosen |= picked
    return chosen


def _greedy(left: list[set[Atom]], cost: Callable[[Atom], float]) -> set[Atom]:
    chosen: set[Atom] = set()
    while left:
        counts = Counter(a for b in left for a in b)
        top = max(n / cost(a) for a, n in counts.items())
        best = {a for a, n in counts.items() if n / cost(a) == top}
        chosen |= best
        left = [b for b in left if not b & best]
    return chosen


def _count(
    item: str,
    least: int,
    cost: int,
    fails: Sequence[LawRecord],
    broken: Callable[[LawRecord], set[Atom]],
    accepted: set[Atom],
) -> int:
    """Smallest required count the records allow: the cost, and above the
    count held in every failure that only this requirement explains."""
    atom: Atom = ("requires", item)
    floor = max(cost, 1)
    for record in fails:
        if broken(record) & accepted == {atom}:
            floor = max(floor, record.inventory().get(item, 0) + 1)
    return min(floor, least)


def _bound(
    vital: str,
    least_bound: int,
    fails: Sequence[LawRecord],
    broken: Callable[[LawRecord], set[Atom]],
    accepted: set[Atom],
) -> int:
    """Loosest upper bound the records allow: the lowest level held in a
    failure that only this bound explains (else one above every success)."""
    atom: Atom = ("below", vital)
    levels = [r.inventory().get(vital, 0) for r in fails if broken(r) & accepted == {atom}]
    return min(levels, default=least_bound)


def _label(atom: Atom) -> str:
    kind, name = atom
    return kind if not name else f"{kind}:{name}"
