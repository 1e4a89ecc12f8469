"""A reproduction against a served model: what it spends is priced, ``--max-cost``
bounds all of it (episodes in flight, a build, every session of one ``--run-id``),
and every "resume with" line, followed to the letter, resumes the same runs.

The server is LoreKit's fake one: it answers ``inventory`` (a valid TextCraft action
that changes nothing), so a ReAct episode plays its turn cap; its token counts are
words, which is what the store records.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.eval.prices import price_table, spent
from lorekit.eval.store import RunStore
from lorekit.llm.testing import Fault, OpenAICompatServer

TWO_ROWS = """\
paper: Test paper
source: Table 9
title: two react rows
env: textcraft
split: test
metric: success_rate
aggregation: one run
runnable: true
columns:
  - {name: all}
rows:
  - {id: react, label: ReAct, agent: react, options: {max_turns: 4}, published: {all: 50.0}}
  - {id: again, label: ReAct again, agent: react, options: {max_turns: 4}, published: {all: 50.0}}
"""
PRICES = "as_of: 2026-11\nmodels: {pricey: {prompt: 100, completion: 100}}\n"
"""$100 per million tokens: a ReAct call here costs about $0.06 to $0.1."""


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    (tmp_path / "two.yaml").write_text(TWO_ROWS, encoding="utf-8")
    (tmp_path / "p.yaml").write_text(PRICES, encoding="utf-8")
    return tmp_path


def _inventory(_body: dict[str, Any]) -> str:
    return "inventory"


def _args(srv: OpenAICompatServer, store: Path, *more: str) -> list[str]:
    return [
        "reproduce", "run", "two.yaml", "-n", "6", "--store", str(store), "--model", "pricey",
        "--base-url", srv.base_url, "--prices", "p.yaml", "--no-progress", *more,
    ]  # fmt: skip


def _spent(store: Path, run_ids: list[str]) -> float:
    table = price_table("p.yaml")
    with RunStore.open_readonly(store) as db:
        return spent(db, run_ids, table).usd


def _flat(text: str) -> str:
    return " ".join(text.split())


def _resume_option(err: str) -> list[str]:
    """The options a "resume with" / "replay them with" line names, as argv."""
    found = re.search(r"(?:[Rr]esume|replay them) with (--run-id \S+(?: --retry-errors)?)", err)
    assert found, err
    return shlex.split(found.group(1))


def test_max_cost_holds_with_episodes_in_flight_and_across_sessions(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-j 4 at a limit that fits a few calls: the calls in flight reserved their cost
    before being sent, so the spend stays under the limit (the old guard checked only
    before an episode started: 4 in flight ran through it, and the run exited 0)."""
    store = here / "s.sqlite3"
    rows = ["r.react", "r.again"]
    with OpenAICompatServer(_inventory) as srv:
        args = _args(srv, store, "-j", "4", "--run-id", "r")
        code, out, err = run_cli([*args, "--max-cost", "0.5"], capsys)
        assert code == 3, err
        first = _spent(store, rows)
        assert 0 < first <= 0.5
        assert "models that answered" not in out  # no comparison of a stopped run
        flat = _flat(err)
        assert "stopped at --max-cost 0.5" in flat and "Resume with --run-id r " in flat
        with RunStore.open_readonly(store) as db:
            stored = db.episodes("r.react")
            assert db.get_run("r.again") is None  # the next row is not begun
        assert all(e.status != "error" for e in stored)  # cut episodes are not stored
        # a second session at a slightly higher limit counts the first one's spend
        code, _out, err = run_cli([*_args(srv, store, "-j", "4"), *_resume_option(err),
                                   "--max-cost", str(first + 0.3)], capsys)  # fmt: skip
        assert code == 3, err
        second = _spent(store, rows)
        assert first < second <= first + 0.3
        assert f"(${first:,.4f} before this session)" in _flat(err)
        # and one without a limit finishes every episode, each stored once
        code, out, err = run_cli([*_args(srv, store, "-j", "4"), *_resume_option(err)], capsys)
        assert code == 0, err
        assert f"models that answered here: executor=pricey at {srv.base_url}" in _flat(out)
    with RunStore.open_readonly(store) as db:
        for rid in rows:
            episodes = db.episodes(rid)
            assert len(episodes) == 6 and len({e.episode_key for e in episodes}) == 6
            run = db.get_run(rid)
            assert run is not None and run.summary is not None
            assert run.summary["cost_usd"] == pytest.approx(_spent(store, [rid]))  # all sessions


