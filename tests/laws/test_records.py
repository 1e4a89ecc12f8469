from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lorekit.laws.records import (
    STATE_KEYS,
    LawCollection,
    RecordError,
    collect_records,
    read_records,
    write_records,
)


def test_short_collection_is_seeded_and_round_trips(tmp_path: Path) -> None:
    first = collect_records(successes=1, failures=1, seed=3, max_steps=400)
    again = collect_records(successes=1, failures=1, seed=3, max_steps=400)
    assert first.records == again.records and first.steps == 400
    assert any(not r.success for r in first.records) and any(r.success for r in first.records)
    for record in first.records:
        assert set(STATE_KEYS) <= set(record.before) and len(record.before["nearby"]) == 3
    write_records(first.records, tmp_path / "r.jsonl")
    assert read_records(tmp_path / "r.jsonl") == first.records


def test_read_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"achievement": "eat_cow", "action": "eat_cow"}) + "\n")
    with pytest.raises(RecordError, match=r"r.jsonl:1: missing field\(s\) success"):
        read_records(path)
    with pytest.raises(RecordError, match="lorekit laws collect"):
        read_records(tmp_path / "none.jsonl")


@pytest.mark.slow
def test_default_collection_fills_every_quota(default_records: LawCollection) -> None:
    assert default_records.short(10, 10) == []
    fails = [r for r in default_records.records if not r.success]
    # tries at the target itself: stone faced without the pickaxe
    assert any(r.achievement == "collect_stone" and r.before["face"] == "stone" for r in fails)


@pytest.mark.slow
def test_sleep_records_show_a_sleep_that_took(default_records: LawCollection) -> None:
    # a success is a sleep taken below full energy that leaves the player asleep;
    # the later waking step is no record of wake_up
    sleeps = [r for r in default_records.records if r.achievement == "wake_up"]
    wins = [r for r in sleeps if r.success]
    assert wins and all(r.action == "sleep" for r in sleeps)
    assert all(r.before["attributes"]["energy"] < 9 and not r.before["sleeping"] for r in wins)
    assert all(r.after["sleeping"] for r in wins)
    assert all(not r.after["sleeping"] for r in sleeps if not r.success)
    assert any(r.before["attributes"]["energy"] == 9 for r in sleeps if not r.success)


def _state(**edit: object) -> dict[str, object]:
    state: dict[str, object] = {
        "attributes": {"health": 9, "food": 9, "drink": 9, "energy": 9},
        "tools": {},
        "materials": {"wood": 1},
        "face": "tree",
        "nearby": [["grass"] * 3, ["grass", "player", "tree"], ["grass"] * 3],
        "sleeping": False,
    }
    return {**state, **edit}


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"attributes": {"health": 9, "energy": "high"}}, "before.attributes.energy"),
        ({"materials": ["wood"]}, "before.materials: expected an object"),
        ({"materials": {"planks": 3}}, "before.materials.planks: unknown item"),
        ({"tools": {"wood_pickaxe": True}}, "before.tools.wood_pickaxe"),
        ({"nearby": 5}, "before.nearby: expected rows of names"),
        ({"nearby": [["grass", 3]]}, "before.nearby: expected rows of names"),
        ({"face": None}, "before.face: expected a name"),
        ({"sleeping": "no"}, "before.sleeping: expected true or false"),
    ],
)
def test_malformed_states_are_refused_naming_the_line_and_field(
    tmp_path: Path, edit: dict[str, object], needle: str
) -> None:
    # such a line used to pass the reader and crash the learner (an internal error)
    good = {
        "achievement": "collect_wood",
        "action": "collect_wood",
        "success": True,
        "before": _state(),
        "after": _state(materials={"wood": 2}),
    }
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "before": _state(**edit)}) + "\n")
    with pytest.raises(RecordError, match=re.escape(f"r.jsonl:2.{needle}")):
        read_records(path)
    path.write_text(json.dumps(good) + "\n")
    assert len(read_records(path)) == 1
