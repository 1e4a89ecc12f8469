"""``lorekit reproduce run`` plays each row with its file's setup: its own env options,
its named tasks or the paper's sample of the split, the file it needs, and the
repeated runs a paper averaged (each build and row again, pooled, every run's figure
kept)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.eval.store import RunStore

TINY = """\
paper: Test paper
source: Table 9
title: tiny
env: textcraft
split: test
env_options: {max_steps: 30}
metric: success_rate
aggregation: one run
runnable: true
columns:
  - {name: all}
rows:
  - {id: oracle, label: Oracle, agent: oracle, published: {all: 97.0}}
"""


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    return tmp_path


def _run(here: Path, text: str, capsys: Any, *extra: str) -> tuple[int, str, str]:
    path = here / "tiny.yaml"
    path.write_text(text, encoding="utf-8")
    args = ["reproduce", "run", str(path), "--store", str(here / "s.sqlite3"), "--run-id", "r"]
    return run_cli([*args, "--no-progress", *extra], capsys)


def _config(here: Path, run_id: str) -> dict[str, Any]:
    with RunStore(here / "s.sqlite3") as db:
        run = db.get_run(run_id)
        assert run is not None, run_id
        return dict(run.config)


def test_a_rows_env_options_go_over_the_experiments(here: Path, capsys: Any) -> None:
    text = TINY + "  - {id: capped, label: C, agent: oracle, env_options: {max_steps: 7},\n"
    text += "     published: {all: 97.0}}\n"
    code, _out, err = _run(here, text, capsys, "-n", "1")
    assert code == 0, err
    assert _config(here, "r.oracle")["env_kwargs"]["max_steps"] == 30
    assert _config(here, "r.capped")["env_kwargs"]["max_steps"] == 7


def test_a_row_plays_the_tasks_it_names(here: Path, capsys: Any) -> None:
    from lorekit.envs import make

    ids = [t.id for t in make("textcraft").tasks("test")][5:8]
    text = TINY.replace("agent: oracle,", f"agent: oracle, tasks: {json.dumps(ids)},")
    code, _out, err = _run(here, text, capsys)
    assert code == 0, err
    with RunStore(here / "s.sqlite3") as db:
        assert sorted(e.task_id for e in db.episodes("r.oracle")) == sorted(ids)


def test_the_papers_sample_of_the_split_is_drawn_as_its_code_drew_it(
    here: Path, capsys: Any
) -> None:
    from lorekit.envs import make

    tasks = make("textcraft").tasks("test")
    order = ["depth-3", "depth-2"]
    sample = f"select: {{per_group: 2, seed: 7, order: {order}}}"
    text = TINY.replace("runnable: true", f"runnable: true\n{sample}")
    code, _out, err = _run(here, text, capsys)
    assert code == 0, err
    rng, expected = random.Random(7), []
    for group in [*order, "depth-4"]:  # the listed groups, then the others by name
        expected += rng.sample(sorted(t.id for t in tasks if t.group == group), 2)
    with RunStore(here / "s.sqlite3") as db:
        assert sorted(e.task_id for e in db.episodes("r.oracle")) == sorted(expected)


def test_repeated_runs_play_again_and_are_pooled_with_each_runs_figure(
    here: Path, capsys: Any
) -> None:
    text = TINY.replace("runnable: true", "runnable: true\nrepeats: 3")
    text += "  - {id: random, label: Random, agent: random, published: {all: 10.0}}\n"
    code, out, err = _run(here, text, capsys, "-n", "2")
    assert code == 0, err
    assert "3 runs of each build and row, pooled as the paper's mean of 3" in " ".join(err.split())
    with RunStore(here / "s.sqlite3") as db:
        for run_id in ("r.oracle", "r.r2.oracle", "r.r3.oracle", "r.r3.random"):
            assert len(db.episodes(run_id)) == 2, run_id
    saved = json.loads((here / "reproduce" / "tiny-r.json").read_text(encoding="utf-8"))
    oracle = next(c for c in saved["cells"] if c["row"] == "oracle")
    assert oracle["n"] == 6 and oracle["ours"] == 100.0  # three runs of 2, pooled
    assert saved["repeats"]["figures"]["oracle"]["all"] == [100.0, 100.0, 100.0]
    assert saved["repeats"]["runs"][1] == {"oracle": "r.r2.oracle", "random": "r.r2.random"}
    assert "oracle all: runs 100.0, 100.0, 100.0 (mean 100.0)" in out
    # --repeats 1 reads the first run only; the same id resumes it
    code, _out, err = _run(here, text, capsys, "-n", "2", "--repeats", "1")
    assert code == 0 and "2 episodes already done, 0 played now" in err


def test_a_row_that_needs_a_missing_file_is_left_out_or_refused(here: Path, capsys: Any) -> None:
    text = TINY + (
        "  - {id: laws, label: L, agent: oracle, published: {all: 1.0},\n"
        "     needs_file: {path: laws.json, how: lorekit laws extract r.jsonl -o laws.json}}\n"
    )
    code, _out, err = _run(here, text, capsys, "-n", "1")
    assert code == 0, err
    flat = " ".join(err.split())
    assert "left out: row 'laws' reads laws.json, which does not exist here; make it with: " in flat
    code, _out, err = _run(here, text, capsys, "-n", "1", "--rows", "laws")
    assert code == 2 and err.startswith("lorekit: error: --rows: row 'laws' reads laws.json")
    assert err.count("\n") == 1
    (here / "laws.json").write_text("{}", encoding="utf-8")
    code, _out, err = _run(here, text, capsys, "-n", "1", "--rows", "laws")
    assert code == 0, err


def test_the_laws_experience_row_plays_once_its_laws_exist(here: Path, capsys: Any) -> None:
    """The documented ``--rows experience`` (it exited 2 with laws.json present)."""
    from lorekit.laws import oracle_experience

    oracle_experience().save(here / "laws.json")
    args = ["reproduce", "run", "laws-table1-spring-contexts", "--rows", "experience"]
    opts = ["--simulate", "-n", "1", "--store", str(here / "s.sqlite3"), "--run-id", "x"]
    code, _out, err = run_cli([*args, *opts, "--no-progress"], capsys)
    assert code == 0, err
    with RunStore(here / "s.sqlite3") as db:
        (episode,) = db.episodes("x.experience")
    assert episode.status != "error" and "experience" in json.dumps(episode.info["notes"])


def test_a_cost_column_prices_the_rows_calls_per_the_papers_games() -> None:
    from lorekit.cli.reproduce_rows import priced_cells
    from lorekit.eval.prices import ModelPrice, PriceTable
    from lorekit.eval.reproduce_compare import Cell

    class Store:
        def tokens_by_model(self, run_ids: Any) -> dict[str, tuple[int, int]]:
            return {"m": (1_000_000, 500_000)} if list(run_ids) == ["r.a"] else {"x": (1, 1)}

    class Exp:
        episodes = 3
        columns = (type("C", (), {"name": "cost", "metric": "usd"})(),)

    table = PriceTable("2026-11", "test", {"m": ModelPrice("m", 2.0, 4.0)}, {"m": "m"})
    cell = Cell("a", "A", "cost", 138.0, None, None, None, None, 2, 0, "r.a", "usd")
    (priced,) = priced_cells(Exp(), [cell], Store(), {"a": ["r.a"]}, table)
    assert priced.ours == pytest.approx((2.0 + 2.0) / 2 * 3)  # $4 over 2 games, per 3
    (unknown,) = priced_cells(Exp(), [cell], Store(), {"a": ["r.b"]}, table)
    assert unknown.ours is None  # a model without a price: no figure


def test_miniwob_builds_play_their_task_set_examples_and_two_steps(
    here: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """AutoManual Table 2's all-53 rows: rules built on the 7 distinct types with
    feedback (4 examples), then a library-only pass from that build on the other 44;
    the rows test on the 53 types. The builds are recorded here instead of played
    (MiniWoB++ has no scripted AutoManual models); what each is asked to play is the
    point."""
    import lorekit.agents.automanual.build as build_module
    import lorekit.agents.automanual.formulate as formulate_module
    from lorekit.agents.automanual.build import BuildOutcome

    asked: list[dict[str, Any]] = []

    async def fake_build(store: Any, **kwargs: Any) -> BuildOutcome:
        asked.append(kwargs)
        return BuildOutcome(kwargs["run_id"], 0, 0, 0, 0, 0, 0, (), 0)

    async def fake_formulate(*_args: Any, **_kwargs: Any) -> None:
        return None

    played: list[tuple[Any, ...]] = []

    def fake_play(*args: Any, **kwargs: Any) -> Any:
        played.append((kwargs["agent_kwargs"], args[4].env_opt))
        raise KeyboardInterrupt  # the row is not played here: stop the command

    monkeypatch.setattr(build_module, "run_build", fake_build)
    monkeypatch.setattr(formulate_module, "formulate_build", fake_formulate)
    monkeypatch.setattr("lorekit.cli.run.play", fake_play)
    args = ["reproduce", "run", "automanual-table2-miniwob", "--rows", "automanual-gpt4-53"]
    opts = ["--model", "gpt-4o", "--base-url", "http://127.0.0.1:9/v1", "--repeats", "1"]
    store = ["--store", str(here / "s.sqlite3"), "--run-id", "m"]
    code, _out, _err = run_cli([*args, *opts, *store], capsys)
    assert code != 0  # stopped at the row
    first, second = asked
    assert first["run_id"] == "m.build-automanual-53-rules" and first["examples"] == 4
    assert first["env_kwargs"]["tasks"].split(",")[0] == "search-engine"
    assert len(first["env_kwargs"]["tasks"].split(",")) == 7 and first["from_build"] is None
    assert second["run_id"] == "m.build-automanual-53" and second["library_only"] is True
    assert second["from_build"] == "m.build-automanual-53-rules"
    assert second["env_kwargs"]["tasks"] == "no-feedback-44"
    assert played == [
        ({"examples": 4, "manual": "m.build-automanual-53"}, ("tasks=automanual-53",))
    ]
