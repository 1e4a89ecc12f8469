"""AutoManual's three stages through ``lorekit reproduce`` with every role on a real local
OpenAI-compatible server (the openai SDK path), and the testing stage with the
authors' published manual as one command, behind the server the scripted models.

The reproduction builds, formulates and tests in one command, each stage under an
event loop of its own with the same model objects: it used to stop at the
formulation with ``RuntimeError: Event loop is closed``. Its ``--max-cost`` now
counts what the build spent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from _published_data import needs_published, published

from lorekit.agents.automanual.testing.builder import (
    builder_model,
    consolidator_model,
    formulator_model,
)
from lorekit.agents.automanual.testing.planner import planner_model
from lorekit.agents.automanual.testing.published import replay_model
from lorekit.eval.store import RunStore
from lorekit.llm import Message
from lorekit.llm.testing import OpenAICompatServer

pytestmark = pytest.mark.slow  # ALFWorld games in child processes, a build of six of them

MODELS = {
    "planner-model": planner_model(repair=1.0),
    "builder-model": builder_model(),
    "consolidator-model": consolidator_model(),
    "formulator-model": formulator_model(),
    "replay-model": replay_model("alfworld"),
    "replay-web-model": replay_model("miniwob"),
}
TINY = """\
paper: AutoManual (Chen et al., 2024)
source: a small check
title: one build, one row that tests with it
env: alfworld
split: test
metric: success_rate
aggregation: one run
runnable: true
columns:
  - {name: all}
builds:
  - {id: am, variant: automanual, split: dev, per_type: 1}
rows:
  - {id: am, label: AutoManual, agent: automanual, build: am, published: {all: 50.0}}
"""


#: How the server tells the stages apart when one model serves them all: the first
#: words of each stage's system prompt (prompts/builder.yaml, prompts/formulator.yaml).
STAGES = {
    "You maintain the rule book": "builder-model",
    "You keep the rule book": "consolidator-model",
    "You write the manual": "formulator-model",
}


def answer(body: dict[str, Any]) -> str:
    messages = tuple(Message(m["role"], m["content"]) for m in body["messages"])
    model = body["model"]
    if model == "one-model":  # every role: the stage is read off the system prompt
        system = messages[0].content
        model = next((m for k, m in STAGES.items() if system.startswith(k)), "planner-model")
    return MODELS[model](messages)


def config(path: Path, url: str, *, planner: str = "one-model") -> Path:
    """One model for every role (``default``), as ``--model M`` gives: the same model
    objects serve the build, the formulation and the test."""
    roles = {"default": planner}
    lines = [
        f"  {r}: {{model: {m}, base_url: '{url}', max_attempts: 3, "
        "price: {prompt: 1000000, completion: 1000000}}"
        for r, m in roles.items()
    ]
    path.write_text("roles:\n" + "\n".join(lines) + "\ncache: {mode: off}\n", encoding="utf-8")
    return path


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    return tmp_path


def test_build_formulate_and_test_through_a_server_within_max_cost(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "tiny.yaml").write_text(TINY, encoding="utf-8")
    store = here / "s.sqlite3"
    with OpenAICompatServer(answer) as srv:
        cfg = config(here / "run.yaml", srv.base_url)
        args = ["reproduce", "run", "tiny.yaml", "-n", "2", "--config", str(cfg),
                "--store", str(store), "--run-id", "r", "--no-progress"]  # fmt: skip
        # a dollar a token: the build's first call alone would pass the limit, so it is
        # refused before it is sent; no row begins, nor the second repeat's build
        code, _out, err = run_cli([*args, "--max-cost", "1", "--repeats", "2"], capsys)
        assert code == 3, err
        assert "Event loop is closed" not in err
        flat = " ".join(err.split())
        assert "stopped at --max-cost 1: " in flat and "Spent on this reproduction: $" in flat
        assert "Resume with --run-id r and a higher --max-cost" in flat
        assert srv.request_count == 0  # refused before it was sent, not after
        with RunStore(store) as runs:
            assert runs.episodes("r.build-am") == []  # none left half-written
            assert runs.get_run("r.am") is None  # the row was not begun
            assert runs.get_run("r.r2.build-am") is None
        asked = srv.request_count
        # a higher limit resumes: the build and its manual are kept, the row plays
        code, _out, err = run_cli([*args, "--max-cost", "1e12"], capsys)
        assert code == 0, err
        with RunStore(store) as runs:
            tested = runs.episodes("r.am")
            assert len(tested) == 2 and all(e.status != "error" for e in tested)
            assert len(runs.episodes("r.build-am")) == 6  # one game per task type
            assert runs.usage_by_role("r.build-am")["formulator"]["calls"] == 1
        assert srv.request_count > asked
        systems = {r.body["messages"][0]["content"][:26] for r in srv.requests}
        assert {"You maintain the rule book", "You write the manual for a"} <= systems
    assert "build r.build-am" in json.dumps(tested[0].info["notes"]["manual"])


@needs_published
def test_the_testing_stage_with_the_published_manual_is_one_command(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``lorekit run`` on a published ``rule_manager.json`` and ``lorekit reproduce``'s
    published row, both against the server: the planner sees the authors' manual and
    the type's skill, plays it on AutoManual's games, and the run says which manual."""
    store = here / "s.sqlite3"
    games = ["--env-opt", "source=official", "--env-opt", "variant=automanual"]
    manual = published("alfworld") / "rule_manager.json"
    with OpenAICompatServer(answer) as srv:
        cfg = config(here / "run.yaml", srv.base_url, planner="replay-model")
        code, _out, err = run_cli(
            ["run", "alfworld", "--agent", "automanual", "--agent-opt", f"manual={manual}",
             "--config", str(cfg), *games, "-n", "2", "--store", str(store),
             "--run-id", "t", "--no-progress"],
            capsys,
        )  # fmt: skip
        assert code == 0, err
        sent = [r.body["messages"][1]["content"] for r in srv.requests]
        code, _out, err = run_cli(
            ["reproduce", "run", "automanual-table1-alfworld", "--rows",
             "automanual-published-gpt4", "--config", str(cfg), *games, "-n", "2",
             "--store", str(store), "--run-id", "p", "--no-progress"],
            capsys,
        )  # fmt: skip
        assert code == 0, err
    assert all("## Manual" in s and "## Skill for a similar task (" in s for s in sent)
    with RunStore(store) as runs:
        plain, row = runs.episodes("t"), runs.episodes("p.automanual-published-gpt4")
        assert runs.get_run("p.build-published") is not None  # imported, not played
        assert runs.episodes("p.build-published") == []
    for episode in [*plain, *row]:
        assert episode.status == "success", episode.task_id  # two look_at games, both won
        note = episode.info["notes"]["manual"]
        assert "AutoManual's published ALFWorld run (minghchen/automanual@aeb17e4" in note
        assert episode.info["initial_observation"].startswith("-= Welcome")


