"""Fail closed: without the OS layer, model-written code does not run unless asked by name.

bubblewrap is made unavailable the way the sandbox finds it: a ``PATH``
without ``bwrap`` (and ``setpriv``), or a ``bwrap`` on it that cannot start.
Then a pool, ``run_code``, ``lorekit run --agent automanual`` and ``lorekit
automanual build`` refuse with one line naming ``apt-get install
bubblewrap`` and ``--unsafe-no-os-sandbox``, before any code or model runs;
with the option (``unsafe_no_os_sandbox=True`` in Python) the code runs
behind the in-process guard with a loud warning.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.agents.automanual.testing.planner import planner_model
from lorekit.eval.store import RunStore
from lorekit.llm import Message, Roles, ScriptedLLM
from lorekit.sandbox import pool as sandbox_pool
from lorekit.sandbox import (
    Limits,
    NoOSSandbox,
    UnsafeSandboxWarning,
    WorkerPool,
    check_os_layer,
    isolation,
    run_code,
    shared_pool,
)

LIMITS = Limits(wall_s=3.0, cpu_s=3.0, memory_mb=128)
HAS_BWRAP = shutil.which("bwrap") is not None
#: Model flags for runs whose models are patched to scripted ones (a local URL:
#: no key is asked for, nothing is ever sent there).
SIM_MODEL = ("--model", "sim", "--base-url", "http://127.0.0.1:9/v1")


@pytest.fixture(autouse=True)
def own_shared_pools(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Shared pools of this test only: one another test started with bwrap there stays confined
    (and would be handed out here), so each test starts without any and closes its own."""
    mine: dict[object, WorkerPool] = {}
    monkeypatch.setattr(sandbox_pool, "_pools", mine)
    yield
    for pool in mine.values():
        pool.close()


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A PATH with neither bwrap nor setpriv (nor anything else)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv(isolation.UNSAFE_ENV, raising=False)
    monkeypatch.delenv(isolation.ISOLATION_ENV, raising=False)
    return empty


@pytest.fixture
def broken_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A PATH whose bwrap fails as it does where the kernel refuses user namespaces."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    (folder / "setpriv").symlink_to(shutil.which("setpriv") or "/usr/bin/setpriv")
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.delenv(isolation.UNSAFE_ENV, raising=False)
    monkeypatch.delenv(isolation.ISOLATION_ENV, raising=False)
    return folder


def _assert_refusal(message: str) -> None:
    assert "\n" not in message
    assert "not run without the sandbox's OS layer" in message
    assert "apt-get install bubblewrap" in message or "sysctl" in message
    assert "a pip install cannot bring bubblewrap" in message
    assert "--unsafe-no-os-sandbox" in message and "unsafe_no_os_sandbox=True" in message


def test_no_worker_starts_without_bwrap(no_bwrap: Path) -> None:
    for make in (
        lambda: WorkerPool(size=0),
        lambda: WorkerPool(size=0, isolation="off"),
        lambda: run_code("print(1)", limits=LIMITS),
        lambda: check_os_layer(),
    ):
        with pytest.raises(NoOSSandbox) as refused:
            make()
        _assert_refusal(refused.value.message)
    assert "bwrap is not installed" in refused.value.message


def test_the_unsafe_option_runs_the_code_behind_the_guard_with_a_warning(no_bwrap: Path) -> None:
    with pytest.warns(UnsafeSandboxWarning, match="WITHOUT the sandbox's OS layer"):
        pool = WorkerPool(size=0, unsafe_no_os_sandbox=True)
    with pool:
        assert not pool.plan.confined
        result = run_code("print(6 * 7)", pool=pool, limits=LIMITS)
        assert result.ok and result.output == "42\n", result.feedback()
        blocked = run_code("import os", pool=pool, limits=LIMITS)
        assert blocked.error_kind == "ForbiddenImport"  # the guard still stands
    with pytest.warns(UnsafeSandboxWarning, match="bwrap is not installed"):
        report = check_os_layer(unsafe_no_os_sandbox=True)  # the check before each such run
    assert not report.complete and not report.confined


