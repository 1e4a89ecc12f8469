"""Warm pool of single-use sandbox workers.

Starting Python and importing the allowlisted modules takes tens of
milliseconds; a run itself takes about one. The pool keeps ``size`` workers
started and waiting, so a run only pays for sending the job.

Workers start under the OS boundary of :mod:`lorekit.sandbox.confine`
(bubblewrap namespaces, an unprivileged uid, seccomp); each worker's own
report of its confinement is checked before it is handed out. Where that
boundary is missing the pool fails closed (:class:`NoOSSandbox`) unless it
was made with ``unsafe_no_os_sandbox=True`` (see :mod:`.isolation`).

Workers are **never reused**. Once untrusted code has run in an interpreter,
anything in it may have been changed (module views, classes, the builtins of
later code, pending timers, objects with finalisers), and proving otherwise is
harder than starting a fresh one. So each run takes a worker, the worker is
killed afterwards, and a background thread starts its replacement.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any

from lorekit.sandbox import isolation as iso
from lorekit.sandbox.cgroup import memory_cgroup
from lorekit.sandbox.errors import NoOSSandbox, SandboxUnavailable
from lorekit.sandbox.isolation import Plan, make_plan
from lorekit.sandbox.policy import DEFAULT_POLICY, Policy
from lorekit.sandbox.worker import Worker, start_worker


class WorkerPool:
    """Keeps ``size`` ready workers for one policy; hands each out once.

    ``isolation`` is ``auto`` (every layer the machine allows: one warning
    names a missing secondary layer such as seccomp, and without the OS layer
    itself, bubblewrap, no worker starts: :class:`NoOSSandbox`), ``required``
    (no worker without every layer: :class:`SandboxUnavailable`) or ``off``
    (the in-process guard only; for comparisons). The default comes from
    ``$LOREKIT_SANDBOX_ISOLATION``, else ``auto``.

    ``unsafe_no_os_sandbox=True`` (default: ``$LOREKIT_UNSAFE_NO_OS_SANDBOX``)
    is the only way to get workers outside the OS layer (``off``, or ``auto``
    where bubblewrap is missing or cannot start); the pool then warns loudly
    (:class:`~lorekit.sandbox.isolation.UnsafeSandboxWarning`).

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
        unsafe_no_os_sandbox: bool | None = None,
    ) -> None:
        if size < 0:
            raise ValueError("pool size must be >= 0")
        self.size = size
        self.policy = policy
        self.max_message_bytes = max_message_bytes
        self.start_timeout_s = start_timeout_s
        self.unguarded_for_tests = unguarded_for_tests
        self.unsafe_no_os_sandbox = iso.unsafe_allowed(unsafe_no_os_sandbox)
        self.plan = make_plan(iso.isolation_mode(isolation))
        if not self.plan.confined:
            outside = [g for g in self.plan.gaps if g.name in ("bubblewrap", "setpriv")]
            if self.plan.mode == "off":
                outside = [iso.Layer("OS isolation", False, "switched off (isolation=off)")]
            if not self.unsafe_no_os_sandbox:
                raise iso.refusal(outside)
            iso.warn_unsafe(outside)
        elif self.plan.gaps:
            iso.warn_once(iso.IsolationReport(self.plan.gaps))
        self.cgroup = memory_cgroup()  # used where one is delegated (cgroup.py)
        self._fallback_reason: iso.Layer | None = None
        self._idle: deque[Worker] = deque()
        self._starting = 0
        self._closed = False
        self._cond = threading.Condition()
        self._spawner = ThreadPoolExecutor(
            max_workers=max(1, size), thread_name_prefix="lorekit-sandbox-spawn"
        )
        self._refill()

    @property
    def report(self) -> iso.IsolationReport:
        """The layers this pool's workers run under (checked on a started worker)."""
        layers = list(self.plan.gaps)
        if self._fallback_reason is not None:
            layers.append(self._fallback_reason)
        if self.plan.mode == "off":
            layers.append(iso.Layer("OS isolation", False, "switched off (isolation=off)"))
        return iso.IsolationReport(tuple(layers), self.plan.bwrap, self.plan.program is not None)

    def _spawn_here(self) -> Worker:
        """Start one worker on the calling (spawner) thread."""
        try:
            worker = start_worker(
                self.policy,
                self.max_message_bytes,
                self.start_timeout_s,
                plan=self.plan,
                unguarded_for_tests=self.unguarded_for_tests,
                cgroup=self.cgroup,
            )
        except NoOSSandbox:
            raise
        except SandboxUnavailable as exc:
            if not (self.plan.confined and self.plan.mode == "auto"):
                raise
            # bwrap is there but the kernel refused it: fail closed, unless asked not to.
            detail = str(exc)
            failed = iso.Layer(
                "bubblewrap",
                False,
                f"failed to start: {' '.join(detail[-300:].split())}",
                iso.bwrap_failure_fix(detail),
            )
            if not self.unsafe_no_os_sandbox:
                raise iso.refusal([failed]) from None
            with self._cond:
                if self.plan.confined:
                    self._fallback_reason = failed
                    self.plan = Plan("auto", gaps=self.plan.gaps)
            iso.warn_unsafe([failed])
            return self._spawn_here()
        missing = [layer for layer in worker.layers if not layer.active]
        outside = iso.outside_os_layer(missing)
        if outside and not self.unsafe_no_os_sandbox:
            worker.kill()
            raise iso.refusal(outside)
        if missing:
            iso.warn_once(iso.IsolationReport(tuple(missing), self.plan.bwrap))
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