def test_a_first_call_over_the_limit_is_never_sent(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = here / "s.sqlite3"
    with OpenAICompatServer(_inventory) as srv:
        code, _out, err = run_cli([*_args(srv, store, "--run-id", "r"), "--max-cost", "1e-4"],
                                  capsys)  # fmt: skip
        assert code == 3, err
        assert srv.request_count == 0
    assert _spent(store, ["r.react"]) == 0


def test_a_model_without_a_price_cannot_be_bounded(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAICompatServer(_inventory) as srv:
        args = [a if a != "pricey" else "free" for a in _args(srv, here / "s.sqlite3")]
        code, _out, err = run_cli([*args, "--max-cost", "1"], capsys)
    assert code == 2 and "--max-cost: no price for model 'free'" in err


def test_a_served_run_is_priced_from_the_table(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No price in any config: the dated table prices gpt-4o, so the summary, the store
    and the report cost what was spent, not $0."""
    from lorekit.eval.report_html_data import run_figures

    store = here / "s.sqlite3"
    with OpenAICompatServer(_inventory, model_name="gpt-4o-2024-08-06") as srv:
        args = ["run", "textcraft", "--agent", "react", "--agent-opt", "max_turns=3", "-n", "2"]
        args += ["--model", "gpt-4o", "--base-url", srv.base_url, "--store", str(store)]
        code, out, err = run_cli([*args, "--run-id", "p", "--no-progress"], capsys)
        url = srv.base_url
    assert code == 0, err
    gpt4o = price_table().find("gpt-4o")
    assert gpt4o is not None
    with RunStore.open_readonly(store) as db:
        calls = db.llm_calls("p")
        usd = sum(gpt4o.cost(c["prompt_tokens"], c["completion_tokens"]) for c in calls)
        run = db.get_run("p")
        assert run is not None and run.summary is not None
        assert usd > 0 and run.summary["cost_usd"] == pytest.approx(usd)
        figures = run_figures(db, "p")
    assert sum(r["cost_usd"] for r in figures.roles.values()) == pytest.approx(usd)
    assert figures.models == [f"gpt-4o (served as gpt-4o-2024-08-06) at {url}"]
    flat = _flat(out)
    assert f"cost=${usd:.4f}" in flat
    assert f"models: executor=gpt-4o (served as gpt-4o-2024-08-06) at {url}" in flat


def test_the_advice_after_errored_episodes_resumes_the_same_runs(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Followed as printed, "replay them with ..." replays the errored episodes of the
    same rows: no new run appears and nothing already done is played again (it named
    the row's run id, which reproduce took as a new prefix: RUN.react.react, ...)."""
    store = here / "s.sqlite3"
    with OpenAICompatServer(_inventory) as srv:
        srv.inject(Fault.status(400, "bad request"), times=2)  # two episodes' first calls
        base = _args(srv, store, "-j", "1", "--max-initial-failures", "0")
        code, _out, err = run_cli([*base, "--run-id", "r"], capsys)
        assert code == 1, err
        again = _resume_option(err)
        assert again == ["--run-id", "r", "--retry-errors"]
        with RunStore.open_readonly(store) as db:
            runs_before = {r.run_id for r in db.list_runs()}
            errored = [e.episode_key for e in db.episodes("r.react") if e.status == "error"]
        assert runs_before == {"r.react", "r.again"} and len(errored) == 2
        requests = srv.request_count
        code, _out, err = run_cli([*base, *again], capsys)
        assert code == 0, err
        assert srv.request_count - requests == 2 * 4  # the two episodes, 4 turns each
    with RunStore.open_readonly(store) as db:
        assert {r.run_id for r in db.list_runs()} == runs_before
        assert all(e.status != "error" for e in db.episodes("r.react"))


def test_the_advice_after_an_early_stop_resumes_the_same_runs(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = here / "s.sqlite3"
    with OpenAICompatServer(_inventory) as srv:
        srv.inject(Fault.status(400, "no such model"), times=None)
        code, _out, err = run_cli([*_args(srv, store, "-j", "1", "--run-id", "r")], capsys)
        assert code == 1 and "fix it, then resume with --run-id r --retry-errors" in err
        srv.clear_faults()
        code, _out, err = run_cli([*_args(srv, store, "-j", "1"), *_resume_option(err)], capsys)
        assert code == 0, err
    with RunStore.open_readonly(store) as db:
        assert {r.run_id for r in db.list_runs()} == {"r.react", "r.again"}
        assert len(db.episodes("r.react")) == 6


@pytest.mark.slow
def test_max_cost_bounds_the_build_stage(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """AutoManual's build plays (and formulates) before any row: its calls reserve their
    cost under the same limit, so a limit that fits a few calls stops it there, exit 3,
    and no row begins (the build once spent $0.417 at a $0.0001 limit)."""
    from _served import ServedModels, write_config
    from test_cli_reproduce_served import trimmed

    from lorekit.eval.reproduce import find_experiment

    exp = find_experiment("automanual-table1-alfworld")
    path, env_options = trimmed(exp, here)
    store = here / "s.sqlite3"
    roles = ("planner", "builder", "consolidator", "formulator")
    with ServedModels() as srv:
        srv.serve(exp.env, env_options, "automanual")
        config = write_config(here / "run.yaml", srv.base_url, roles, store)
        args = ["reproduce", "run", str(path), "--rows", "automanual-gpt4", "-n", "1"]
        args += ["--config", str(config), "--run-id", "b", "--no-progress"]
        code, _out, err = run_cli([*args, "--max-cost", "0.01"], capsys)
        assert code == 3, err[-2000:]
        assert "Resume with --run-id b and a higher --max-cost" in _flat(err)
        assert srv.server.request_count > 0  # it did start
    with RunStore.open_readonly(store) as db:
        assert db.get_run("b.automanual-gpt4") is None  # no row began
        prices = {f"req-{r}": (3.0, 6.0) for r in ("default", *roles)}
        usd = sum(
            (p * prices[m][0] + c * prices[m][1]) / 1e6
            for m, (p, c) in db.tokens_by_model(["b.build-automanual"]).items()
        )
    assert 0 < usd <= 0.01
