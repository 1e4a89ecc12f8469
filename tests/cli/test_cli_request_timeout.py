"""``--request-timeout`` through the real CLI, and what failed calls cost in
``lorekit runs show``, against the local fault server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.eval.store import RunStore
from lorekit.llm.testing import Fault, OpenAICompatServer

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "planner_gate.yaml")
SETS = ["--set", "goal=craft 4 oak planks", "--set", "observation=You see an oak tree."]


def one_attempt_config(tmp_path: Path, url: str, **extra: object) -> str:
    """A run config whose default role makes one attempt (no backoff to wait for)."""
    path = tmp_path / "run.yaml"
    role = {"model": "test-model", "base_url": url, "max_attempts": 1, **extra}
    path.write_text(json.dumps({"roles": {"default": role}}))
    return str(path)


RUN = ["run", "textcraft", "--agent", "react", "-n", "1", "--no-progress"]


@pytest.mark.parametrize(
    "command",
    [
        [*RUN, "--model", "m"],
        ["graph", "run", EXAMPLE, "--model", "m", *SETS],
        ["models", "check", "--model", "m"],
    ],
    ids=["run", "graph-run", "models-check"],
)
@pytest.mark.parametrize("value", ["0", "-2", "inf", "nan", "soon"])
def test_bad_request_timeout_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], command: list[str], value: str
) -> None:
    code, _, err = run_cli([*command, "--request-timeout", value], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lorekit: error:")
    assert "--request-timeout" in lines[0] or "--timeout" in lines[0]


def test_run_applies_the_request_timeout_to_model_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    with OpenAICompatServer() as srv:
        srv.inject(Fault.slow(60.0), times=None)
        config = one_attempt_config(tmp_path, srv.base_url, timeout_s=30)
        t0 = time.monotonic()
        code, _, err = run_cli(
            [*RUN, "--config", config, "--store", str(store), "--request-timeout", "0.3"], capsys
        )
        elapsed = time.monotonic() - t0
    assert code == 1, err  # a run whose episodes ended in errors exits 1
    assert "within 0.3s" in err
    # the flag (0.3 s) won over the config's 30 s: 15 s leaves room for a loaded machine
    assert elapsed < 15.0
    with RunStore(store) as db:
        run_id = db.list_runs()[0].run_id
        calls = db.llm_calls(run_id)
        saved = db.get_run(run_id)
    assert calls and all("within 0.3s" in (c["error"] or "") for c in calls)
    assert saved is not None
    assert saved.config["run"]["roles"]["default"]["timeout_s"] == 0.3


def test_graph_run_applies_the_request_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.slow(60.0), times=None)
        config = one_attempt_config(tmp_path, srv.base_url)
        t0 = time.monotonic()
        args = ["graph", "run", EXAMPLE, "--config", config, "--sequential", "--json"]
        code, out, _ = run_cli([*args, "--request-timeout", "0.3", *SETS], capsys)
        elapsed = time.monotonic() - t0
    assert code == 1  # the first node's model call failed
    first = json.loads(out)["trace"]["nodes"][0]
    assert "within 0.3s" in first["attempts"][0]["error"]
    assert elapsed < 15.0  # the flag (0.3 s) cut the 60 s wait short


def test_models_check_takes_request_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.slow(5.0), times=None)
        args = ["models", "check", "--model", "test-model", "--base-url", srv.base_url]
        code, _, err = run_cli([*args, "--attempts", "1", "--request-timeout", "0.3"], capsys)
    assert code == 1 and "within 0.3s" in err


def test_models_check_marks_estimated_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAICompatServer(["pong"], report_usage=False) as srv:
        args = ["models", "check", "--model", "test-model", "--base-url", srv.base_url]
        code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "estimated" in out


def test_runs_show_counts_billed_tokens_of_failed_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reasoning model cut off at max_tokens: the call fails, is not retried,
    and the run summary still counts the tokens the server billed for it."""
    store = tmp_path / "runs.sqlite3"
    with OpenAICompatServer(["Action: inventory"] * 50) as srv:
        srv.inject(Fault.no_text("length", reasoning="let me think"))
        config = one_attempt_config(tmp_path, srv.base_url, max_attempts=4)
        code, _, err = run_cli([*RUN, "--config", config, "--store", str(store)], capsys)
        assert code == 1, err  # the episode ended in the model's error: the run exits 1
        assert "LLMLengthError" in err
        first = srv.requests[0].body
    assert first is not None
    with RunStore(store) as db:
        run_id = db.list_runs()[0].run_id
        calls = db.llm_calls(run_id)
        usage = db.usage_by_role(run_id)
    failed = [c for c in calls if c["error"]]
    assert len(failed) == 1 and failed[0]["error"].startswith("LLMLengthError")
    billed = failed[0]["prompt_tokens"] + failed[0]["completion_tokens"]
    assert billed > 0 and sum(u["error_tokens"] for u in usage.values()) == billed
    code, out, _ = run_cli(["runs", "show", run_id, "--store", str(store)], capsys)
    assert code == 0
    assert f"{billed:,} billed for failed calls" in out and "failed-call tok" in out
