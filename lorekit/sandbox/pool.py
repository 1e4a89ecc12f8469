"""Warm pool of single-use sandbox workers.

Starting Python and importing the allowlisted modules takes tens of
milliseconds; a run itself takes about one. The pool keeps ``size`` workers
started and waiting, so a run only pays for sending the job.

Workers start under the OS boundary of :mod:`lorekit.sandbox.confine`
(bubblewrap namespaces, an unprivileged uid, seccomp) unless isolation is
``off``; each worker's own report of its confinement is checked before it is
handed out. Workers are **never reused**. Once untrusted code has run in an interpreter,
anything in it may have been changed (module views, classes, the builtins of
later code, pending timers, objects with finalisers), and proving otherwise is
harder than starting a fresh one. So each run takes a worker, the worker is
killed afterwards, and a background thread starts its replacement.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from lorekit.sandbox import confine
from lorekit.sandbox.errors import ProtocolViolation, SandboxUnavailable
from lorekit.sandbox.policy import DEFAULT_POLICY, Policy
from lorekit.sandbox.protocol import Connection, DeadlineExceeded

CHILD_SCRIPT = Path(__file__).with_name("child.py")
STDERR_TAIL_CHARS = 2_000
ALARM_BYTES = 1 << 16
WORKDIR_BYTES = 64 << 20


@dataclass(frozen=True)
class Plan:
    """How this pool starts workers: with which tools, under which layers."""

    mode: confine.IsolationMode
    bwrap: str | None = None
    setpriv: str | None = None
    program: bytes | None = None
    gaps: tuple[confine.Layer, ...] = ()

    @property
    def confined(self) -> bool:
        return self.bwrap is not None


def make_plan(mode: confine.IsolationMode) -> Plan:
    """Find the tools for ``mode``; ``required`` refuses any missing layer."""
    if mode == "off":
        return Plan(mode)
    bwrap, setpriv = confine.find_tools()
    program = confine.seccomp_program()
    gaps = tuple(confine.static_layers(bwrap, setpriv, program))
    if mode == "required" and gaps:
        report = confine.IsolationReport(gaps)
        raise SandboxUnavailable(f"{report.summary()}; isolation is required")
    if bwrap is None or (os.geteuid() == 0 and setpriv is None):
        bwrap = None
    return Plan(mode, bwrap, setpriv, program, gaps)


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
        self.layers: tuple[confine.Layer, ...] = ()
        self.killed_by_parent = False

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
        shutil.rmtree(self.root, ignore_errors=True)

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
    plan: Plan, config: dict[str, Any], root: Path, workdir: Path, log: Any, alarm: int
) -> tuple[subprocess.Popen[bytes], bool]:
    """Start the worker process, confined when the plan allows."""
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
        try:
            proc = subprocess.Popen(
                launch.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=root,
                env={},
                start_new_session=True,
                close_fds=True,
                pass_fds=(*launch.pass_fds, alarm),
            )
        finally:
            for fd in launch.close_after_start:
                os.close(fd)
        return proc, True
    workdir.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-B", str(CHILD_SCRIPT), json.dumps(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        cwd=workdir,
        env={},
        start_new_session=True,
        close_fds=True,
        pass_fds=(alarm,),
    )
    return proc, False


def start_worker(
    policy: Policy,
    max_message_bytes: int,
    timeout_s: float,
    *,
    plan: Plan | None = None,
    unguarded_for_tests: bool = False,
) -> Worker:
    """Start one worker, wait until it says it is ready and check its confinement."""
    plan = plan or Plan("off")
    root = Path(tempfile.mkdtemp(prefix="lorekit-sandbox-"))
    alarm_read, alarm_write = os.pipe()  # violations, out of band (guard.make_alarm)
    os.set_blocking(alarm_read, False)
    config = {
        "preload": list(policy.preload_modules),
        "netns": policy.network_namespace and not plan.confined,
        "max_message_bytes": max_message_bytes,
        "unguarded_for_tests": unguarded_for_tests,
        "alarm_fd": alarm_write,
    }
    try:
        with open(root / "stderr.log", "wb") as log:
            proc, confined = _popen(plan, config, root, root / "work", log, alarm_write)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        shutil.rmtree(root, ignore_errors=True)
        os.close(alarm_read)
        raise SandboxUnavailable(f"could not start a sandbox worker: {exc}") from exc
    finally:
        os.close(alarm_write)
    assert proc.stdin is not None and proc.stdout is not None
    conn = Connection(proc.stdout.fileno(), proc.stdin.fileno(), max_message_bytes)
    worker = Worker(proc, root, conn, confined=confined, alarm_fd=alarm_read)
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
            confine.verify(facts if isinstance(facts, dict) else {}, plan.program is not None)
        )
        missing = [layer.name for layer in worker.layers if not layer.active]
        if missing and plan.mode == "required":
            worker.kill()
            raise SandboxUnavailable(
                f"a sandbox worker started without {', '.join(missing)}; isolation is required"
            )
    return worker


class WorkerPool:
    """Keeps ``size`` ready workers for one policy; hands each out once.

    ``isolation`` is ``auto`` (the OS layer where the machine allows it, one
    warning naming what is missing otherwise), ``required`` (no worker without
    every layer: :class:`SandboxUnavailable` instead) or ``off`` (the
    in-process guard only; for comparisons). The default comes from
    ``$LOREKIT_SANDBOX_ISOLATION``, else ``auto``.

    Workers are started from the pool's own long-lived threads: bubblewrap
    ties a worker's life to the thread that started it, so a short-lived
    caller thread must never be that thread.
    """

    def __init__(
        self,
        size: int = 2,
        *,
        policy: Policy = DEFAULT_POLICY,
        max_message_bytes: int = 1 << 20,
        start_timeout_s: float = 20.0,
        isolation: str | None = None,
        unguarded_for_tests: bool = False,
    ) -> None:
        if size < 0:
            raise ValueError("pool size must be >= 0")
        self.size = size
        self.policy = policy
        self.max_message_bytes = max_message_bytes
        self.start_timeout_s = start_timeout_s
        self.unguarded_for_tests = unguarded_for_tests
        self.plan = make_plan(confine.isolation_mode(isolation))
        self._fallback_reason: confine.Layer | None = None
        self._idle: deque[Worker] = deque()
        self._starting = 0
        self._closed = False
        self._cond = threading.Condition()
        self._spawner = ThreadPoolExecutor(
            max_workers=max(1, size), thread_name_prefix="lorekit-sandbox-spawn"
        )
        if self.plan.gaps:
            confine.warn_once(confine.IsolationReport(self.plan.gaps))
        self._refill()

    @property
    def report(self) -> confine.IsolationReport:
        """The layers this pool's workers run under (checked on a started worker)."""
        layers = list(self.plan.gaps)
        if self._fallback_reason is not None:
            layers.append(self._fallback_reason)
        if self.plan.mode == "off":
            layers.append(confine.Layer("OS isolation", False, "switched off (isolation=off)"))
        return confine.IsolationReport(
            tuple(layers), self.plan.bwrap, self.plan.program is not None
        )

    def _spawn_here(self) -> Worker:
        """Start one worker on the calling (spawner) thread."""
        try:
            worker = start_worker(
                self.policy,
                self.max_message_bytes,
                self.start_timeout_s,
                plan=self.plan,
                unguarded_for_tests=self.unguarded_for_tests,
            )
        except SandboxUnavailable as exc:
            if not (self.plan.confined and self.plan.mode == "auto"):
                raise
            # bwrap is there but the kernel refused it: say so once, go on without.
            detail = str(exc)
            with self._cond:
                if self.plan.confined:
                    self._fallback_reason = confine.Layer(
                        "bubblewrap",
                        False,
                        f"failed to start: {detail[-300:]}",
                        confine.bwrap_failure_fix(detail),
                    )
                    self.plan = Plan("auto", gaps=self.plan.gaps)
            confine.warn_once(self.report)
            return self._spawn_here()
        missing = [layer for layer in worker.layers if not layer.active]
        if missing:
            confine.warn_once(confine.IsolationReport(tuple(missing), self.plan.bwrap))
        return worker

    def _spawn(self) -> Worker:
        return self._spawner.submit(self._spawn_here).result()

    def _refill(self) -> None:
        with self._cond:
            missing = self.size - len(self._idle) - self._starting
            if self._closed or missing <= 0:
                return
            self._starting += missing
        for _ in range(missing):
            self._spawner.submit(self._start_one)

    def _start_one(self) -> None:
        worker: Worker | None = None
        try:
            worker = self._spawn_here()
        except Exception:  # whatever went wrong, the count below must be restored
            worker = None
        with self._cond:
            if worker is not None and not self._closed:
                self._idle.append(worker)
                worker = None
        if worker is not None:
            worker.kill()  # the pool closed meanwhile
        with self._cond:
            self._starting -= 1
            self._cond.notify_all()

    def acquire(self) -> Worker:
        """A ready worker: a warm one if there is one, else a freshly started one.

        A warm worker that died, or that has anything waiting in its pipe
        before it was given a job (nobody may speak for it yet), is discarded.
        """
        if self._closed:
            raise SandboxUnavailable("the sandbox pool is closed")
        deadline = time.monotonic() + self.start_timeout_s
        worker: Worker | None = None
        with self._cond:
            while worker is None:
                while self._idle and worker is None:
                    candidate = self._idle.popleft()
                    if candidate.alive() and not candidate.conn.pending():
                        worker = candidate
                    else:
                        candidate.kill()
                if worker is not None or self._starting == 0:
                    break
                if not self._cond.wait(timeout=max(0.0, deadline - time.monotonic())):
                    break
        self._refill()
        return worker if worker is not None else self._spawn()

    def wait_ready(self, timeout_s: float = 10.0) -> bool:
        """Block until ``size`` workers are warm (benchmarks, latency-critical loops)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while len(self._idle) < self.size and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0 or (self._starting == 0 and len(self._idle) < self.size):
                    break
                self._cond.wait(timeout=left)
            return len(self._idle) >= self.size

    def close(self) -> None:
        """Kill every idle worker; later ``acquire`` calls fail."""
        with self._cond:
            self._closed = True
            idle, self._idle = list(self._idle), deque()
            deadline = time.monotonic() + self.start_timeout_s
            while self._starting > 0 and time.monotonic() < deadline:
                self._cond.wait(timeout=0.1)  # workers still starting kill themselves
        for worker in idle:
            worker.kill()
        self._spawner.shutdown(wait=False)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


_pools: dict[tuple[tuple[str, ...], bool, str], WorkerPool] = {}
_pools_lock = threading.Lock()


def shared_pool(policy: Policy = DEFAULT_POLICY) -> WorkerPool:
    """The process-wide pool whose workers preload what ``policy`` needs."""
    key = (policy.preload_modules, policy.network_namespace, confine.isolation_mode())
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = WorkerPool(policy=policy)
        return pool


def probe_isolation(isolation: str | None = None) -> confine.IsolationReport:
    """Start one worker and report the layers it really runs under (``lorekit doctor``)."""
    with warnings_silenced(), WorkerPool(size=0, isolation=isolation) as pool:
        try:
            worker = pool.acquire()
        except SandboxUnavailable as exc:
            failed = confine.Layer("sandbox worker", False, str(exc)[:300])
            return confine.IsolationReport((*pool.report.layers, failed), pool.plan.bwrap)
        try:
            base = pool.report
            return confine.IsolationReport((*base.layers, *worker.layers), base.bwrap, base.seccomp)
        finally:
            worker.kill()


@contextlib.contextmanager
def warnings_silenced() -> Any:
    """The probe reports gaps itself; no warning on top of the report."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", confine.IsolationWarning)
        yield


@atexit.register
def _close_shared_pools() -> None:
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()
