"""WebShop through the CLI: the oracle run's summary says "generated catalogue"."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run_cli


def test_cli_oracle_run_names_the_generated_catalogue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    code, out, err = run_cli(
        ["run", "webshop", "--agent", "oracle", "-n", "5", "--store", str(store)], capsys
    )
    assert code == 0, err
    assert "generated catalogue of 1000 products" in out + err
    assert "100.0%" in out
