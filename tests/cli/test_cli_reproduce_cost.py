"""``lorekit reproduce``'s cost side: the measured dry run, the dated prices (and a
user's table over them), and ``--max-cost`` stopping a run cleanly and resuming."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.eval.store import RunStore
from lorekit.llm.testing import OpenAICompatServer

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
    assert "executor=gpt-3.5-turbo-instruct" in flat  # Appendix A: the completion model
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


def _always(body: dict[str, Any]) -> str:
    return "Thought: I cannot do this.\nAction: failed"


def test_max_cost_stops_cleanly_and_the_same_run_id_resumes(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "one.yaml").write_text(ONE_ROW, encoding="utf-8")
    prices = here / "p.yaml"  # a dollar a token: one call passes any small limit
    prices.write_text("as_of: 2026-11\nmodels: {pricey: {prompt: 1000000, completion: 1000000}}\n")
    store = here / "s.sqlite3"
    with OpenAICompatServer(_always) as srv:
        args = [
            "reproduce", "run", "one.yaml", "-n", "3", "--run-id", "r", "--store", str(store),
            "--model", "pricey", "--base-url", srv.base_url, "--prices", str(prices),
            "--concurrency", "1", "--no-progress",
        ]  # fmt: skip
        code, out, err = run_cli([*args, "--max-cost", "1"], capsys)
        assert code == 3, err
        assert "models that answered" not in out  # no comparison of a stopped run
        assert "stopped at --max-cost 1: the store records $" in err
        assert "Resume with --run-id r and a higher --max-cost" in _flat(err)
        with RunStore.open_readonly(store) as db:
            done = db.episodes("r.react")
            later = db.get_run("r.again")
        assert [e.status for e in done] == ["failure"]  # one whole episode, nothing half-written
        assert later is None  # the next row is not begun
        assert srv.request_count == 1
        code, out, err = run_cli([*args, "--max-cost", "1e12"], capsys)
        assert code == 0, err
        assert "1 episodes already done, 2 played now" in err
        assert "models that answered here: default=openai:pricey" in out  # the comparison
        assert srv.request_count == 6  # the rest of the first row, all of the second
        # a model without a price cannot be watched
        free = [a if a != "pricey" else "free" for a in args]
        code, _out, err = run_cli([*free, "--run-id", "r2", "--max-cost", "1"], capsys)
        assert code == 2 and "--max-cost: no price for model 'free'" in err
