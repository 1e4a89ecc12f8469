"""One sandbox worker process: how it is started, checked, read and killed.

``start_worker`` launches ``child.py`` under the OS layer the plan allows
(``confine.build_launch``), waits for its ``ready`` message and checks the
isolation facts it reports (``isolation.verify``). A :class:`Worker` holds the
process, its protocol pipes and its alarm pipe (violations the guard saw,
out of band), and knows how to read its exit status whatever the launch.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lorekit.sandbox import confine, exits, isolation
from lorekit.sandbox.cgroup import KERNEL_SLACK_BYTES, MemoryCgroup, WorkerCgroup
from lorekit.sandbox.errors import ProtocolViolation, SandboxUnavailable
from lorekit.sandbox.isolation import Plan
from lorekit.sandbox.policy import Policy
from lorekit.sandbox.protocol import Connection, DeadlineExceeded
from lorekit.sandbox.seccomp import signal_filter_spec

CHILD_SCRIPT = Path(__file__).with_name("child.py")
STDERR_TAIL_CHARS = 2_000
ALARM_BYTES = 1 << 16
WORKDIR_BYTES = 64 << 20


class Worker:
    """One started child process, its pipes and its private directory."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        root: Path,
        conn: Connection,
        *,
        confined: bool,
        alarm_fd: int | None = None,
    ) -> None:
        self.proc = proc
        self.root = root
        self.workdir = root / "work"
        self.conn = conn
        self.confined = confined
        self.alarm_fd = alarm_fd
        self.info: dict[str, Any] = {}
        self.layers: tuple[isolation.Layer, ...] = ()
        self.killed_by_parent = False
        self.cgroup: WorkerCgroup | None = None
        self.cpu_used: float | None = None  # of the whole tree, once reaped
        self._oom_before: int | None = None
        self.signals_fd: int | None = None

    def signals_received(self) -> set[int]:
        """Signal numbers the worker's C-level handler saw (``set_wakeup_fd``).

        Written the moment a signal arrives, even while the code is stuck in
        C and its Python handler never runs: SIGXCPU here is RLIMIT_CPU's
        soft limit, the witness that a later SIGKILL was its hard limit.
        """
        if self.signals_fd is None:
            return set()
        data = b""
        with contextlib.suppress(BlockingIOError, OSError):
            while len(data) < ALARM_BYTES and (chunk := os.read(self.signals_fd, ALARM_BYTES)):
                data += chunk
        return set(data)

    def prepare(self, memory_mb: int) -> None:
        """Just before its job: the memory cgroup's limit and the OOM baseline."""
        self._oom_before = exits.system_oom_kills()
        if self.cgroup is not None:
            with contextlib.suppress(OSError, ValueError):
                self.cgroup.limit((memory_mb << 20) + WORKDIR_BYTES + KERNEL_SLACK_BYTES)

    def oom_killed(self) -> bool:
        """Whether an OOM kill was witnessed since :meth:`prepare`."""
        if self.cgroup is not None and self.cgroup.oom_killed():
            return True
        after = exits.system_oom_kills()
        return self._oom_before is not None and after is not None and after > self._oom_before

    def reap(self, timeout_s: float) -> int | None:
        """Wait for the worker to end; its exit status, and its tree's CPU time.

        ``wait4`` rather than ``Popen.wait``: its rusage holds the CPU time of
        every process the worker's tree waited for, which is what tells
        RLIMIT_CPU's SIGKILL from any other.
        """
        deadline = time.monotonic() + timeout_s
        while self.proc.returncode is None:
            try:
                pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            except ChildProcessError:
                self.proc.poll()
                break
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_used = usage.ru_utime + usage.ru_stime
                break
            if time.monotonic() >= deadline:
                self.kill()
                break
            time.sleep(0.005)
        return self.exit_status()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def alarms(self) -> list[tuple[str, int | None, str | None, str]]:
        """The violation records the guard sent on the alarm pipe, oldest first.

        Each is ``(kind, line, where, message)``. Raises ProtocolViolation if
        the pipe holds anything the guard's alarm does not write.
        """
        if self.alarm_fd is None:
            return []
        data = b""
        with contextlib.suppress(BlockingIOError, OSError):
            while len(data) < ALARM_BYTES and (chunk := os.read(self.alarm_fd, ALARM_BYTES)):
                data += chunk
        records = []
        for raw in data.splitlines()[:16]:
            fields = raw.decode("utf-8", "replace").split("\t")
            if (
                len(fields) != 4
                or not fields[0].isidentifier()
                or not (fields[1] == "" or fields[1].isdigit())
            ):
                raise ProtocolViolation("the worker's alarm pipe carried something malformed")
            kind, line, where, message = fields
            records.append((kind, int(line) if line else None, where or None, message))
        return records

    def exit_status(self) -> int | None:
        """The worker's exit code, negative for a signal, as for a plain process.

        bubblewrap passes a signal death on as exit status 128 + signal; this
        undoes that so callers see one convention whatever the launch.
        """
        code = self.proc.returncode
        if self.confined and code is not None and 128 < code < 128 + 65:
            return -(code - 128)
        return code

    def kill(self) -> None:
        """Kill the whole process group, reap it and delete its directory."""
        if self.proc.returncode is None:
            self.killed_by_parent = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if self.alarm_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.alarm_fd)
            self.alarm_fd = None
        if self.signals_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.signals_fd)
            self.signals_fd = None
        shutil.rmtree(self.root, ignore_errors=True)
        if self.cgroup is not None:
            self.cgroup.remove()

    def stderr_tail(self) -> str:
        """The end of what the child wrote to stderr (crash diagnostics)."""
        try:
            with open(self.root / "stderr.log", "rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - STDERR_TAIL_CHARS))
                return log.read().decode(errors="replace").strip()
        except OSError:
            return ""


def _popen(
    plan: Plan,
    config: dict[str, Any],
    root: Path,
    workdir: Path,
    log: Any,
    inherited: tuple[int, ...],
    group: WorkerCgroup | None = None,
) -> tuple[subprocess.Popen[bytes], bool]:
    """Start the worker process, confined when the plan allows."""
    owned: list[int] = []  # descriptors made for this launch (the seccomp program)
    if plan.confined:
        assert plan.bwrap is not None
        script = f"{confine.SCRIPTS_DIR}/{CHILD_SCRIPT.name}"
        child = [confine.interpreter_inside(), "-I", "-S", "-B", script, json.dumps(config)]
        launch = confine.build_launch(
            child,
            workdir_bytes=WORKDIR_BYTES,
            bwrap=plan.bwrap,
            setpriv=plan.setpriv,
            program=plan.program,
        )
        argv, cwd, fds, owned = (
            launch.argv,
            root,
            (*launch.pass_fds, *inherited),
            launch.close_after_start,
        )
    else:
        workdir.mkdir()
        argv = [sys.executable, "-I", "-S", "-B", str(CHILD_SCRIPT), json.dumps(config)]
        cwd, fds = workdir, inherited
    if group is not None:
        argv = group.wrap(argv)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=cwd,
            env={},
            start_new_session=True,
            close_fds=True,
            pass_fds=fds,
        )
    finally:
        for fd in owned:
            os.close(fd)
    return proc, plan.confined


