"""``lorekit reproduce``: list, a run of a tiny experiment with oracle and random rows
(recorded runs, the side-by-side table, the saved comparison), and clean errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli import run_cli

TINY = """\
paper: Test paper
source: Table 9
title: tiny
env: textcraft
split: test
metric: success_rate
aggregation: one run
runnable: true
columns:
  - {name: all}
rows:
  - {id: oracle, label: Oracle, agent: oracle, published: {all: {value: 97.0, spread: 2.0}}}
  - {id: random, label: Random, agent: random, published: {all: 80.0}}
  - {id: lats, label: LATS, agent: lats, runnable: false, reason: not here,
     published: {all: 38.0}}
"""


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY, encoding="utf-8")
    return path


def test_list_names_each_paper_and_what_cannot_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["reproduce", "list"], capsys)
    assert code == 0, err
    for name in (
        "adapt-table2-textcraft",
        "automanual-table1",
        "automanual-table2-miniwob",
        "automanual-table3-ablation",
        "automanual-table5-miniwob-feedback",
        "automanual-table6-rule-system",
        "agentkit-table1",
        "agentkit-table2-webshop",
        "sagents-fig7",
        "laws-table1-spring-contexts",
        "laws-table2",
    ):
        assert name in out
    # only Laws Table 2 (a training job) cannot run; the others run, MiniWoB++ and S-Agents too
    assert out.count("no: the") == 1 and "PPO" in out


def test_run_records_each_row_and_prints_the_comparison(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.sqlite3"
    args = ["reproduce", "run", str(tiny), "-n", "2", "--store", str(store), "--run-id", "r"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "models that answered here: none (agents without a model)" in flat
    assert "tasks: 2 of the experiment's 200 (split test), drawn across its task groups" in flat
    page = (tmp_path / "reproduce" / "tiny-r.md").read_text()
    # 2 episodes cannot tell 97% from 87%; 0 of 2 against 80% of 200 is a difference
    assert (
        "| Oracle | all | 97.0 ± 2.0 | 100.0 [34.2, 100.0] | 2 | +3.0 [-62.9, +6.9] "
        "| 8%, 52 needed | too few episodes |"
    ) in page
    assert (
        "| Random | all | 80.0 | 0.0 [0.0, 65.8] | 2 | -80.0 [-85.0, -14.0] | 8% | differs |"
    ) in page
    assert "Oracle │ all │ 97.0 ± 2.0 │ 100.0" in flat and "too few" in flat  # printed too
    saved = json.loads((tmp_path / "reproduce" / "tiny-r.json").read_text(encoding="utf-8"))
    assert saved["runs"] == {"oracle": "r.oracle", "random": "r.random"}
    assert [c["verdict"] for c in saved["cells"]] == ["too few episodes", "differs"]
    assert [c["compatible"] for c in saved["cells"]] == [None, False]
    assert saved["tasks"]["played"] == 2 and saved["tasks"]["population"] == 200
    # the same id resumes: nothing is played again
    code, out, err = run_cli(args, capsys)
    assert code == 0 and "2 episodes already done, 0 played now" in err


def test_dry_run_plays_nothing_and_prints_the_plan(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["reproduce", "run", str(tiny), "-n", "2", "--dry-run"], capsys)
    assert code == 0, err
    assert "estimate: ~0 tokens (0 to 0), ~$0.00 ($0.00 to $0.00)" in out and "oracle" in out
    assert not (tmp_path / "runs").exists()
    code, out, err = run_cli(["reproduce", "run", "adapt-table2-textcraft", "--dry-run"], capsys)
    assert code == 0, err
    flat = " ".join(out.split())  # episodes per task group, measured and scaled to 200
    usd = r"~\$[\d.,]+ \(\$[\d.,]+ to \$[\d.,]+\)"
    tokens = r"~[\d.]+M tokens \([\d.]+M to [\d.]+M\)"
    assert re.search(f"estimate: {tokens}, {usd} for 200 episodes per row", flat), flat
    args = ["reproduce", "run", "automanual-table1-alfworld", "--rows", "automanual-gpt4"]
    code, out, err = run_cli([*args, "--dry-run"], capsys)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "first, build automanual: automanual on 6 tasks per type of dev" in flat
    assert "build planner-lib" not in flat  # no chosen row tests with it


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown experiment 'nope'; known: adapt-"),
        (["TINY", "--rows", "zzz"], "--rows: experiment 'tiny' has no row 'zzz'"),
        (["TINY", "--rows", "lats"], "--rows: row 'lats' cannot run here: not here"),
        (["laws-table2-rewards"], "experiment 'laws-table2-rewards' cannot run here: the rows"),
        (["BAD"], "bad.yaml: metric: expected one of success_rate, mean_reward"),
    ],
)
def test_errors_are_one_line_with_exit_2(
    tiny: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    bad = tiny.with_name("bad.yaml")
    bad.write_text(TINY.replace("success_rate", "accuracy"), encoding="utf-8")
    args = [{"TINY": str(tiny), "BAD": str(bad)}.get(a, a) for a in args]
    code, _out, err = run_cli(["reproduce", "run", *args], capsys)
    assert code == 2
    assert err.startswith("lorekit: error: " + message) and err.count("\n") == 1
