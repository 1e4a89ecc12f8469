"""The CLI: version, models check against a local server, runs list/show/export,
and one-line errors with exit code 2 for bad arguments."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit import __version__
from lorekit.eval.store import RunStore
from lorekit.llm import CallRecord, Completion, Message, Usage
from lorekit.llm.base import RequestParams
from lorekit.llm.testing import Fault, OpenAICompatServer


def make_store(path: Path) -> str:
    with RunStore(path) as db:
        run_id = db.create_run("r1", env="textcraft", agent="react", config={"k": 1})
        for i, (group, ok) in enumerate([("depth-1", True), ("depth-2", False), ("depth-2", True)]):
            ep = db.episode(run_id, f"t{i}/0", index=i, task_id=f"t{i}", task_group=group, seed=0)
            ep.add_step("obs", "get 1 stick", 0.0, False, {})
            ep.add_llm_call(
                CallRecord(
                    "executor",
                    "m",
                    (Message("user", "q"),),
                    RequestParams(),
                    time.time(),
                    0.1,
                    Completion("a", Usage(10, 2), "m"),
                )
            )
            ep.finish(success=ok, reward=1.0 if ok else 0.0)
    return run_id


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["--version"], capsys)
    assert code == 0 and __version__ in out


def test_models_check_against_local_server(capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAICompatServer(["pong"]) as srv:
        code, out, err = run_cli(
            ["models", "check", "--model", "test-model", "--base-url", srv.base_url], capsys
        )
        assert code == 0, err
        assert "'pong'" in out and "ms" in out and "prompt" in out
        assert srv.requests[0].body["model"] == "test-model"


def test_models_check_reports_model_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAICompatServer(["x"]) as srv:
        srv.inject(Fault.status(404, "model 'nope' not found"))
        code, _, err = run_cli(
            ["models", "check", "--model", "nope", "--base-url", srv.base_url], capsys
        )
    assert code == 1
    assert "nope" in err and "127.0.0.1" in err and "404" in err


def test_runs_list_show_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "runs.sqlite3"
    run_id = make_store(store)
    code, out, _ = run_cli(["runs", "list", "--store", str(store)], capsys)
    assert code == 0 and run_id in out and "66.7%" in out
    code, out, _ = run_cli(["runs", "show", run_id, "--store", str(store)], capsys)
    assert code == 0
    assert "depth-1" in out and "depth-2" in out and "50.0%" in out and "executor" in out
    target = tmp_path / "out.jsonl"
    code, _, err = run_cli(
        ["runs", "export", run_id, "--store", str(store), "-o", str(target)], capsys
    )
    assert code == 0 and "wrote 4 lines" in err
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert lines[0]["type"] == "run" and [x["type"] for x in lines[1:]] == ["episode"] * 3


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["runs", "show", "nope"], "no run 'nope'"),
        (["runs", "list", "--store", "/does/not/exist.sqlite3"], "no run store"),
        (["models", "check"], "Missing option"),
        (["models", "check", "--model", "m", "--base-url", "ftp://x"], "--base-url"),
        (["models", "check", "--model", "m", "--timeout", "-3"], "--timeout"),
        (["frobnicate"], "No such command"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    store = tmp_path / "runs.sqlite3"
    make_store(store)
    if args[:2] == ["runs", "show"]:
        args = [*args, "--store", str(store)]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lorekit: error:") and needle in lines[0]


def test_installed_entry_point_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lorekit.cli", "runs", "show"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "Missing argument" in proc.stderr


def test_show_episode_and_unknown_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    make_store(store)
    code, out, _ = run_cli(["show", "r1", "1", "--store", str(store)], capsys)
    assert code == 0 and "t1/0" in out and "get 1 stick" in out and "executor" in out
    code, _, err = run_cli(["show", "r1", "nope", "--store", str(store)], capsys)
    assert code == 2 and err.startswith("lorekit: error: EPISODE:") and "t0/0" in err
