from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lorekit.laws import LAW_ACTIONS, Experience, ExperienceError, oracle_experience


def test_law_actions_cover_the_22_achievements() -> None:
    assert len(LAW_ACTIONS) == 22
    assert LAW_ACTIONS["wake_up"] == "sleep"
    assert LAW_ACTIONS["collect_wood"] == "collect_wood"


def test_oracle_matches_crafter_rules() -> None:
    oracle = oracle_experience()
    pick = oracle.laws["make_stone_pickaxe"]
    assert pick.requires == {"wood": 1, "stone": 1}
    assert pick.nearby == ["table"]
    assert pick.costs == {"wood": 1, "stone": 1} and pick.gains == {"stone_pickaxe": 1}
    assert oracle.laws["collect_stone"].faced == ["stone"]
    assert oracle.laws["eat_cow"].gains == {"food": 6}


def test_save_load_round_trip(tmp_path: Path) -> None:
    oracle = oracle_experience()
    oracle.save(tmp_path / "e.json")
    assert Experience.load(tmp_path / "e.json") == oracle


def _broken(tmp_path: Path, edit: dict[str, object]) -> Path:
    data = oracle_experience().to_json()
    data["laws"]["place_table"].update(edit)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"requires": {"wood": -1}}, "laws.place_table.requires.wood"),
        ({"requires": {"wood": "two"}}, "laws.place_table.requires.wood"),
        ({"action": "do"}, "laws.place_table.action"),
        ({"nearby": "table"}, "laws.place_table.nearby"),
        ({"colour": "red"}, "unknown field(s) colour"),
        ({"below": {"energy": 0}}, "laws.place_table.below.energy"),
    ],
)
def test_load_names_the_bad_field(tmp_path: Path, edit: dict[str, object], needle: str) -> None:
    with pytest.raises(ExperienceError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        Experience.load(_broken(tmp_path, edit))


def test_load_missing_field_and_bad_json(tmp_path: Path) -> None:
    data = oracle_experience().to_json()
    del data["laws"]["eat_cow"]["gains"]
    (tmp_path / "a.json").write_text(json.dumps(data))
    with pytest.raises(ExperienceError, match=r"laws\.eat_cow: missing field"):
        Experience.load(tmp_path / "a.json")
    (tmp_path / "b.json").write_text("{not json")
    with pytest.raises(ExperienceError, match="not valid JSON"):
        Experience.load(tmp_path / "b.json")


def test_render_lists_preconditions_costs_and_gains() -> None:
    text = oracle_experience().render()
    line = next(x for x in text.splitlines() if x.startswith("- make_wood_pickaxe"))
    assert "1 wood" in line and "table nearby" in line and "gives 1 wood_pickaxe" in line
    assert "sleep (unlocks wake_up)" in text
    sleep = next(x for x in text.splitlines() if x.startswith("- sleep"))
    assert "energy below 9" in sleep


def test_upper_bounds_round_trip_and_are_optional(tmp_path: Path) -> None:
    data = oracle_experience().to_json()
    assert data["laws"]["wake_up"]["below"] == {"energy": 9}
    del data["laws"]["place_table"]["below"]  # files written before the field still load
    loaded = Experience.from_json(data)
    assert loaded.laws["wake_up"].below == {"energy": 9} and loaded.laws["place_table"].below == {}


@pytest.mark.parametrize(
    ("law", "edit", "needle"),
    [
        # a typo would compile to a predicate that never holds: no bonus, ever
        (
            "collect_stone",
            {"requires": {"woood_pickaxe": 1}},
            "requires.woood_pickaxe: unknown item",
        ),
        ("place_table", {"costs": {"planks": 2}}, "costs.planks: unknown item"),
        ("eat_cow", {"gains": {"beef": 1}}, "gains.beef: unknown item"),
        ("wake_up", {"below": {"tiredness": 9}}, "below.tiredness: unknown item"),
        ("collect_stone", {"faced": ["stonee"]}, "faced: unknown thing 'stonee'"),
        ("make_wood_pickaxe", {"nearby": ["tabel"]}, "nearby: unknown thing 'tabel'"),
        ("collect_stone", {"leaves": "road"}, "leaves: unknown thing 'road'"),
        # bounds both ways that no state meets, or that crafter's counts never reach
        ("wake_up", {"requires": {"energy": 5}, "below": {"energy": 3}}, "no state has both"),
        ("wake_up", {"requires": {"energy": 9}, "below": {"energy": 9}}, "no state has both"),
        ("wake_up", {"below": {"energy": 12}}, "below.energy: a bound above 10"),
        ("collect_wood", {"requires": {"wood": 10}}, "requires.wood: crafter's counts stop at 9"),
    ],
)
def test_load_refuses_names_and_bounds_crafter_cannot_have(
    tmp_path: Path, law: str, edit: dict[str, object], needle: str
) -> None:
    data = oracle_experience().to_json()
    data["laws"][law].update(edit)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ExperienceError, match=re.escape(needle)) as info:
        Experience.load(path)
    assert f"laws.{law}" in str(info.value) and "\n" not in str(info.value)


def test_load_keeps_every_name_crafter_has() -> None:
    data = oracle_experience().to_json()
    data["laws"]["eat_plant"]["faced"] = ["ripe plant", "plant"]
    data["laws"]["make_wood_pickaxe"]["nearby"] = ["table", "cow", "edge", "arrow"]
    data["laws"]["wake_up"]["requires"] = {"energy": 1}  # 1 <= energy < 9 is possible
    loaded = Experience.from_json(data)
    assert loaded.laws["make_wood_pickaxe"].nearby == ["table", "cow", "edge", "arrow"]
