"""One namespace across several runs: a sandbox worker leased for one agent episode.

AutoManual's planner answers several turns per episode, and its code expects
what an earlier turn set (``target = 'drawer_1'``, a helper it defined) to be
there in the next, as in the authors' code, which keeps one namespace per
episode. :func:`~lorekit.sandbox.runner.run_code` cannot give that: every run
takes a fresh worker and kills it. A :class:`SandboxSession` leases one worker
from the pool for the whole episode and sends it each turn's code as a new
job; the worker runs it in the same module namespace (``child.py``).

What stays as in :func:`run_code`: the OS confinement (the worker is an
ordinary pool worker), the in-process guard (each job is checked, compiled
and run under a fresh set of views and builtins), each run's wall, CPU and
call limits, and the alarm pipe as a second witness. Memory and open-file
rlimits are the first run's for the whole session (they only ever go down);
the CPU rlimit is sized for ``runs`` runs, the per-run timers enforce each
run's share. What ends the worker: any violation of the guard, a time or
memory limit, a crash or protocol breach, and :meth:`close`. The session
then starts over on a fresh worker at its next run, with an empty namespace:
:attr:`fresh` tells the caller to send its definitions again (``preload``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from lorekit.sandbox.errors import SandboxError
from lorekit.sandbox.policy import DEFAULT_LIMITS, DEFAULT_POLICY, Limits, Policy
from lorekit.sandbox.pool import WorkerPool, shared_pool
from lorekit.sandbox.result import SandboxResult
from lorekit.sandbox.runner import make_job, run_on
from lorekit.sandbox.worker import Worker

KEEPS_WORKER = frozenset({"CodeError", "AssertionFailed"})
"""Error kinds after which the worker keeps its namespace: the code raised an
ordinary exception (a failed API call included) and the child reported it."""


class SandboxSession:
    """Runs code after code in one worker's namespace (see the module docstring).

    ``runs`` bounds how many runs one worker serves (it sizes the CPU rlimit);
    past it the session moves to a fresh worker. Not thread-safe across
    concurrent runs: one run at a time, as one episode's turns are.
    """

    def __init__(
        self,
        *,
        pool: WorkerPool | None = None,
        policy: Policy | None = None,
        limits: Limits | None = None,
        runs: int = 8,
    ) -> None:
        if runs < 1:
            raise ValueError("a session needs runs >= 1")
        self.policy = policy or DEFAULT_POLICY
        self.pool = pool or shared_pool(self.policy)
        self.limits = limits or DEFAULT_LIMITS
        self.runs = runs
        self._worker: Worker | None = None
        self._served = 0
        self._lock = threading.Lock()
        self.restarts = 0
        """How often a worker was lost mid-session (its namespace with it)."""

    @property
    def fresh(self) -> bool:
        """Whether the next run starts on an empty namespace (send definitions again)."""
        return self._worker is None

    def run(
        self,
        code: str,
        api: object | None = None,
        *,
        preload: Sequence[str] = (),
        api_methods: Iterable[str] | None = None,
        api_name: str = "api",
        limits: Limits | None = None,
        api_state: Callable[[], Mapping[str, Any]] | None = None,
    ) -> SandboxResult:
        """Run ``code`` in the session's namespace; never raises for what the code does.

        The arguments are :func:`~lorekit.sandbox.runner.run_code`'s.
        """
        limits = limits or self.limits
        with self._lock:
            job, gate = make_job(
                code, api, preload, limits, self.policy, api_methods, api_name, api_state
            )
            if isinstance(job, SandboxResult):
                return job
            job["session"] = not self.pool.unguarded_for_tests
            job["unguarded"] = self.pool.unguarded_for_tests
            job["limits"]["session_runs"] = self.runs
            if self._worker is None:
                self._worker = self.pool.acquire()
                self._served = 0
            worker = self._worker
            result = run_on(worker, job, gate, limits)
            self._served += 1
            if not self._keeps(worker, result.error):
                self.restarts += 1
                self._drop()
            elif self._served >= self.runs or not job["session"]:
                self._drop()
            return result

    async def run_async(self, code: str, api: object | None = None, **kwargs: Any) -> SandboxResult:
        """:meth:`run` in a thread, so an agent's event loop keeps running."""
        return await asyncio.to_thread(self.run, code, api, **kwargs)

    @staticmethod
    def _keeps(worker: Worker, error: SandboxError | None) -> bool:
        if not worker.alive():
            return False
        return error is None or type(error).kind in KEEPS_WORKER

    def _drop(self) -> None:
        if self._worker is not None:
            self._worker.kill()
        self._worker = None

    def close(self) -> None:
        """Kill the worker (the namespace goes with it); a later run starts afresh."""
        with self._lock:
            self._drop()

    def __enter__(self) -> SandboxSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
