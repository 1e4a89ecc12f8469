"""``lorekit reproduce``'s cost side: the measured dry run, the dated prices (and a
user's table over them), and ``--max-cost`` stopping a run cleanly and resuming."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run_cli

ONE_ROW = """\
paper: Test paper
source: Table 9
title: one react row
env: textcraft
split: test
metric: success_rate
aggregation: one run
runnable: true
columns:
  - {name: all}
rows:
  - {id: react, label: ReAct, agent: react, options: {max_turns: 2}, published: {all: 50.0}}
  - {id: again, label: ReAct again, agent: react, published: {all: 50.0}}
"""


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    return tmp_path


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_dry_run_measures_scripted_episodes_and_prices_them(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["reproduce", "run", "adapt-table2-textcraft", "--rows", "react,adapt", "--dry-run"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    flat = _flat(out)
    assert "dry run: scripted episodes of each row (one per task group)" in err
    assert "measured on 3 episodes per row (one per task group" in flat  # depths 2, 3, 4
    assert "executor=GPT-3.5" in flat and "(completion)" in flat
    assert "estimate:" in flat and "for 200 episodes per row, $" in flat
    assert "at the paper's models" in flat and "with prompt caching" in flat
    assert "stable prefix, adapt: " in flat and "stable parts first: the system" in flat
    assert "prices as of 2025-06 (prices.yaml; dated" in flat
    assert not (here / "runs").exists()  # nothing recorded
    # your model, your prices
    prices = here / "p.yaml"
    prices.write_text("as_of: 2026-11\nmodels: {gpt-4o: {prompt: 0, completion: 0}}\n")
    code, out, err = run_cli([*args, "--model", "gpt-4o", "--prices", str(prices)], capsys)
    assert code == 0, err
    flat = _flat(out)
    assert "executor=gpt-4o" in flat and ", $0.00 at your models" in flat
    assert f"prices as of 2026-11 (prices.yaml + {prices}" in flat


def test_a_bad_price_file_is_one_line_with_exit_2(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = here / "p.yaml"
    prices.write_text("as_of: 2026-11\nmodels: {gpt-4o: {prompt: -1, completion: 0}}\n")
    for args in (["list"], ["run", "adapt-table2-textcraft", "--dry-run"]):
        code, _out, err = run_cli(["reproduce", *args, "--prices", str(prices)], capsys)
        assert code == 2
        assert err == (
            f"lorekit: error: --prices: {prices}: models.gpt-4o.prompt: "
            "a price cannot be negative, got -1\n"
        )


def test_list_prices_the_rough_estimate_and_says_it_is_dated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(["reproduce", "list"], capsys)
    assert code == 0, err
    flat = _flat(out)
    assert "at the paper's models" in flat and "prices as of 2025-06" in flat
