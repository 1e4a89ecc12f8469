from __future__ import annotations

import json
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
