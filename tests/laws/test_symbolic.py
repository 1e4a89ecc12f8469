from __future__ import annotations

from typing import Any

import pytest

from lorekit.laws.records import LawCollection, LawRecord
from lorekit.laws.score import score
from lorekit.laws.symbolic import learn, learn_law


def _state(wood: int, near: list[str], face: str = "grass", extra: int = 0) -> dict[str, Any]:
    grid = [["grass"] * 3, ["grass", "player", "grass"], ["grass"] * 3]
    for i, name in enumerate(near):
        grid[0][i] = name
    return {
        "attributes": {"health": 9, "food": 9, "drink": 9, "energy": 9},
        "tools": {"wood_pickaxe": extra},
        "materials": {"wood": wood},
        "face": face,
        "nearby": grid,
    }


def _make(wood: int, near: list[str], ok: bool, extra: int = 0) -> LawRecord:
    after = _state(wood - 1 if ok else wood, near, extra=extra + (1 if ok else 0))
    return LawRecord(
        "make_wood_pickaxe", "make_wood_pickaxe", ok, _state(wood, near, extra=extra), after
    )


def test_near_misses_reveal_table_and_wood() -> None:
    records = [_make(w, ["table"], True) for w in (1, 2, 3)]
    records += [_make(3, [], False), _make(0, ["table"], False)]
    law = learn_law("make_wood_pickaxe", records)
    assert law.requires == {"wood": 1} and law.nearby == ["table"] and law.faced == []
    assert law.costs == {"wood": 1} and law.gains == {"wood_pickaxe": 1}
    assert law.evidence["near_misses"] == {"nearby:table": 1, "requires:wood": 1}
    assert law.confidence == pytest.approx(0.75)


def test_coincidences_without_failures_stay_out() -> None:
    # every success also held a pickaxe and stood by water; no failure shows they matter
    records = [_make(2, ["table", "water"], True, extra=1) for _ in range(3)]
    records.append(_make(2, ["water"], False, extra=1))
    law = learn_law("make_wood_pickaxe", records)
    assert law.nearby == ["table"] and "wood_pickaxe" not in law.requires


@pytest.mark.slow
def test_recovers_crafter_laws_from_default_records(default_records: LawCollection) -> None:
    learned = learn(default_records.records)
    assert len(learned.laws) == 22 and learned.source == "symbolic"
    totals = score(learned, default_records.records).totals()
    assert totals["costs_exact"] == 22 and totals["gains_exact"] == 22
    assert totals["revealable_recall"] == 1.0  # all the records can show
    assert totals["precision"] >= 0.9 and totals["recall"] >= 0.9
    cow = learned.laws["eat_cow"]  # chance decides: only the faced kind is kept
    assert cow.faced == ["cow"] and cow.requires == {} and cow.gains == {"food": 6}
    assert learned.laws["eat_plant"].faced == ["ripe plant"]
    # what the faced cell becomes (or that it stays): every law whose truth knows it
    assert totals["leaves_known"] == 19 and totals["leaves_exact"] == 19
    assert learned.laws["eat_plant"].leaves == "plant"  # eaten, it grows again
    assert learned.laws["collect_stone"].leaves == "path"
    assert learned.laws["make_wood_pickaxe"].leaves is None  # the table stays a table


def test_chance_failures_keep_only_a_single_faced_kind() -> None:
    def hit(ok: bool, wood: int, face: str = "cow") -> LawRecord:
        before = _state(wood, ["cow"], face=face)
        after = {**before, "attributes": {**before["attributes"], "food": 9 if ok else 3}}
        before = {**before, "attributes": {**before["attributes"], "food": 3}}
        return LawRecord("eat_cow", "eat_cow", ok, before, after)

    records = [hit(True, 1), hit(True, 2), hit(False, 1), hit(False, 0), hit(False, 1, "water")]
    law = learn_law("eat_cow", records)
    # the hit without wood failed, but so did one with wood: chance, not a law
    assert law.requires == {} and law.faced == ["cow"] and law.gains == {"food": 6}
    assert law.evidence["unexplained_failures"] == 1


def _eat(food: tuple[int, int], health: tuple[int, int] = (9, 9)) -> LawRecord:
    before, after = _state(0, ["cow"], face="cow"), _state(0, ["cow"], face="cow")
    before["attributes"] = {**before["attributes"], "food": food[0], "health": health[0]}
    after["attributes"] = {**after["attributes"], "food": food[1], "health": health[1]}
    return LawRecord("eat_cow", "eat_cow", True, before, after)


def test_gains_read_uncapped_successes_and_ignore_drift() -> None:
    # +6 seen below the cap; capped meals show less; one health tick is drift
    law = learn_law("eat_cow", [_eat((1, 7)), _eat((2, 8)), _eat((5, 9)), _eat((7, 9), (7, 8))])
    assert law.gains == {"food": 6} and law.costs == {}


def test_always_capped_gain_takes_the_largest_rise() -> None:
    law = learn_law("eat_cow", [_eat((5, 9)), _eat((6, 9)), _eat((9, 9))])
    assert law.gains == {"food": 4}


def _sleep(energy: int, ok: bool) -> LawRecord:
    before = _state(0, [])
    before["attributes"] = {**before["attributes"], "energy": energy}
    before["sleeping"] = False
    return LawRecord("wake_up", "sleep", ok, before, {**before, "sleeping": ok})


def test_learns_the_upper_bound_of_sleep() -> None:
    records = [_sleep(e, True) for e in (3, 6, 8)] + [_sleep(9, False), _sleep(9, False)]
    law = learn_law("wake_up", records)
    assert law.below == {"energy": 9} and law.requires == {} and law.faced == []
    assert "below:energy" in law.evidence["near_misses"]


def _mine(face_after: str, ok: bool = True, face_before: str = "stone") -> LawRecord:
    before = _state(0, [], face=face_before, extra=1)
    after = _state(0, [], face=face_after if ok else face_before, extra=1)
    return LawRecord("collect_stone", "collect_stone", ok, before, after)


def test_leaves_is_the_change_every_success_but_one_shows() -> None:
    # an arrow can fly into the mined cell at the same tick: one odd success is tolerated
    records = [_mine("path") for _ in range(5)] + [_mine("arrow"), _mine("stone", ok=False)]
    assert learn_law("collect_stone", records).leaves == "path"
    # two odd successes: the records do not agree on one result
    records += [_mine("grass")]
    assert learn_law("collect_stone", records).leaves is None


def test_leaves_needs_a_change_and_three_successes() -> None:
    unchanged = [_mine("stone") for _ in range(4)]  # the cell stays what it was
    assert learn_law("collect_stone", unchanged).leaves is None
    assert learn_law("collect_stone", [_mine("path"), _mine("path")]).leaves is None
    # a result that is itself one of the faced kinds is no change either
    mixed = [_mine("path", face_before="stone") for _ in range(3)]
    mixed += [_mine("stone", face_before="path") for _ in range(3)]
    assert learn_law("collect_stone", mixed).leaves is None
