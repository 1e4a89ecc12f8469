"""``lorekit run crafter --agent spring`` end to end: scripted models, then a real
local OpenAI-compatible server; ``lorekit show`` prints each step's questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from test_spring_context import PAPER_LINE, experience_file

from lorekit.agents.spring.testing import spring_model
from lorekit.eval.store import RunStore
from lorekit.laws.experience import Experience
from lorekit.llm import Message, Roles, ScriptedLLM
from lorekit.llm.testing import Fault, OpenAICompatServer

#: Model flags for runs whose models are patched (a local URL: no API key is asked for).
SIM_MODEL = ("--model", "sim", "--base-url", "http://127.0.0.1:9/v1")


def run_args(store: Path, run_id: str, *agent_opts: str) -> list[str]:
    opts = [x for o in agent_opts for x in ("--agent-opt", o)]
    fixed = ["--run-id", run_id, "-n", "1", "-j", "1", "--cache", "off"]
    return ["run", "crafter", "--agent", "spring", *opts, "--store", str(store), *fixed]


def test_run_and_show_with_a_scripted_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = ScriptedLLM(fn=spring_model(invalid=1))
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: Roles(llm))
    store = tmp_path / "runs.db"
    args = run_args(store, "p", "context=paper", "max_steps=3")
    code, _, err = run_cli([*args, *SIM_MODEL], capsys)
    assert code == 0, err
    with RunStore(store) as db:
        (episode,) = db.episodes("p")
        notes = episode.info["notes"]["spring"]
        calls = db.llm_calls("p", episode.episode_key)
    assert episode.steps == 3 and len(notes["steps"]) == 3 and notes["context"] == "paper"
    assert len(calls) == 3 * 10  # nine questions, the action asked twice
    assert {c["meta"]["node"] for c in calls} == {n["key"] for n in notes["steps"][0]["nodes"]}
    assert all(c["role"] == "reasoner" for c in calls)
    assert PAPER_LINE in calls[0]["messages"][0]["content"]
    code, out, _ = run_cli(["show", "p", "0", "--store", str(store)], capsys)
    assert code == 0
    assert "SPRING" in out and "context=paper" in out and "fallbacks=0" in out
    assert "step 1 -> move_west" in out and "step 3 ->" in out
    assert "refused" in out and "is not an allowed action" in out
    assert "subgoals" in out and "reach the tree" in out


def test_bad_context_is_one_line_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.db"
    code, _, err = run_cli([*run_args(store, "x", "context=wiki"), *SIM_MODEL], capsys)
    assert code == 2
    assert "agent 'spring' with --agent-opt context=wiki" in err
    assert "context must be one of paper, actions, experience:FILE" in err
    assert not store.exists()
    code, _, err = run_cli(["run", "textcraft", "--agent", "spring", *SIM_MODEL], capsys)
    assert code == 2 and "written for crafter only" in err


def _server_answer(body: dict[str, Any]) -> str:
    messages = tuple(Message(m["role"], m["content"]) for m in body["messages"])
    return spring_model()(messages)


@pytest.mark.parametrize("context", ["paper", "actions", "experience"])
def test_run_through_a_local_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], context: str
) -> None:
    store = tmp_path / "runs.db"
    laws = experience_file(tmp_path)
    option = f"experience:{laws}" if context == "experience" else context
    with OpenAICompatServer(_server_answer) as srv:
        srv.inject(Fault.server_error(503))  # retried by the backend, not seen by the agent
        model = ("--model", "test-model", "--base-url", srv.base_url)
        args = run_args(store, "s", f"context={option}", "max_steps=2")
        code, _, err = run_cli([*args, *model, "--tasks", "score"], capsys)
        bodies = [r.body for r in srv.requests]
    assert code == 0, err
    assert len(bodies) == 2 * 9 + 1
    systems = {b["messages"][0]["content"] for b in bodies}
    assert len(systems) == 2  # one per step: the observations move on
    rendered = Experience.load(laws).render().strip()
    expected = {
        "paper": PAPER_LINE,
        "actions": "The game's actions are named: noop",
        "experience": rendered,
    }[context]
    assert all(expected in system for system in systems)
    with RunStore(store) as db:
        (episode,) = db.episodes("s")
    assert episode.status != "error" and episode.steps == 2
    assert episode.task_id == "score/seed-0"  # crafter's benchmark episode
    assert episode.info["notes"]["spring"]["context"] == option
