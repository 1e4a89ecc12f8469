"""``lorekit reproduce run --simulate``: every runnable experiment plays end to end with
scripted models, and the summary never passes a simulated or tiny-model run off as a
reproduction (the printed table, the saved JSON and Markdown say which models answered)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.agents import needs_model
from lorekit.eval.reproduce import load_all
from lorekit.eval.store import RunStore
from lorekit.llm.testing import OpenAICompatServer

SLOW = {
    "adapt-table1-alfworld",
    "adapt-table4-alfworld-models",
    "adapt-table6-alfworld-executors",
} | {
    f"automanual-table{n}-{name}"
    for n, name in ((1, "alfworld"), (3, "ablation"), (6, "rule-system"))
}
"""ALFWorld plays each episode in a child process: these take a minute or more."""


def _scripted(exp: Any) -> bool:
    """Whether every row that needs a model has scripted models for --simulate."""
    from lorekit.agents.simulated import supported

    return all(supported(exp.env, r.agent) for r in exp.runnable_rows if needs_model(r.agent))


RUNNABLE = [
    pytest.param(e, id=e.id, marks=[pytest.mark.slow] if e.id in SLOW else [])
    for e in load_all()
    if e.runnable and _scripted(e)
]
UNSCRIPTED = """\
paper: a check
source: none
title: a row whose agent has no scripted models on its env
env: webshop
split: test
metric: success_rate
aggregation: one run
runnable: true
columns:
  - {name: all}
rows:
  - {id: spring, label: SPRING, agent: spring, published: {all: 10.0}}
"""


def test_every_shipped_table_has_scripted_models() -> None:
    assert [e.id for e in load_all() if e.runnable and not _scripted(e)] == []


def test_a_table_without_scripted_models_is_refused_by_simulate_in_one_line(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "none.yaml").write_text(UNSCRIPTED, encoding="utf-8")
    code, _out, err = run_cli(["reproduce", "run", "none.yaml", "--simulate", "-n", "1"], capsys)
    assert code == 2 and err.startswith("lorekit: error: --simulate: no scripted models for row")
    assert err.count("\n") == 1 and not (here / "runs").exists()


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    return tmp_path


@pytest.mark.parametrize("exp", RUNNABLE)
def test_every_experiment_plays_end_to_end_with_scripted_models(
    exp: Any, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = here / "s.sqlite3"
    args = ["reproduce", "run", exp.id, "--simulate", "-n", "2", "--store", str(store)]
    rows = _rows_here(exp, here)
    if rows != list(exp.default_rows(here)):
        args += ["--rows", ",".join(r.id for r in rows)]
    code, out, err = run_cli([*args, "--run-id", "sim", "--no-progress"], capsys)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "scripted models (--simulate)" in flat and "NOT a reproduction" in flat
    saved = json.loads((here / "reproduce" / f"{exp.id}-sim.json").read_text(encoding="utf-8"))
    verdicts = {c["verdict"] for c in saved["cells"]}  # 2 episodes: mostly too few to tell
    assert verdicts and verdicts <= {"-", "compatible", "differs", "too few episodes"}, verdicts
    assert verdicts == {"-"} or "(simulated)" in flat  # each printed verdict says who answered
    assert saved["answered_by"] == "simulated" and saved["reproduction"] is False
    assert "NOT a reproduction" in (here / "reproduce" / f"{exp.id}-sim.md").read_text()
    assert set(saved["runs"]) == {r.id for r in rows}
    from lorekit.cli.reproduce_build import needed_builds

    builds = set(needed_builds(exp, rows))  # with the builds those start from
    assert saved["builds"] == {b: f"sim.build-{b}" for b in builds}
    types = exp.simulate_types or 6  # simulate: types, else ALFWorld's six
    with RunStore(store) as db:
        for build in builds:  # played first, one game per task type (a published one: none)
            played = 0 if _variant(exp, build) == "published" else exp.simulate_per_type * types
            assert len(db.episodes(f"sim.build-{build}")) == played, build
        for row in rows:
            episodes = db.episodes(f"sim.{row.id}")
            assert len(episodes) == 2 and all(e.status != "error" for e in episodes), row.id
            models = {c["model"] for c in db.llm_calls(f"sim.{row.id}")}
            if needs_model(row.agent):  # every answer came from a scripted model
                assert models and all(m.startswith("simulated-") for m in models), models
            else:
                assert not models


def _variant(exp: Any, build: str) -> str:
    return str(next(b.variant for b in exp.builds if b.id == build))


def _rows_here(exp: Any, folder: Path) -> list[Any]:
    """The rows a run without ``--rows`` plays (a row whose needed file is missing is
    left out), less those that test with the authors' published run where no copy of
    it is at hand: the suite fetches nothing."""
    from lorekit.agents.automanual.published import locate

    rows = list(exp.default_rows(folder))
    published = [r for r in rows if r.build and _variant(exp, r.build) == "published"]
    if not published or locate(exp.env) is not None:
        return rows
    return [r for r in rows if r not in published]


TINY = """\
paper: Test paper
source: Table 9
title: tiny
env: crafter
split: test
metric: mean_reward
aggregation: one run
runnable: true
columns: [{name: reward}]
rows:
  - {id: react, label: ReAct, agent: react, published: {reward: 1.0}}
