"""One writer per run: a second process on the same run is refused with who holds it
(pid, host, since when) and exit code 2; a lock left by a killed process is stale and
taken over, so ``kill -9`` then resume still plays exactly the missing episodes.

Every case uses real processes. The first writer is held inside a model call by a
local server that answers only when the test says so, so nothing here depends on
how fast this machine is.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lorekit.eval.store import RunStore
from lorekit.eval.store_lock import RunLockedError
from lorekit.llm.testing import OpenAICompatServer

LIMIT_S = 600
BUILD = "automanual-build:automanual"  # generous: a busy machine is slow, never wrong
HOLDER = """
import sys
from lorekit.eval.store import RunStore
store = RunStore(sys.argv[1])
for arg in sys.argv[2:]:  # RUN_ID or RUN_ID=AGENT
    run_id, _, agent = arg.partition("=")
    store.create_run(run_id, env="alfworld", agent=agent or "random", config={})
print("held", flush=True)
sys.stdin.read()  # until the test closes our stdin
"""


def _env(tmp_path: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k not in ("LOREKIT_STORE", "LOREKIT_DEBUG")}
    return {**keep, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}


def _lorekit(*args: str) -> list[str]:
    return [sys.executable, "-m", "lorekit", *args]


@pytest.fixture
def gate() -> Iterator[tuple[OpenAICompatServer, threading.Event]]:
    """A server whose answers wait until the event is set."""
    opened = threading.Event()

    def answer(body: dict[str, Any]) -> str:
        opened.wait(LIMIT_S)
        return "Thought: look\nAction: inventory"

    with OpenAICompatServer(answer) as srv:
        yield srv, opened
        opened.set()


def _run_args(srv: OpenAICompatServer, store: Path) -> list[str]:
    return _lorekit(
        "run", "textcraft", "--agent", "react", "--model", "test-model",
        "--base-url", srv.base_url, "-n", "2", "-j", "1", "--agent-opt", "max_turns=2",
        "--run-id", "r", "--store", str(store), "--no-progress", "--cache", "off",
        "--request-timeout", str(LIMIT_S),
    )  # fmt: skip


def _wait_for_first_call(srv: OpenAICompatServer, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + LIMIT_S
    while srv.request_count == 0:
        if proc.poll() is not None:
            pytest.fail(f"the first writer ended early: {proc.communicate()[1][-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail("the first writer never asked its model")
        time.sleep(0.05)


def _one_error_line(done: subprocess.CompletedProcess[str], progress: bool = False) -> str:
    """The one error line; ``progress``: after the lines a command prints as it goes."""
    lines = done.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("lorekit: error: ")]
    assert errors == lines[-1:] and (progress or len(lines) == 1), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    return lines[-1]


def test_a_second_process_on_a_running_run_is_refused_and_bills_nothing(
    tmp_path: Path, gate: tuple[OpenAICompatServer, threading.Event]
) -> None:
    srv, opened = gate
    store = tmp_path / "s.sqlite3"
    first = subprocess.Popen(
        _run_args(srv, store), cwd=tmp_path, env=_env(tmp_path), text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        _wait_for_first_call(srv, first)
        second = subprocess.run(
            _run_args(srv, store), cwd=tmp_path, env=_env(tmp_path), capture_output=True,
            text=True, timeout=LIMIT_S,
        )  # fmt: skip
        assert second.returncode == 2
        line = _one_error_line(second)
        assert "run 'r'" in line and "is being written by another process" in line
        assert f"pid {first.pid} on {socket.gethostname()}, since " in line
        assert srv.request_count == 1  # the second process asked no model
    finally:
        opened.set()
        _out, err = first.communicate(timeout=LIMIT_S)
    assert first.returncode == 0, err[-2000:]
    with RunStore.open_readonly(store) as db:
        assert len(db.episodes("r")) == 2
        assert len(db.llm_calls("r")) == 4 == srv.request_count  # each call billed once
        assert db.run_writer("r") is None


def test_kill_9_then_resume_takes_the_stale_lock_over(
    tmp_path: Path, gate: tuple[OpenAICompatServer, threading.Event]
) -> None:
    srv, opened = gate
    store = tmp_path / "s.sqlite3"
    first = subprocess.Popen(
        _run_args(srv, store), cwd=tmp_path, env=_env(tmp_path), text=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for_first_call(srv, first)
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=LIMIT_S)
    assert list(tmp_path.glob("s.sqlite3.lock-*")), "the killed writer left its lock file"
    listed = subprocess.run(
        _lorekit("runs", "list", "--store", str(store)),
        cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=LIMIT_S,
    )  # fmt: skip
    assert "interrupted" in listed.stdout and "running" not in listed.stdout  # nobody writes it
    opened.set()
    again = subprocess.run(
        _run_args(srv, store), cwd=tmp_path, env=_env(tmp_path), capture_output=True,
        text=True, timeout=LIMIT_S,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr[-2000:]
    with RunStore.open_readonly(store) as db:
        episodes = db.episodes("r")
        assert len(episodes) == 2 and len({e.episode_key for e in episodes}) == 2
        run = db.get_run("r")
        assert run is not None and run.status == "finished"
    assert not list(tmp_path.glob("s.sqlite3.lock-*"))  # given back at the end


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """Run ``held`` of a store, locked by another process until the test ends."""
    store = tmp_path / "s.sqlite3"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store), "held", "held.random", f"build={BUILD}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path),
    )  # fmt: skip
    assert proc.stdout is not None
    ready = proc.stdout.readline()
    assert ready.strip() == "held", proc.communicate(timeout=LIMIT_S)[1][-2000:]
    yield store, proc
    proc.communicate("", timeout=LIMIT_S)


def test_the_store_refuses_a_second_writer_and_a_delete(
    held: tuple[Path, subprocess.Popen[str]],
) -> None:
    store, proc = held
    with RunStore(store) as db:
        with pytest.raises(RunLockedError, match=f"pid {proc.pid} on "):
            db.create_run("held", env="alfworld", agent="random", config={})
        with pytest.raises(RunLockedError):
            db.delete_run("held")
        writer = db.run_writer("held")
        assert writer is not None and writer.pid == proc.pid
        run = db.get_run("held")
        assert run is not None and db.run_status("held", run.status) == "running"
        db.create_run("other", env="textcraft", agent="random", config={})  # other runs: fine
    proc.communicate("", timeout=LIMIT_S)
    with RunStore(store) as db:
        assert db.run_writer("held") is None
        run = db.get_run("held")
        assert run is not None and db.run_status("held", run.status) == "interrupted"
        db.create_run("held", env="alfworld", agent="random", config={})  # taken over
        assert db.last_writer["held"].pid == proc.pid
        assert db.run_writer("held") is not None  # this process now


def _commands(tmp_path: Path, store: Path) -> list[list[str]]:
    s = ["--store", str(store)]
    nobody = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    return [
        ["run", "textcraft", "--agent", "random", "-n", "1", "--run-id", "held", *s],
        ["runs", "rm", "held", "--yes", *s],
        ["team", "run", "crafter-party", "--simulate", "-n", "1", "--run-id", "held", *s],
        ["automanual", "build", "alfworld", *nobody, "--per-type", "1", "--run-id", "held",
         "--cache", "off", *s],
        ["automanual", "rules", "build", "--restore", "0", *s],
        ["reproduce", "run", "agentkit-table1-crafter", "--rows", "random", "--simulate",
         "-n", "1", "--run-id", "held", *s],
    ]  # fmt: skip


@pytest.mark.parametrize(
    "index", range(6), ids=["run", "runs-rm", "team", "build", "rules", "reproduce"]
)
def test_every_command_that_writes_a_run_is_refused_on_a_held_one(
    held: tuple[Path, subprocess.Popen[str]], tmp_path: Path, index: int
) -> None:
    store, proc = held
    args = _commands(tmp_path, store)[index]
    if args[:2] == ["automanual", "build"]:
        pytest.importorskip("alfworld", reason="needs the alfworld package (the test extra)")
    if args[:2] in (["team", "run"], ["reproduce", "run"]):
        pytest.importorskip("crafter", reason="needs the crafter package (the crafter extra)")
    done = subprocess.run(
        _lorekit(*args), cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True,
        timeout=LIMIT_S,
    )  # fmt: skip
    line = _one_error_line(done, progress=args[0] == "reproduce")  # it names each row first
    assert done.returncode == 2, line
    assert f"pid {proc.pid} on " in line, line


def test_laws_extract_holds_its_output(tmp_path: Path) -> None:
    out = tmp_path / "exp.json"
    code = (
        "import sys\nfrom lorekit.cli.stores import hold_output\n"
        "with hold_output(sys.argv[1], '-o'):\n"
        "    print('held', flush=True)\n    sys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True, env=_env(tmp_path),
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        records = tmp_path / "r.jsonl"
        records.write_text('{"a": 1}\n')
        done = subprocess.run(
            _lorekit("laws", "extract", str(records), "-o", str(out), "--simulate", "careful"),
            cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=LIMIT_S,
        )  # fmt: skip
        line = _one_error_line(done)
        assert done.returncode == 2 and f"pid {proc.pid} on " in line, line
    finally:
        proc.communicate("", timeout=LIMIT_S)
