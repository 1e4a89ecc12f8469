from __future__ import annotations

from typing import Any

from lorekit.laws.candidates import FACED, Candidates, diverse, informative
from lorekit.laws.records import LawRecord


def _rec(ok: bool, pick: int, face: str, near: list[str]) -> LawRecord:
    state: dict[str, Any] = {
        "attributes": {"health": 9, "food": 9, "drink": 9, "energy": 9},
        "tools": {"wood_pickaxe": pick},
        "materials": {"wood": 0},
        "face": face,
        "nearby": [near + ["grass"] * (3 - len(near)), ["grass", "player", "grass"], ["grass"] * 3],
    }
    return LawRecord("collect_stone", "collect_stone", ok, state, state)


def test_candidates_and_broken() -> None:
    wins = [_rec(True, 1, "stone", ["stone"]), _rec(True, 2, "stone", ["stone", "path"])]
    cands = Candidates.of(wins)
    assert cands.least == {"wood_pickaxe": 1} and cands.faces == ("stone",)
    assert cands.nearby == frozenset({"stone", "grass"})
    assert cands.broken(_rec(False, 0, "stone", ["stone"])) == {("requires", "wood_pickaxe")}
    assert FACED in cands.broken(_rec(False, 1, "water", ["stone"]))


def test_informative_prefers_failures_that_isolate_a_candidate() -> None:
    wins = [_rec(True, 1, "stone", ["stone"])]
    vague = [_rec(False, 0, "grass", ["tree"]) for _ in range(5)]
    sharp = [_rec(False, 0, "stone", ["stone"]), _rec(False, 1, "tree", ["stone"])]
    kept = informative(wins, vague + sharp, 3)
    assert sharp[0] in kept and sharp[1] in kept and len(kept) == 3


def test_diverse_successes_drop_coincidences() -> None:
    # most successes happen by a tree; two do not, and one had 2 pickaxes
    wins = [_rec(True, 1, "stone", ["stone", "tree"]) for _ in range(4)]
    wins += [_rec(True, 2, "stone", ["stone"]), _rec(True, 1, "stone", ["stone", "path"])]
    kept = diverse(wins, 2)
    cands = Candidates.of(kept)
    assert "tree" not in cands.nearby and cands.least == {"wood_pickaxe": 1}
