"""Reward predicates from laws: the generated code, the state view, checks on
records, and saving a set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lorekit.laws.experience import Law, oracle_experience
from lorekit.laws.records import LawRecord
from lorekit.laws.rewards import (
    PredicateEntry,
    PredicateSet,
    check_predicate,
    compile_set,
    law_source,
    penalty_source,
    predicates_from_experience,
)
from lorekit.laws.state_api import LawState, describe_state_api, state_from_record
from lorekit.sandbox import compile_predicate

ORACLE = oracle_experience()


def satisfying(law: Law) -> LawState:
    """A state in which every precondition of ``law`` just holds."""
    faced = law.faced[0] if law.faced else "grass"
    if law.achievement == "eat_plant":
        faced = "ripe plant"
    return LawState(dict(law.requires), faced, frozenset(law.nearby))


def broken(law: Law) -> list[LawState]:
    """States that each miss exactly one precondition."""
    base = satisfying(law)
    out = []
    for item, count in law.requires.items():
        out.append(LawState({**base.inventory, item: count - 1}, base.faced, base.nearby))
    for item, bound in law.below.items():
        out.append(LawState({**base.inventory, item: bound}, base.faced, base.nearby))
    for name in law.nearby:
        out.append(LawState(base.inventory, base.faced, base.nearby - {name}))
    if law.faced:
        out.append(LawState(base.inventory, "edge", base.nearby))
    return out


@pytest.mark.parametrize("achievement", sorted(ORACLE.laws))
def test_law_source_holds_exactly_when_every_precondition_does(achievement: str) -> None:
    law = ORACLE.laws[achievement]
    valid = compile_predicate(law_source(law))
    state = satisfying(law)
    assert valid(state, state.faced) is True
    for state in broken(law):
        assert valid(state, state.faced) is False, state


@pytest.mark.parametrize("achievement", sorted(ORACLE.laws))
def test_penalty_source_is_false_only_when_no_precondition_holds(achievement: str) -> None:
    law = ORACLE.laws[achievement]
    partly = compile_predicate(penalty_source(law))
    nothing = LawState({}, "edge", frozenset())
    has_preconditions = bool(law.requires or law.nearby or law.faced)
    assert partly(nothing, nothing.faced) is (not has_preconditions)
    for item, count in law.requires.items():  # any single one is enough
        state = LawState({item: count}, "edge", frozenset())
        assert partly(state, state.faced) is True
    for name in law.nearby:
        state = LawState({}, "edge", frozenset({name}))
        assert partly(state, state.faced) is True


def test_eat_plant_law_means_a_ripe_plant() -> None:
    valid = compile_predicate(law_source(ORACLE.laws["eat_plant"]))
    young = LawState({}, "plant", frozenset())
    ripe = LawState({}, "ripe plant", frozenset())
    assert not valid(young, young.faced) and valid(ripe, ripe.faced)


def test_oracle_pays_sleep_only_below_full_energy() -> None:
    # crafter's sleep is a no-op at full energy: the reward must not pay it
    valid = compile_predicate(law_source(ORACLE.laws["wake_up"]))
    assert valid(LawState({"energy": 5}, "grass", frozenset()), "grass")
    assert not valid(LawState({"energy": 9}, "grass", frozenset()), "grass")


def test_law_with_bad_counts_is_refused() -> None:
    law = Law("collect_wood", "collect_wood", {"wood": "two"}, [], [], {}, {})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="requires must map names to counts"):
        law_source(law)


def paper_state(
    inventory: dict[str, int] | None = None, face: str = "grass", near: str = "grass"
) -> dict[str, Any]:
    inv = dict(inventory or {})
    return {
        "attributes": {k: inv.pop(k, 9) for k in ("health", "food", "drink", "energy")},
        "tools": {k: v for k, v in inv.items() if "_" in k},
        "materials": {k: v for k, v in inv.items() if "_" not in k},
        "face": face,
        "nearby": [["grass", near, "grass"], ["grass", "player", face], ["grass"] * 3],
    }


def record(achievement: str, success: bool, **state: Any) -> LawRecord:
    before = paper_state(**state)
    return LawRecord(achievement, achievement, success, before, before)


def test_state_from_record_reads_both_formats() -> None:
    paper = paper_state({"wood": 2, "wood_pickaxe": 1}, face="stone", near="table")
    view = state_from_record(paper)
    assert view.inventory["wood"] == 2 and view.inventory["wood_pickaxe"] == 1
    assert view.inventory["iron"] == 0 and view.inventory["health"] == 9
    assert view.faced == "stone" and view.nearby == frozenset({"grass", "table", "stone"})
    assert "player" not in view.nearby  # the centre cell is the player itself
    structured = {
        "attributes": paper["attributes"],
        "tools": paper["tools"],
        "materials": paper["materials"],
        "faced": "stone",
        "neighbourhood": paper["nearby"],
        "sleeping": True,
    }
    other = state_from_record(structured)
    assert other.inventory == view.inventory and other.nearby == view.nearby and other.sleeping
    with pytest.raises(ValueError, match="lacks 'tools'"):
        state_from_record({"attributes": {}, "materials": {}})


def test_describe_state_api_names_the_fields_and_values() -> None:
    text = describe_state_api()
    for needle in ("state.inventory", "state.faced", "state.nearby", "wood_pickaxe", "table"):
        assert needle in text
    assert "{" not in text.replace("{{", "")  # every field filled


STONE = [
    record("collect_stone", True, inventory={"wood_pickaxe": 1}, face="stone"),
    record("collect_stone", True, inventory={"wood_pickaxe": 2}, face="stone"),
    record("collect_stone", False, inventory={}, face="stone"),
    record("collect_stone", False, inventory={"wood_pickaxe": 1}, face="grass"),
    record("collect_wood", True, face="tree"),  # another achievement: ignored
]


def test_check_counts_right_and_wrong_per_outcome() -> None:
    right = compile_predicate(law_source(ORACLE.laws["collect_stone"]))
    check = check_predicate(right, STONE, "collect_stone")
    assert (check.successes, check.failures, check.correct, check.accuracy) == (2, 2, 4, 1.0)
    sloppy = compile_predicate("def valid(state, target):\n    return target == 'stone'\n")
    check = check_predicate(sloppy, STONE, "collect_stone")
    assert check.right_on_successes == 2 and check.right_on_failures == 1
    assert check.accuracy == 0.75 and len(check.mistakes) == 1
    assert check.mistakes[0].expected is False and check.mistakes[0].got is True
    crash = compile_predicate("def valid(state, target):\n    return state.inventory['x'] > 0\n")
    check = check_predicate(crash, STONE, "collect_stone")
    assert check.errors == 4 and check.accuracy == 0.0 and check.mistakes[0].error
    assert check_predicate(right, STONE, "collect_iron").accuracy is None


def test_set_from_experience_with_accuracy_saves_and_loads(tmp_path: Path) -> None:
    pset = predicates_from_experience(ORACLE, STONE)
    assert len(pset.entries) == 22
    stone = pset.entries["collect_stone"]
    assert stone.accuracy == 1.0 and stone.checked == 4 and stone.origin == "law:oracle"
    assert pset.entries["collect_iron"].accuracy is None
    path = tmp_path / "predicates.json"
    pset.save(path)
    loaded = PredicateSet.load(path)
    assert loaded == pset
    assert set(compile_set(loaded)) == {e.action for e in pset.entries.values()}
    assert {row["achievement"] for row in loaded.summary()} == set(ORACLE.laws)


def test_loading_rejects_what_is_not_a_set(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"entries": {}}))
    with pytest.raises(ValueError, match="not a predicate set"):
        PredicateSet.load(path)
    good = predicates_from_experience(ORACLE).to_json()
    good["entries"]["collect_wood"]["colour"] = "red"
    path.write_text(json.dumps(good))
    with pytest.raises(ValueError, match="unknown fields"):
        PredicateSet.load(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="cannot read predicate set"):
        PredicateSet.load(path)


def test_compile_set_refuses_two_entries_for_one_action() -> None:
    source = "def valid(state, target):\n    return True\n"
    pset = PredicateSet(
        {
            "a": PredicateEntry("a", "collect_wood", source),
            "b": PredicateEntry("b", "collect_wood", source),
        }
    )
    with pytest.raises(ValueError, match="both reward action 'collect_wood'"):
        compile_set(pset)
    pset = PredicateSet({"a": PredicateEntry("a", "collect_wood", "import os")})
    with pytest.raises(ValueError, match="does not compile"):
        compile_set(pset)


def test_hostile_names_in_a_law_stay_data() -> None:
    """Laws may come from a model: their names are quoted, never spliced as code."""
    odd = 'x"""\n    import os\n    """'
    law = Law(odd, "collect_wood", {odd: 1}, [odd], [odd], {}, {})
    valid = compile_predicate(law_source(law))
    partly = compile_predicate(penalty_source(law))
    state = LawState({odd: 1}, odd, frozenset({odd}))
    assert valid(state, odd) and partly(LawState({}, odd, frozenset()), odd)
    assert not valid(LawState({odd: 1}, "tree", frozenset({odd})), "tree")