"""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["adapt-table2-webshop", "--model", "gpt-4o"], "--simulate plays with scripted models"),
        (["TINY"], "--simulate: no scripted models for row 'react' (agent 'react' on env"),
    ],
)
def test_simulate_refuses_a_model_and_rows_without_scripted_models(
    here: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    tiny = here / "tiny.yaml"
    tiny.write_text(TINY, encoding="utf-8")
    args = [str(tiny) if a == "TINY" else a for a in args]
    code, _out, err = run_cli(["reproduce", "run", *args, "--simulate", "-n", "1"], capsys)
    assert code == 2 and err.startswith("lorekit: error: " + message), err
    assert not (here / "runs").exists()


class _FakeLocalServer:
    """Stands in for llama.cpp's server of the bundled model: an OpenAI-compatible test
    server under the GGUF's alias, so ``--model local`` takes its real path here."""

    alias = "SmolLM2-135M-Instruct.Q4"

    def __init__(self) -> None:
        self.srv = OpenAICompatServer(None)  # echoes: a model that understands nothing

    def start(self) -> str:
        self.srv.start()
        return self.base_url

    @property
    def base_url(self) -> str:
        return self.srv.base_url

    @property
    def running(self) -> bool:
        return True

    def stop(self) -> None:
        self.srv.close()


