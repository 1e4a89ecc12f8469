"""``lorekit team run`` with models from a config or a server: fresh ones per episode.

A simulated team builds its scripted models per episode; these tests hold the
same for every other model: a scripted config's answers start over in each
episode, and a served model gets a new client, so an episode's prompts and
connections owe nothing to the episodes played before it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.eval.store import RunStore
from lorekit.llm.testing import OpenAICompatServer

WOOD = "collect-20-wood/seed-0"
STONE = "collect-20-stone/seed-1"


def _answer(note: str, task: str = "t") -> str:
    """One object every planner of the hourglass accepts; the actions say ``note``."""
    fields = {"objective": "o", "plan": ["p"], "task": task, "actions": [f"say: {note}"]}
    return json.dumps(fields | {"status": "ongoing", "rationale": "r"})


def _said(store: Path, run_id: str) -> dict[str, list[str]]:
    with RunStore.open_readonly(store) as db:
        return {
            ep.task_id: [m["text"] for m in ep.info["notes"]["team"]["messages"]]
            for ep in db.episodes(run_id)
        }


def test_a_scripted_config_starts_its_answers_over_in_every_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    answers = [_answer(f"note-{k}") for k in range(1, 9)]
    default = {"provider": "scripted", "model": "notes", "answers": answers}
    config.write_text(json.dumps({"roles": {"default": default}}), encoding="utf-8")
    store = tmp_path / "runs.sqlite3"

    def run(run_id: str, *tasks: str) -> dict[str, list[str]]:
        args = [
            "team", "run", "crafter-party", "--org", "solo", "--clock", "virtual",
            "--max-time", "60", "--config", str(config), "--store", str(store),
            "--run-id", run_id, "-j", "1", *[x for t in tasks for x in ("--task", t)],
        ]  # fmt: skip
        code, _, err = run_cli(args, capsys)
        assert code == 0, err
        return _said(store, run_id)

    forward, backward = run("fwd", WOOD, STONE), run("bwd", STONE, WOOD)
    assert forward[WOOD] and forward == backward
    assert forward[STONE] == run("alone", STONE)[STONE]


@pytest.mark.parametrize("cache", ["off", "read-write"])
def test_served_models_are_new_in_every_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cache: str
) -> None:
    """Episode 2's requests carry nothing of episode 1: no word it heard, no connection
    (the run's cache, shared by the episodes, stays open for the second)."""
    monkeypatch.chdir(tmp_path)  # the cache file goes to .lorekit/ here

    def script(body: dict[str, Any]) -> str:
        """The task planner names the goal in its task; the action planner, which
        sees only the task, says it."""
        prompt = "\n".join(m["content"] for m in body["messages"])
        goal = re.search(r"goal: Together, collect (\d+ \w+)", prompt)
        task = re.search(r"The task: (.+)", prompt)
        said = task.group(1) if task else "?"
        return _answer(said, f"marker {goal.group(1)} done" if goal else "t")

    with OpenAICompatServer(script) as srv:
        args = [
            "team", "run", "crafter-party", "--org", "solo", "--clock", "wall",
            "--max-time", "3", "--cutoff", "2", "--model", "test-model",
            "--base-url", srv.base_url, "--task", WOOD, "--task", STONE, "-j", "1",
            "--store", str(tmp_path / "runs.sqlite3"), "--run-id", "served",
            "--cache", cache,
        ]  # fmt: skip
        code, _, err = run_cli(args, capsys)
        requests = srv.requests
    assert code == 0, err
    texts = [json.dumps(r.body["messages"] if r.body else None) for r in requests]
    second = next(i for i, text in enumerate(texts) if "collect 20 stone" in text)
    first_peers = {r.peer for r in requests[:second]}
    assert second > 0 and all("collect 20 wood" not in text for text in texts[second:])
    said = _said(tmp_path / "runs.sqlite3", "served")
    assert "marker 20 wood done" in said[WOOD] and "marker 20 stone done" in said[STONE]
    assert not any("20 wood" in text for text in texts[second:])  # nothing it heard
    assert first_peers.isdisjoint(r.peer for r in requests[second:])  # no connection
