"""``lorekit reproduce run``'s verdict and record, end to end: a served model's few episodes
are "too few" and no reproduction, ``-n`` samples across task groups and resumes, and a
run of another setup is saved as what it was, without a verdict, or refused on resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.eval.store import RunStore
from lorekit.llm.testing import OpenAICompatServer

TABLE = """\
paper: Test paper
source: Table 9
title: a table
env: textcraft
split: test
EPISODES
metric: success_rate
aggregation: one run
runnable: true
columns:
  - {name: all}
  - {name: depth 2, group: depth-2}
rows:
  - {id: ROW, label: The row, agent: AGENT, OPTIONS published: {all: 19.0, depth 2: 30.0}}
"""


def _table(here: Path, agent: str = "oracle", episodes: int | None = None) -> Path:
    options = "options: {max_turns: 2}," if agent == "react" else ""
    text = (
        TABLE.replace("EPISODES", f"episodes: {episodes}" if episodes else "")
        .replace("ROW", agent)
        .replace("AGENT", agent)
        .replace("OPTIONS", options)
    )
    path = here / "table.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    return tmp_path


def _saved(here: Path, run_id: str) -> dict[str, Any]:
    saved: dict[str, Any] = json.loads(
        (here / "reproduce" / f"table-{run_id}.json").read_text(encoding="utf-8")
    )
    return saved


def _gives_up(body: dict[str, Any]) -> str:
    return "Thought: I cannot do this.\nAction: failed"


def _served(here: Path, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str, str]:
    with OpenAICompatServer(_gives_up) as srv:
        args = ["reproduce", "run", "table.yaml", "--model", "m", "--base-url", srv.base_url]
        return run_cli([*args, "--store", str(here / "s.sqlite3"), "--no-progress", *more], capsys)


def test_three_served_episodes_of_two_hundred_are_too_few_and_no_reproduction(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(here, "react")
    code, out, err = _served(here, capsys, "-n", "3", "--run-id", "few")
    assert code == 0, err
    saved = _saved(here, "few")
    assert saved["answered_by"] == "model" and saved["reproduction"] is False
    assert "a sample: 3 of the experiment's 200 tasks" in saved["why_not"]
    (overall, _depth2) = saved["cells"]
    assert (overall["ours"], overall["n"], overall["paper_n"]) == (0.0, 3, 200)
    assert overall["verdict"] == "too few episodes" and overall["compatible"] is None
    assert overall["power"] < 0.5 and overall["needed"] > 3
    assert "NOT a reproduction: a sample: 3 of the experiment's 200 tasks" in " ".join(out.split())
    page = (here / "reproduce" / "table-few.md").read_text(encoding="utf-8")
    assert "- NOT a reproduction: a sample: 3 of the experiment's 200 tasks" in page
    # what the row spent and ran with is saved beside the figures
    row = saved["rows"]["react"]
    assert row["calls"] > 0 and row["prompt_tokens"] > 0 and row["episodes"] == 3
    assert row["setup"]["options"] == {"max_turns": 2} and row["setup"]["split"] == "test"


def test_every_task_of_the_experiment_served_is_a_reproduction(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(here, "react", episodes=4)  # the experiment's tasks: the split's first 4
    code, _out, err = _served(here, capsys, "--run-id", "all")
    assert code == 0, err
    saved = _saved(here, "all")
    assert saved["reproduction"] is True and saved["why_not"] == []
    assert saved["tasks"]["played"] == saved["tasks"]["population"] == 4
    assert not saved["tasks"]["sampled"]


def test_n_samples_every_group_and_a_larger_n_keeps_what_was_played(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(here)
    args = ["reproduce", "run", "table.yaml", "--store", "s.sqlite3", "--run-id", "r"]
    code, out, err = run_cli([*args, "-n", "6", "--no-progress"], capsys)
    assert code == 0, err
    tasks = _saved(here, "r")["tasks"]
    assert tasks["sampled"] and tasks["groups"] == {
        "depth-2": [2, 68],
        "depth-3": [4, 121],
        "depth-4": [0, 11],
    }  # the split's first 6 are all depth-4
    assert "6 of the experiment's 200 (split test), drawn across its task groups" in out
    (_, depth2) = _saved(here, "r")["cells"]
    assert (depth2["n"], depth2["paper_n"]) == (2, 68)
    code, out, err = run_cli([*args, "-n", "10", "--no-progress"], capsys)
    assert code == 0, err
    assert "6 episodes already done, 4 played now" in err
    assert _saved(here, "r")["tasks"]["tasks"][:6] == tasks["tasks"]
    # a smaller n again compares only the episodes it plans
    code, out, err = run_cli([*args, "-n", "3", "--no-progress"], capsys)
    assert code == 0, err
    assert _saved(here, "r")["cells"][0]["n"] == 3


def test_another_setup_is_saved_as_it_ran_and_gets_no_verdict(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(here)
    args = ["reproduce", "run", "table.yaml", "--store", "s.sqlite3", "--run-id", "dev"]
    code, out, err = run_cli(
        [*args, "-n", "4", "--split", "dev", "--env-opt", "max_steps=5", "--no-progress"], capsys
    )
    assert code == 0, err
    saved = _saved(here, "dev")
    assert saved["compared"] is False and saved["reproduction"] is False
    assert saved["setup_differs"] == [
        "split dev, the experiment's test",
        "env option max_steps=5, the experiment sets none",
    ]
    assert saved["tasks"]["split"] == "dev" and saved["setup"]["split"] == "test"
    page = (here / "reproduce" / "table-dev.md").read_text(encoding="utf-8")
    assert "- env: textcraft, split dev (the experiment's: test)" in page
    row = saved["rows"]["oracle"]
    assert row["setup"]["split"] == "dev" and row["setup"]["env_options"] == {"max_steps": 5}
    assert row["env_kwargs"]["max_steps"] == 5  # as the run stored it
    assert {c["verdict"] for c in saved["cells"]} <= {"setup differs", "-"}
    assert all(c["power"] is None and c["compatible"] is None for c in saved["cells"])
    flat = " ".join(out.split())
    assert "not compared with the paper: the setup differs from the experiment's: split dev" in flat
    # an option given its env's default changes nothing
    code, _out, err = run_cli(
        ["reproduce", "run", "table.yaml", "--store", "s.sqlite3", "--run-id", "same",
         "-n", "2", "--env-opt", "max_steps=40", "--no-progress"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert _saved(here, "same")["compared"] is True


def test_resuming_a_run_id_with_another_setup_is_refused_before_anything_plays(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(here)
    args = ["reproduce", "run", "table.yaml", "--store", "s.sqlite3", "--run-id", "x", "-n", "2"]
    code, _out, err = run_cli([*args, "--env-opt", "max_steps=5", "--no-progress"], capsys)
    assert code == 0, err
    code, _out, err = run_cli([*args, "--split", "dev", "--no-progress"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(
        "lorekit: error: --run-id: run x.oracle was played with another setup (split was "
        "test, now dev; env option max_steps was 5, now unset)"
    )
    with RunStore.open_readonly(here / "s.sqlite3") as db:
        assert db.episode_count("x.oracle") == 2  # nothing played
    # scripted episodes never mix with a model's under one run id
    code, _out, err = run_cli([*args, "--env-opt", "max_steps=5", "--simulate"], capsys)
    assert code == 2 and "(simulate was false, now true)" in err
