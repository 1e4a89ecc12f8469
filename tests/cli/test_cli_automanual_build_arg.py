"""The BUILD argument of `lorekit automanual rules|formulate|...`: a run that is
missing, or is not an AutoManual build, is one line and exit 2 (the same check
`automanual build --from` makes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.eval.store import RunStore


def test_a_missing_or_foreign_build_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    with RunStore(store) as db:
        db.create_run("plain", env="textcraft", agent="react", config={})
    code, _, err = run_cli(["automanual", "rules", "nope", "--store", str(store)], capsys)
    assert code == 2 and "BUILD: no run 'nope' in" in err and "lorekit runs list" in err
    code, _, err = run_cli(["automanual", "rules", "plain", "--store", str(store)], capsys)
    assert code == 2
    assert "BUILD: run 'plain' is a 'react' run, not an AutoManual build" in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1
