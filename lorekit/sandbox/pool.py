"""Warm pool of single-use sandbox workers.

Starting Python and importing the allowlisted modules takes tens of
milliseconds; a run itself takes about one. The pool keeps ``size`` workers
started and waiting, so a run only pays for sending the job.

Workers are **never reused**. Once untrusted code has run in an interpreter,
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
from pathlib import Path
from types import TracebackType
from typing import Any

from lorekit.sandbox.errors import ProtocolViolation, SandboxUnavailable
from lorekit.sandbox.policy import DEFAULT_POLICY, Policy
from lorekit.sandbox.protocol import Connection, DeadlineExceeded

CHILD_SCRIPT = Path(__file__).with_name("child.py")
STDERR_TAIL_CHARS = 2_000


class Worker:
    """One started child process, its pipes and its private directory."""

    def __init__(self, proc: subprocess.Popen[bytes], root: Path, conn: Connection) -> None:
        self.proc = proc
        self.root = root
        self.workdir = root / "work"
        self.conn = conn
        self.info: dict[str, Any] = {}
        self.killed_by_parent = False

    def alive(self) -> bool:
        return self.proc.poll() is None

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


def start_worker(policy: Policy, max_message_bytes: int, timeout_s: float) -> Worker:
    """Start one worker and wait until it says it is ready."""
    root = Path(tempfile.mkdtemp(prefix="lorekit-sandbox-"))
    workdir = root / "work"
    workdir.mkdir()
    config = {
        "preload": list(policy.preload_modules),
        "netns": policy.network_namespace,
        "max_message_bytes": max_message_bytes,
    }
    try:
        with open(root / "stderr.log", "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", str(CHILD_SCRIPT), json.dumps(config)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=workdir,
                env={},
                start_new_session=True,
                close_fds=True,
            )
    except OSError as exc:
        shutil.rmtree(root, ignore_errors=True)
        raise SandboxUnavailable(f"could not start a sandbox worker: {exc}") from exc
    assert proc.stdin is not None and proc.stdout is not None
    conn = Connection(proc.stdout.fileno(), proc.stdin.fileno(), max_message_bytes)
    worker = Worker(proc, root, conn)
    try:
        hello = conn.recv(time.monotonic() + timeout_s)
    except (DeadlineExceeded, ProtocolViolation) as exc:
        worker.kill()
        raise SandboxUnavailable(f"sandbox worker did not start: {exc!r}") from exc
    if hello is None or hello.get("op") != "ready":
        tail = worker.stderr_tail()
        worker.kill()
        raise SandboxUnavailable(f"sandbox worker failed to start: {tail or hello!r}")
    worker.info = hello
    return worker


class WorkerPool:
    """Keeps ``size`` ready workers for one policy; hands each out once."""

    def __init__(
        self,
        size: int = 2,
        *,
        policy: Policy = DEFAULT_POLICY,
        max_message_bytes: int = 1 << 20,
        start_timeout_s: float = 20.0,
    ) -> None:
        if size < 0:
            raise ValueError("pool size must be >= 0")
        self.size = size
        self.policy = policy
        self.max_message_bytes = max_message_bytes
        self.start_timeout_s = start_timeout_s
        self._idle: deque[Worker] = deque()
        self._starting = 0
        self._closed = False
        self._cond = threading.Condition()
        self._refill()

    def _spawn(self) -> Worker:
        return start_worker(self.policy, self.max_message_bytes, self.start_timeout_s)

    def _refill(self) -> None:
        with self._cond:
            missing = self.size - len(self._idle) - self._starting
            if self._closed or missing <= 0:
                return
            self._starting += missing
        for _ in range(missing):
            threading.Thread(target=self._start_one, daemon=True).start()

    def _start_one(self) -> None:
        worker: Worker | None = None
        try:
            worker = self._spawn()
        except SandboxUnavailable:
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
        """A ready worker: a warm one if there is one, else a freshly started one."""
        if self._closed:
            raise SandboxUnavailable("the sandbox pool is closed")
        deadline = time.monotonic() + self.start_timeout_s
        worker: Worker | None = None
        with self._cond:
            while worker is None:
                while self._idle and worker is None:
                    candidate = self._idle.popleft()
                    if candidate.alive():
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

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


_pools: dict[tuple[tuple[str, ...], bool], WorkerPool] = {}
_pools_lock = threading.Lock()


def shared_pool(policy: Policy = DEFAULT_POLICY) -> WorkerPool:
    """The process-wide pool whose workers preload what ``policy`` needs."""
    key = (policy.preload_modules, policy.network_namespace)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = WorkerPool(policy=policy)
        return pool


@atexit.register
def _close_shared_pools() -> None:
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()
