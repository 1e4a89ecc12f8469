"""Summaries print no stray pieces: a provenance line without an empty head, a call count
without a missing budget, no model named for a run that called none."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.eval.report_html_data import run_figures
from lorekit.eval.store import RunStore


def test_tasks_line_of_a_run_with_tasks_picked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "r.sqlite3")
    args = ["run", "textcraft", "--agent", "oracle", "--tasks", "lectern,depth-2", "--store", store]
    code, out, err = run_cli([*args, "--run-id", "t"], capsys)
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("tasks:")]
    assert lines == ["tasks: --tasks lectern,depth-2"], lines


def test_show_of_a_react_episode_has_no_missing_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "r.sqlite3")
    args = ["run", "textcraft", "--agent", "react", "--model", "scripted:simulate", "-n", "1"]
    assert run_cli([*args, "--store", store, "--run-id", "r"], capsys)[0] == 0
    code, out, err = run_cli(["show", "r", "0", "--store", store], capsys)
    assert code == 0, err
    header = next(line for line in out.splitlines() if "model calls=" in line)
    assert "None" not in header and "model calls=" in header


def test_a_run_without_model_calls_names_no_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "r.sqlite3"
    args = ["run", "textcraft", "--agent", "oracle", "-n", "2", "--store", str(store)]
    assert run_cli([*args, "--run-id", "o"], capsys)[0] == 0
    with RunStore(store) as db:
        assert run_figures(db, "o").models == []