def test_a_local_model_run_says_the_bundled_small_model_answered(
    here: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import lorekit.cli.local_model as local_model
    import lorekit.llm.local_server as local_server

    monkeypatch.setattr(local_server, "LocalServer", _FakeLocalServer)
    monkeypatch.setattr(local_model, "_started", {})
    store = here / "s.sqlite3"
    args = ["reproduce", "run", "adapt-table2-textcraft", "--rows", "react", "--model", "local"]
    opts = ["-n", "1", "--store", str(store), "--run-id", "loc", "--cache", "off"]
    # the paper's 60 turns outgrow the model's context: refused before the server starts
    code, _out, err = run_cli([*args, *opts, "--no-progress"], capsys)
    assert code == 2 and "row 'react' does not fit the bundled model" in err
    assert "over the model's 8,192-token context" in err and not local_model._started
    fits = re.search(r"--agent-opt (max_turns=\d+)", err)
    assert fits is not None
    code, out, err = run_cli([*args, *opts, "--agent-opt", fits.group(1), "--no-progress"],
                             capsys)  # fmt: skip
    local_model._started.pop("local").stop()
    assert code == 0, err
    flat = " ".join(out.split())
    assert "default=local (SmolLM2-135M-Instruct.Q4, the bundled small model)" in flat
    assert "NOT a reproduction" in flat and "(local) │" in out
    saved = json.loads((here / "reproduce" / "adapt-table2-textcraft-loc.json").read_text())
    assert saved["answered_by"] == "local" and saved["reproduction"] is False
    with RunStore(store) as db:
        calls = db.llm_calls("loc.react")
    assert calls and {c["model"] for c in calls} == {"SmolLM2-135M-Instruct.Q4"}
    turns = int(fits.group(1).split("=")[1])
    assert len(calls) <= turns  # the cap held


@pytest.mark.slow
def test_the_rows_test_with_the_build_they_name(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """AutoManual's rows get the manual of the build reproduce played (checked on the
    store of a simulated run: the automanual build has a formulated manual, the
    Planner+Lib. build has skills and no rules)."""
    from lorekit.agents.automanual.manuals import latest_manual
    from lorekit.agents.automanual.rules import RuleSystem
    from lorekit.agents.automanual.store import open_db

    exp = next(e for e in load_all() if e.id == "automanual-table1-alfworld")
    assert {r.build for r in exp.rows} == {"automanual", "planner-lib", "published"}
    store = here / "s.sqlite3"
    args = ["reproduce", "run", exp.id, "--simulate", "-n", "1", "--rows", "automanual-gpt4"]
    code, _out, err = run_cli(
        [*args, "--store", str(store), "--run-id", "b", "--no-progress"], capsys
    )
    assert code == 0, err
    db = open_db(str(store))
    try:
        assert latest_manual(db, "b.build-automanual") is not None
        assert RuleSystem(db, "b.build-automanual").rules()
    finally:
        db.close()
    with RunStore(store) as runs:
        assert runs.get_run("b.build-planner-lib") is None  # no chosen row needs it
        (episode,) = runs.episodes("b.automanual-gpt4")
    assert "build b.build-automanual" in json.dumps(episode.info)


@pytest.mark.slow
def test_simulated_rows_play_on_the_ray_backend(here: Path) -> None:
    """The scripted models are built where the episodes play (a picklable recipe).

    The command runs in its own process: it starts a Ray cluster of its own, and a
    driver left in the test process outlives that cluster's shutdown (Ray ended the
    whole test session with exit code 1 minutes later)."""
    pytest.importorskip("ray", reason="the Ray backend needs the ray extra")
    store = here / "s.sqlite3"
    args = ["reproduce", "run", "adapt-table2-textcraft", "--rows", "adapt", "--simulate"]
    opts = ["-n", "2", "--store", str(store), "--run-id", "ray", "--no-progress"]
    done = subprocess.run(
        [sys.executable, "-m", "lorekit", *args, *opts, "--backend", "ray", "--actors", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=here,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with RunStore(store) as db:
        models = {c["model"] for c in db.llm_calls("ray.adapt")}
        assert len(db.episodes("ray.adapt")) == 2
    assert models == {"simulated-textcraft-executor", "simulated-textcraft-planner"}


def test_a_crafter_table_compares_the_score_column(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """AgentKit's Table 1 has a Crafter score column beside the reward: computed from the
    games' final achievements, with a bootstrap interval, saved with its metric."""
    store = here / "s.sqlite3"
    args = ["reproduce", "run", "agentkit-table1-crafter", "--rows", "random", "--simulate"]
    code, _out, err = run_cli(
        [*args, "-n", "2", "--store", str(store), "--run-id", "cs", "--no-progress"], capsys
    )
    assert code == 0, err
    saved = json.loads((here / "reproduce" / "agentkit-table1-crafter-cs.json").read_text())
    cells = {c["column"]: c for c in saved["cells"]}
    score = cells["score"]
    assert (score["metric"], score["published"], score["n"]) == ("crafter_score", 1.6, 2)
    assert score["low"] <= score["ours"] <= score["high"]
    assert cells["reward"]["metric"] == "mean_reward"
    assert "Crafter score (%) over last_step.achievements" in (
        here / "reproduce" / "agentkit-table1-crafter-cs.md"
    ).read_text(encoding="utf-8")