def start_worker(
    policy: Policy,
    max_message_bytes: int,
    timeout_s: float,
    *,
    plan: Plan | None = None,
    unguarded_for_tests: bool = False,
    cgroup: MemoryCgroup | None = None,
) -> Worker:
    """Start one worker, wait until it says it is ready and check its confinement."""
    plan = plan or Plan("off")
    root = Path(tempfile.mkdtemp(prefix="lorekit-sandbox-"))
    alarm_read, alarm_write = os.pipe()  # violations, out of band (guard.make_alarm)
    os.set_blocking(alarm_read, False)
    signals_read, signals_write = os.pipe()  # signals the worker received (child.py)
    os.set_blocking(signals_read, False)
    config = {
        "preload": list(policy.preload_modules),
        "netns": policy.network_namespace and not plan.confined,
        "max_message_bytes": max_message_bytes,
        "unguarded_for_tests": unguarded_for_tests,
        "alarm_fd": alarm_write,
        "signals_fd": signals_write,
        "signal_filter": signal_filter_spec() if plan.confined and plan.program else None,
    }
    group = cgroup.new_group(root.name) if cgroup is not None else None
    try:
        with open(root / "stderr.log", "wb") as log:
            proc, confined = _popen(
                plan, config, root, root / "work", log, (alarm_write, signals_write), group
            )
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        shutil.rmtree(root, ignore_errors=True)
        if group is not None:
            group.remove()
        os.close(alarm_read)
        os.close(signals_read)
        raise SandboxUnavailable(f"could not start a sandbox worker: {exc}") from exc
    finally:
        os.close(alarm_write)
        os.close(signals_write)
    assert proc.stdin is not None and proc.stdout is not None
    conn = Connection(proc.stdout.fileno(), proc.stdin.fileno(), max_message_bytes)
    worker = Worker(proc, root, conn, confined=confined, alarm_fd=alarm_read)
    worker.cgroup = group
    worker.signals_fd = signals_read
    try:
        hello = conn.recv(time.monotonic() + timeout_s)
    except (DeadlineExceeded, ProtocolViolation) as exc:
        tail = worker.stderr_tail()
        worker.kill()
        raise SandboxUnavailable(f"sandbox worker did not start: {tail or repr(exc)}") from exc
    if hello is None or hello.get("op") != "ready":
        tail = worker.stderr_tail()
        worker.kill()
        raise SandboxUnavailable(f"sandbox worker failed to start: {tail or hello!r}")
    worker.info = hello
    if confined:
        facts = hello.get("facts")
        worker.layers = tuple(
            isolation.verify(facts if isinstance(facts, dict) else {}, plan.program is not None)
        )
        missing = [layer.name for layer in worker.layers if not layer.active]
        if missing and plan.mode == "required":
            worker.kill()
            raise SandboxUnavailable(
                f"a sandbox worker started without {', '.join(missing)}; isolation is required"
            )
    return worker