_pools: dict[tuple[tuple[str, ...], bool, str, bool], WorkerPool] = {}
_pools_lock = threading.Lock()


def shared_pool(policy: Policy = DEFAULT_POLICY) -> WorkerPool:
    """The process-wide pool whose workers preload what ``policy`` needs.

    Keyed by the isolation settings too (``$LOREKIT_SANDBOX_ISOLATION``,
    ``$LOREKIT_UNSAFE_NO_OS_SANDBOX``): a pool made while running outside the
    OS layer was allowed is never handed to a caller after that ended.
    """
    unsafe = iso.unsafe_allowed()
    key = (policy.preload_modules, policy.network_namespace, iso.isolation_mode(), unsafe)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = WorkerPool(policy=policy, unsafe_no_os_sandbox=unsafe)
        return pool


def check_os_layer(
    unsafe_no_os_sandbox: bool | None = None, *, isolation: str | None = None
) -> iso.IsolationReport:
    """Before a run that will execute model-written code: is the OS layer there?

    Starts one worker (as :func:`shared_pool`'s would start, nothing runs in
    it) and returns the layers it ran under. Raises :class:`NoOSSandbox`, one
    line saying how to get the OS layer and how to override, where workers
    would run outside it and ``unsafe_no_os_sandbox`` (default:
    ``$LOREKIT_UNSAFE_NO_OS_SANDBOX``) is not set; commands call it before
    they record anything. With it set, it warns (:class:`UnsafeSandboxWarning`)
    for every run that goes ahead outside the OS layer.
    """
    unsafe = iso.unsafe_allowed(unsafe_no_os_sandbox)
    with (
        warnings_silenced(),
        WorkerPool(size=0, isolation=isolation, unsafe_no_os_sandbox=unsafe) as pool,
    ):
        worker = pool.acquire()
        try:
            base = pool.report
            report = iso.IsolationReport((*base.layers, *worker.layers), base.bwrap, base.seccomp)
        finally:
            worker.kill()
    outside = [
        layer
        for layer in report.missing()
        if layer.name in iso.CORE_LAYERS or layer.name in ("bubblewrap", "setpriv", "OS isolation")
    ]
    if outside or not report.confined:
        iso.warn_unsafe(outside)
    return report


def probe_isolation(mode: str | None = None) -> iso.IsolationReport:
    """Start one worker and report the layers it really runs under (``lorekit doctor``).

    The probe runs no code, so it may start outside the OS layer to say what
    is missing.
    """
    with warnings_silenced(), WorkerPool(size=0, isolation=mode, unsafe_no_os_sandbox=True) as pool:
        try:
            worker = pool.acquire()
        except SandboxUnavailable as exc:
            failed = iso.Layer("sandbox worker", False, str(exc)[:300])
            return iso.IsolationReport((*pool.report.layers, failed), pool.plan.bwrap)
        try:
            base = pool.report
            return iso.IsolationReport((*base.layers, *worker.layers), base.bwrap, base.seccomp)
        finally:
            worker.kill()


def memory_cgroup_summary() -> str:
    """Whether workers get a memory cgroup here, and why (not): ``lorekit doctor``."""
    return memory_cgroup().summary()


@contextlib.contextmanager
def warnings_silenced() -> Any:
    """The probe reports gaps itself; no warning on top of the report."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", iso.IsolationWarning)
        yield


@atexit.register
def _close_shared_pools() -> None:
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()
