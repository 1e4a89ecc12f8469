from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.laws import oracle_experience


def test_collect_learn_score(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records, learned = tmp_path / "r.jsonl", tmp_path / "e.json"
    code, out, _ = run_cli(
        ["laws", "collect", "--successes", "1", "--failures", "1", "--max-steps", "300",
         "-o", str(records)],
        capsys,
    )  # fmt: skip
    assert code == 0 and "records from 300 steps" in out
    code, out, _ = run_cli(["laws", "learn", str(records), "-o", str(learned)], capsys)
    assert code == 0 and learned.exists()
    oracle = tmp_path / "o.json"
    oracle_experience().save(oracle)
    report = tmp_path / "s.json"
    code, out, _ = run_cli(
        ["laws", "score", str(oracle), "--records", str(records), "--json", str(report)], capsys
    )
    assert code == 0 and "make_wood_pickaxe" in out
    assert json.loads(report.read_text())["totals"]["recall"] == 1.0


def test_score_bad_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"source": "hand"}))
    code, _, err = run_cli(["laws", "score", str(bad)], capsys)
    assert code == 2 and "missing field 'laws'" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "edit",
    [
        {"requires": {"energy": 5}, "below": {"energy": 3}},
        {"requires": {"woood": 1}},
    ],
)
def test_score_and_rewards_refuse_an_impossible_law_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: dict[str, object]
) -> None:
    data = oracle_experience().to_json()
    data["laws"]["wake_up"].update(edit)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    for args in (
        ["score", str(bad)],
        ["rewards", str(bad), "--from-laws", "-o", str(tmp_path / "p.json")],
    ):
        code, _, err = run_cli(["laws", *args], capsys)
        assert code == 2 and "laws.wake_up" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1


def test_learn_refuses_a_malformed_record_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = {
        "attributes": {"health": 9, "food": 9, "drink": 9, "energy": "high"},
        "tools": {},
        "materials": {},
        "face": "tree",
        "nearby": [["grass"] * 3, ["grass", "player", "tree"], ["grass"] * 3],
    }
    line = {"achievement": "collect_wood", "action": "collect_wood", "success": True}
    records = tmp_path / "r.jsonl"
    records.write_text(json.dumps({**line, "before": state, "after": state}) + "\n")
    code, _, err = run_cli(["laws", "learn", str(records), "-o", str(tmp_path / "e.json")], capsys)
    assert code == 2 and "r.jsonl:1.before.attributes.energy" in err
    assert "internal error" not in err and len(err.strip().splitlines()) == 1