@needs_published
def test_the_miniwob_testing_stage_with_the_published_manual_is_one_command(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Table 5's published row against the server, in Chromium: the authors' MiniWoB++
    manual, imported and never played, the exact-type skill, the page as
    ``agent.cur_html_string``; two of its tasks are played."""
    pytest.importorskip("selenium", reason="the web extra is not installed")
    from lorekit.envs.miniwob import BrowserMissing, find_browser

    try:
        find_browser()
    except BrowserMissing as missing:
        pytest.skip(f"MiniWoB++ needs a browser: {missing}")
    store = here / "s.sqlite3"
    with OpenAICompatServer(answer) as srv:
        cfg = config(here / "run.yaml", srv.base_url, planner="replay-web-model")
        code, _out, err = run_cli(
            ["reproduce", "run", "automanual-table5-miniwob-feedback", "--rows",
             "automanual-published-gpt35", "--config", str(cfg), "--repeats", "1",
             "-n", "2", "--store", str(store), "--run-id", "w", "--no-progress"],
            capsys,
        )  # fmt: skip
        assert code == 0, err
        assert "build published is AutoManual's published MiniWoB++ run" in " ".join(err.split())
        sent = [r.body["messages"][1]["content"] for r in srv.requests]
    assert sent and all("## Manual" in s and "## Skill for a similar task (" in s for s in sent)
    with RunStore(store) as runs:
        assert runs.episodes("w.build-published") == []  # imported, not played
        played = runs.episodes("w.automanual-published-gpt35")
        assert len(played) == 2 and all(e.status != "error" for e in played)
        for episode in played:
            assert not [c for c in runs.llm_calls("w.automanual-published-gpt35") if c["error"]]
            note = episode.info["notes"]["manual"]
            assert "AutoManual's published MiniWoB++ run (minghchen/automanual@aeb17e4" in note