def test_the_variable_is_the_same_option_for_a_whole_process(
    no_bwrap: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(isolation.UNSAFE_ENV, "1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnsafeSandboxWarning)
        pool = shared_pool()
    assert pool.unsafe_no_os_sandbox and not pool.plan.confined
    monkeypatch.setenv(isolation.UNSAFE_ENV, "0")
    with pytest.raises(NoOSSandbox):
        shared_pool()  # the unsafe pool is never handed out once the variable is off
    monkeypatch.setenv(isolation.UNSAFE_ENV, "maybe")
    with pytest.raises(ValueError, match=isolation.UNSAFE_ENV):
        WorkerPool(size=0)


def test_a_bwrap_that_cannot_start_is_refused_too(broken_bwrap: Path) -> None:
    with WorkerPool(size=0) as pool:
        assert pool.plan.confined
        with pytest.raises(NoOSSandbox) as refused:
            run_code("print(1)", pool=pool, limits=LIMITS)
    _assert_refusal(refused.value.message)
    assert "failed to start" in refused.value.message
    assert "kernel.unprivileged_userns_clone" in refused.value.message
    with (
        pytest.warns(UnsafeSandboxWarning, match="failed to start"),
        WorkerPool(size=0, unsafe_no_os_sandbox=True) as pool,
    ):
        result = run_code("print('ran')", pool=pool, limits=LIMITS)
    assert result.ok and result.output == "ran\n", result.feedback()


@pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap not installed (CI installs it)")
def test_a_worker_outside_its_namespaces_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    real = isolation.verify

    def shares_pid_namespace(facts: object, program: bool) -> list[isolation.Layer]:
        layers = real(facts, program)  # type: ignore[arg-type]
        return [
            isolation.Layer(layer.name, False, "shared") if layer.name == "pid namespace" else layer
            for layer in layers
        ]

    monkeypatch.setattr(isolation, "verify", shares_pid_namespace)
    monkeypatch.delenv(isolation.UNSAFE_ENV, raising=False)
    with WorkerPool(size=0, isolation="auto") as pool, pytest.raises(NoOSSandbox) as refused:
        pool.acquire()
    assert "pid namespace" in refused.value.message


# ---------------------------------------------------------------- end to end


class Planner:
    """The scripted planner of the simulation study, counting what it is asked."""

    def __init__(self) -> None:
        self.asked = 0
        self.answer = planner_model(repair=1.0)

    def __call__(self, messages: tuple[Message, ...]) -> str:
        self.asked += 1
        return self.answer(messages)


@pytest.fixture
def planner(monkeypatch: pytest.MonkeyPatch) -> Iterator[Planner]:
    model = Planner()
    roles = Roles({"planner": ScriptedLLM(fn=model)}, default="planner")
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: roles)
    yield model


def _automanual_run(store: Path, manual: Path, *extra: str) -> list[str]:
    manual.write_text("# Manual\n\nLook around first; take what the task names.\n")
    return [
        "run", "alfworld", "--agent", "automanual", "--agent-opt", f"manual={manual}",
        "--store", str(store), *SIM_MODEL, "--run-id", "t", "--split", "dev", "-n", "1",
        "-j", "1", "--no-progress", *extra,
    ]  # fmt: skip


def test_an_automanual_run_without_bwrap_is_refused_in_one_line(
    no_bwrap: Path, planner: Planner, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    code, _, err = run_cli(_automanual_run(store, tmp_path / "manual.md"), capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lorekit: error: "), err
    _assert_refusal(lines[0])
    assert planner.asked == 0  # no model was asked, no code ran
    if store.exists():
        with RunStore(store) as db:
            assert not db.list_runs()  # nothing recorded
    build = [
        "automanual", "build", "alfworld", *SIM_MODEL, "--store", str(store), "--per-type", "1",
        "--run-id", "b", "--no-progress",
    ]  # fmt: skip
    code, _, err = run_cli(build, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    _assert_refusal(err.strip())
    assert planner.asked == 0


def test_the_unsafe_option_lets_the_automanual_run_play(
    no_bwrap: Path, planner: Planner, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs.sqlite3"
    args = _automanual_run(store, tmp_path / "manual.md", "--unsafe-no-os-sandbox")
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert "lorekit: warning: UNSAFE (--unsafe-no-os-sandbox)" in err
    assert planner.asked > 0
    with RunStore(store) as db:
        episodes = db.episodes("t")
    assert len(episodes) == 1 and episodes[0].status != "error", episodes
    assert os.environ.get(isolation.UNSAFE_ENV) is None  # set for the command only


@pytest.mark.parametrize("command", [["run"], ["automanual", "build"], ["reproduce", "run"]])
def test_the_commands_help_says_how_to_get_the_os_layer_and_how_to_override(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli([*command, "--help"], capsys)
    text = " ".join(out.split())
    assert code == 0
    assert "--unsafe-no-os-sandbox" in text and "apt-get install bubblewrap" in text
    assert "pip install cannot bring it" in text


def test_doctor_says_model_code_is_refused_without_bwrap(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != isolation.UNSAFE_ENV}
    done = subprocess.run(
        [sys.executable, "-c", "from lorekit.cli import main; main()", "doctor"],
        env={**env, "PATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = " ".join(done.stdout.split())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refuses to run model-written code" in text
    assert "apt-get install bubblewrap" in text and "--unsafe-no-os-sandbox" in text
    assert "Traceback" not in done.stderr
