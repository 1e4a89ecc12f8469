"""Every table LoreKit prints stays readable in an 80-column terminal: the key
columns (success, groups, run ids) are never cut to ``…``; empty columns go."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from lorekit.eval.report import render_run
from lorekit.eval.store import RunStore
from lorekit.llm import CallRecord, Completion, Message, Usage
from lorekit.llm.base import RequestParams
from lorekit.tables import fit_table

ROOT = Path(__file__).resolve().parents[2]


def lorekit(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    """The real command, piped, in a terminal of ``columns`` (``$COLUMNS``)."""
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "lorekit", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )


def store_with_calls(path: Path, group: str = "depth-2") -> str:
    """A run whose episodes made model calls, so every column has something."""
    with RunStore(path) as db:
        run_id = db.create_run(
            "narrow-run-with-a-long-id", env="textcraft", agent="react", config={}
        )
        for i, ok in enumerate([True, False, True]):
            ep = db.episode(run_id, f"t{i}/0", index=i, task_id=f"t{i}", task_group=group, seed=0)
            ep.add_step("obs", "get 1 stick", 0.0, False, {})
            call = Completion("a", Usage(123_456, 7_890), "m")
            record = CallRecord(
                "executor", "m", (Message("user", "q"),), RequestParams(), time.time(), 1.5, call
            )
            ep.add_llm_call(record)
            ep.finish(success=ok, reward=1.0 if ok else 0.0, info={"stop_reason": "done"})
    return run_id


def table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_run_summary_at_80_columns_keeps_success_and_groups_whole(tmp_path: Path) -> None:
    proc = lorekit("run", "textcraft", "-a", "oracle", "-n", "3", "--store", str(tmp_path / "s"))
    assert proc.returncode == 0, proc.stderr
    lines = table_lines(proc.stdout)
    assert all(len(line) <= 80 for line in lines), proc.stdout
    rows = [line.split() for line in lines if line.split()[:1] in (["all"], ["depth-4"])]
    assert [r[0] for r in rows] == ["all", "depth-4"], proc.stdout
    assert all("100.0%" in r for r in rows), proc.stdout
    assert "…" not in proc.stdout
    # The oracle calls no model: the calls, tokens and $ columns are empty, so they go.
    header = next(line for line in lines if "success" in line).split()
    assert "calls" not in header and "tokens" not in header and "$" not in header


def test_run_summary_with_model_columns_fits_80(tmp_path: Path) -> None:
    db_path = tmp_path / "runs.sqlite3"
    run_id = store_with_calls(db_path, group="pick_and_place_simple")
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    with RunStore(db_path) as db:
        render_run(db, run_id, console)
    text = out.getvalue()
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "…" not in text
    row = next(line for line in text.splitlines() if line.split()[:1] == ["pick_and_place_simple"])
    assert "66.7%" in row.split()
    assert "stopped: done 3" in text


def test_runs_list_at_80_columns_shows_whole_run_ids(tmp_path: Path) -> None:
    db_path = tmp_path / "runs.sqlite3"
    run_id = store_with_calls(db_path)
    proc = lorekit("runs", "list", "--store", str(db_path))
    assert proc.returncode == 0, proc.stderr
    assert run_id in proc.stdout and "66.7%" in proc.stdout and "…" not in proc.stdout
    assert all(len(line) <= 80 for line in proc.stdout.splitlines()), proc.stdout


def test_show_at_80_columns_keeps_the_call_counts(tmp_path: Path) -> None:
    db_path = tmp_path / "runs.sqlite3"
    run_id = store_with_calls(db_path)
    proc = lorekit("show", run_id, "0", "--store", str(db_path), columns=60)
    assert proc.returncode == 0, proc.stderr
    assert "executor" in proc.stdout
    assert "123,456" in proc.stdout and "7,890" in proc.stdout, proc.stdout
    assert all(len(line) <= 60 for line in proc.stdout.splitlines()), proc.stdout


def test_fit_table_leaves_a_table_that_fits_alone() -> None:
    table = Table("a", "b")
    table.add_row("1", "2")
    assert fit_table(Console(width=80), table) == []
    assert table.show_edge and all(c.width is None for c in table.columns)


def test_fit_table_drops_in_order_and_keeps_what_it_must() -> None:
    table = Table("name", "long", "other")
    table.add_row("x" * 30, "y" * 30, "z" * 30)
    dropped = fit_table(Console(width=70), table, keep=("name",), drop=("other", "long"))
    out = io.StringIO()
    Console(file=out, width=70).print(table)
    assert dropped == ["other"]
    assert "x" * 30 in out.getvalue() and "y" * 30 in out.getvalue()
