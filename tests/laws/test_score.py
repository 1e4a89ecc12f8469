from __future__ import annotations

import copy
from typing import Any

from lorekit.laws import Experience, oracle_experience
from lorekit.laws.records import LawRecord
from lorekit.laws.score import atoms, revealable, score


def _variant() -> Experience:
    return copy.deepcopy(oracle_experience())


def test_perfect_experience_scores_one() -> None:
    totals = score(oracle_experience()).totals()
    assert totals["precision"] == 1.0 and totals["recall"] == 1.0
    assert totals["costs_exact"] == 22 and totals["gains_exact"] == 22


def test_missing_requirement_lowers_recall_only() -> None:
    exp = _variant()
    exp.laws["collect_stone"].requires = {}
    row = next(r for r in score(exp).rows if r.achievement == "collect_stone")
    assert row.recall == 0.5 and row.precision == 1.0
    assert row.missing == ["requires:wood_pickaxe>=1"]


def test_extra_nearby_lowers_precision_only() -> None:
    exp = _variant()
    exp.laws["make_wood_pickaxe"].nearby = ["table", "water"]
    row = next(r for r in score(exp).rows if r.achievement == "make_wood_pickaxe")
    assert row.precision == 2 / 3 and row.recall == 1.0 and row.extra == ["nearby:water"]


def test_wrong_count_is_a_miss_and_an_extra() -> None:
    exp = _variant()
    exp.laws["place_table"].requires = {"wood": 1}
    row = next(r for r in score(exp).rows if r.achievement == "place_table")
    assert row.extra == ["requires:wood>=1"] and "requires:wood>=2" in row.missing


def test_wrong_cost_fails_exact_match() -> None:
    exp = _variant()
    exp.laws["make_iron_sword"].costs = {"iron": 1}
    result = score(exp)
    row = next(r for r in result.rows if r.achievement == "make_iron_sword")
    assert not row.costs_ok and row.gains_ok
    assert result.totals()["costs_exact"] == 21


def test_missing_law_counts_as_empty() -> None:
    exp = _variant()
    del exp.laws["eat_cow"]
    row = next(r for r in score(exp).rows if r.achievement == "eat_cow")
    assert row.recall == 0.0 and not row.gains_ok
    assert atoms(None) == set()


def _table_try(ok: bool, wood: int, face: str) -> LawRecord:
    state: dict[str, Any] = {
        "attributes": {"health": 9, "food": 9, "drink": 9, "energy": 9},
        "tools": {},
        "materials": {"wood": wood},
        "face": face,
        "nearby": [["grass"] * 3, ["grass", "player", "grass"], ["grass"] * 3],
    }
    return LawRecord("place_table", "place_table", ok, state, state)


def test_revealable_needs_a_failure_that_isolates_the_precondition() -> None:
    truth = oracle_experience().laws["place_table"]
    wins = [_table_try(True, 2, "grass"), _table_try(True, 3, "sand")]
    # lacks wood AND faces a tree: shows neither precondition on its own
    assert revealable(truth, [*wins, _table_try(False, 1, "tree")]) == set()
    shown = revealable(truth, [*wins, _table_try(False, 1, "grass"), _table_try(False, 5, "tree")])
    # the faced atoms shown are those some success faced (path never was)
    assert shown == {"requires:wood>=2", "faced:grass", "faced:sand"}


def test_upper_bound_is_an_atom_the_empty_sleep_law_misses() -> None:
    oracle = oracle_experience()
    assert "below:energy<9" in atoms(oracle.laws["wake_up"])
    empty = copy.deepcopy(oracle)
    empty.laws["wake_up"].below = {}
    row = next(r for r in score(empty).rows if r.achievement == "wake_up")
    assert row.recall == 0.0 and row.missing == ["below:energy<9"]


def test_ripe_plant_is_told_apart_from_a_plant() -> None:
    variant = copy.deepcopy(oracle_experience())
    variant.laws["eat_plant"].faced = ["plant"]
    row = next(r for r in score(variant).rows if r.achievement == "eat_plant")
    assert row.missing == ["faced:ripe plant"] and row.extra == ["faced:plant"]


def test_what_the_faced_cell_becomes_is_scored_where_the_truth_knows_it() -> None:
    truth = oracle_experience()
    changes = {k for k, law in truth.laws.items() if law.leaves is not None}
    assert {"collect_stone", "collect_diamond", "place_table", "eat_plant"} <= changes
    assert truth.laws["collect_stone"].leaves == "path"
    varies = {"eat_cow", "defeat_zombie", "defeat_skeleton"}
    totals = score(truth).totals()
    assert totals["leaves_exact"] == totals["leaves_known"] == 22 - len(varies)
    # an old file (no "leaves" field) loads, and loses only the cells that change
    old = truth.to_json()
    for law in old["laws"].values():
        del law["leaves"]
    loaded = Experience.from_json(old)
    rows = {r.achievement: r for r in score(loaded).rows}
    assert rows["collect_stone"].leaves_ok is False and rows["eat_cow"].leaves_ok is None
    assert rows["collect_drink"].leaves_ok is True  # water stays water: None is right
    assert score(loaded).totals()["leaves_exact"] == 22 - len(varies) - len(changes)
    assert score(loaded).totals()["precision"] == totals["precision"]


def test_a_wrong_cell_change_is_scored_where_the_truth_says_the_cell_stays() -> None:
    # water stays water, a crafted tool leaves the faced cell alone: claiming a
    # change there is a wrong law, and must not pass as unscored
    truth = oracle_experience()
    wrong = copy.deepcopy(truth)
    wrong.laws["collect_drink"].leaves = "path"
    wrong.laws["make_wood_pickaxe"].leaves = "table"
    rows = {r.achievement: r for r in score(wrong).rows}
    assert rows["collect_drink"].leaves_ok is False
    assert rows["make_wood_pickaxe"].leaves_ok is False
    assert score(wrong).totals()["leaves_exact"] == score(truth).totals()["leaves_exact"] - 2
    # a defeated creature uncovers whatever it stood on: no law, not scored
    wrong.laws["eat_cow"].leaves = "grass"
    assert next(r for r in score(wrong).rows if r.achievement == "eat_cow").leaves_ok is None


def test_an_eaten_plant_stays_as_a_young_plant() -> None:
    # crafter resets the plant's growth (objects.py): the faced cell turns from
    # a ripe plant into a plant, a change the truth states and the score checks
    truth = oracle_experience()
    assert truth.laws["eat_plant"].leaves == "plant"
    silent = copy.deepcopy(truth)
    silent.laws["eat_plant"].leaves = None
    row = next(r for r in score(silent).rows if r.achievement == "eat_plant")
    assert row.leaves_ok is False
