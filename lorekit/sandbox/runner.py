"""``run_code``: run untrusted Python in a worker process and report what happened.

The parent side of one run: take a warm worker, send it the job, answer its
API calls through the :class:`ApiGate`, and collect the report, all under a
hard deadline. Whatever the child does (loop, flood, crash, send garbage,
swallow signals), this function returns a :class:`SandboxResult` within
``wall_s + grace_s`` plus the time it takes to kill a process.
"""

from __future__ import annotations

import asyncio
import secrets
import signal
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from lorekit.sandbox.errors import (
    ActionBudgetExceeded,
    LimitExceeded,
    ProtocolViolation,
    SandboxCrashed,
    SandboxError,
    TimeLimitExceeded,
    error_from_kind,
)
from lorekit.sandbox.exits import exit_error
from lorekit.sandbox.policy import DEFAULT_LIMITS, DEFAULT_POLICY, Limits, Policy
from lorekit.sandbox.pool import WorkerPool, shared_pool
from lorekit.sandbox.protocol import DeadlineExceeded
from lorekit.sandbox.proxy import ApiGate, flooding
from lorekit.sandbox.result import SandboxResult
from lorekit.sandbox.worker import Worker


def run_code(
    code: str,
    api: object | None = None,
    *,
    preload: Sequence[str] = (),
    limits: Limits | None = None,
    policy: Policy | None = None,
    api_methods: Iterable[str] | None = None,
    api_name: str = "api",
    pool: WorkerPool | None = None,
    api_state: Callable[[], Mapping[str, Any]] | None = None,
) -> SandboxResult:
    """Run ``code`` in the sandbox; never raises for anything the code does.

    ``api`` stays in this process; the code sees a proxy named ``api_name``
    whose methods (``api_methods``, default: every public method) are checked
    and forwarded here. ``preload`` pieces (helper functions from earlier
    answers) run first in the same namespace and under the same rules.
    ``api_state`` reads the API's state attributes (``{"holding": "nothing"}``):
    the code sees them as plain attributes of the proxy, refreshed after every call.
    Raises ``SandboxUnavailable`` only if no worker process can be started,
    its subclass ``NoOSSandbox`` where it would start outside the OS layer
    without ``WorkerPool(unsafe_no_os_sandbox=True)`` (or the variable).
    """
    limits = limits or DEFAULT_LIMITS
    policy = policy or DEFAULT_POLICY
    job, gate = make_job(code, api, preload, limits, policy, api_methods, api_name, api_state)
    if isinstance(job, SandboxResult):
        return job
    pool = pool or shared_pool(policy)
    job["unguarded"] = pool.unguarded_for_tests
    worker = pool.acquire()
    try:
        return run_on(worker, job, gate, limits)
    finally:
        worker.kill()


def make_job(
    code: str,
    api: object | None,
    preload: Sequence[str],
    limits: Limits,
    policy: Policy,
    api_methods: Iterable[str] | None,
    api_name: str,
    api_state: Callable[[], Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any] | SandboxResult, ApiGate | None]:
    """The job message and its API gate; or, for code over the size limit, the result."""
    if not isinstance(code, str) or not all(isinstance(p, str) for p in preload):
        raise TypeError("code and preload pieces must be strings")
    if not api_name.isidentifier() or api_name.startswith("_"):
        raise ValueError(f"api_name must be a public identifier, got {api_name!r}")
    gate = None
    if api is not None:
        gate = ApiGate(api, api_methods, limits.max_api_calls, state=api_state)
    size = len(code) + sum(len(p) for p in preload)
    if size > limits.max_code_chars:
        too_long = LimitExceeded(f"the code is {size} characters (limit {limits.max_code_chars})")
        return SandboxResult("", (), too_long, 0.0, api_name), gate
    job = {
        "op": "run",
        "nonce": secrets.token_hex(16),
        "unguarded": False,
        "code": code,
        "preload": list(preload),
        "limits": limits.to_wire(),
        "policy": policy.to_wire(),
        "api": gate.describe() if gate is not None else None,
        "api_name": api_name,
        "api_state": gate.state_now() if gate is not None else None,
    }
    return job, gate


def run_on(
    worker: Worker, job: dict[str, Any], gate: ApiGate | None, limits: Limits
) -> SandboxResult:
    """Run ``job`` on ``worker`` (the caller kills it, now or at a session's end)."""
    started = time.monotonic()
    worker.prepare(limits.memory_mb)
    output, error = _drive(worker, job, gate, limits, started)
    error = _witnessed(worker, error)
    code, preload = job["code"], job["preload"]
    if error is not None and error.line is not None and error.source_line is None:
        error.source_line = _source_line(code, list(preload), error.where, error.line)
    calls = tuple(gate.calls) if gate is not None else ()
    return SandboxResult(output, calls, error, time.monotonic() - started, job["api_name"])


async def run_code_async(code: str, api: object | None = None, **kwargs: Any) -> SandboxResult:
    """:func:`run_code` in a thread, so an agent's event loop keeps running."""
    return await asyncio.to_thread(run_code, code, api, **kwargs)


def _drive(
    worker: Worker,
    job: dict[str, Any],
    gate: ApiGate | None,
    limits: Limits,
    started: float,
) -> tuple[str, SandboxError | None]:
    """Exchange messages with the worker until it reports, dies or runs out of time."""
    deadline = started + limits.wall_s + limits.grace_s
    output: list[str] = []
    conn = worker.conn
    try:
        conn.send(job, deadline)
        while True:
            message = conn.recv(deadline)
            if message is None:
                return _bounded(output, limits), _exit_error(worker, limits)
            if message.get("nonce") != job["nonce"]:
                raise ProtocolViolation("the worker sent a frame that does not belong to this run")
            op = message.get("op")
            if op == "call" and gate is not None:
                method, args, kwargs, printed = (
                    message.get(k) for k in ("method", "args", "kwargs", "output")
                )
                if not (
                    isinstance(method, str)
                    and isinstance(args, list)
                    and isinstance(kwargs, dict)
                    and isinstance(printed, str)
                ):
                    raise ProtocolViolation("the worker sent a malformed API call")
                _append(output, printed, limits)
                if flooding(gate):
                    worker.kill()
                    return _bounded(output, limits), ActionBudgetExceeded(
                        f"the code kept calling the API after its {limits.max_api_calls}-call "
                        "budget was spent and was stopped"
                    )
                conn.send(gate.handle(method, args, kwargs), deadline)
            elif op == "done":
                printed = message.get("output")
                if not isinstance(printed, str):
                    raise ProtocolViolation("the worker sent a malformed report")
                _append(output, printed, limits)
                return _bounded(output, limits), _reported_error(message.get("error"))
            else:
                raise ProtocolViolation(f"the worker sent an unexpected message {op!r}")
    except DeadlineExceeded:
        worker.kill()
        return _bounded(output, limits), TimeLimitExceeded(
            f"the code ran past the {limits.wall_s}s time limit and was killed"
        )
    except ProtocolViolation as exc:
        worker.kill()
        return _bounded(output, limits), exc
    except (BrokenPipeError, ConnectionResetError):
        return _bounded(output, limits), _exit_error(worker, limits)


def _witnessed(worker: Worker, error: SandboxError | None) -> SandboxError | None:
    """The run's error, with the alarm pipe's first violation taking precedence.

    The ``done`` message comes from the process the code ran in, so it is not
    the only witness: the guard wrote each first violation to the alarm pipe
    when it happened, and a report that leaves it out (or says ``ok``) is
    overruled. A parent-side ProtocolViolation is kept as it is.
    """
    try:
        records = worker.alarms()
    except ProtocolViolation as exc:
        return exc
    if not records or isinstance(error, ProtocolViolation):
        return error
    kind, line, where, message = records[0]
    if error is not None and type(error).kind == kind:
        return error
    try:
        cls = error_from_kind(kind)
    except KeyError:
        return ProtocolViolation(f"the worker's alarm named an unknown error kind {kind!r}")
    return cls(message[:2000], line=line, where=where)


def _append(parts: list[str], text: str, limits: Limits) -> None:
    room = limits.max_output_chars - sum(len(p) for p in parts)
    if room > 0:
        parts.append(text[:room])


def _bounded(parts: list[str], limits: Limits) -> str:
    return "".join(parts)[: limits.max_output_chars]


def _exit_error(worker: Worker, limits: Limits) -> SandboxError:
    """Why a worker ended without a report, named by its witnesses (``exits.py``)."""
    code = worker.reap(timeout_s=2)
    if worker.killed_by_parent:
        return SandboxCrashed("the worker stopped answering and was killed by the sandbox")
    error = exit_error(
        code,
        cpu_used=worker.cpu_used,
        cpu_s=limits.cpu_s,
        oom=worker.oom_killed(),
        xcpu_seen=signal.SIGXCPU in worker.signals_received(),
    )
    tail = worker.stderr_tail()
    if type(error) is SandboxCrashed and tail:
        error = SandboxCrashed(f"{error.message}: {tail[-500:]}")
    return error


def _reported_error(report: object) -> SandboxError | None:
    """The typed error for a child's report; anything odd is a protocol violation."""
    if report is None:
        return None
    if not isinstance(report, dict):
        raise ProtocolViolation("the worker sent a malformed error report")
    kind, message = report.get("kind"), report.get("message")
    line, where, exc_type = report.get("line"), report.get("where"), report.get("exc_type")
    if not (
        isinstance(kind, str)
        and isinstance(message, str)
        and (line is None or (isinstance(line, int) and not isinstance(line, bool)))
        and (where is None or isinstance(where, str))
        and (exc_type is None or isinstance(exc_type, str))
    ):
        raise ProtocolViolation("the worker sent a malformed error report")
    try:
        cls = error_from_kind(kind)
    except KeyError:
        raise ProtocolViolation(f"the worker reported an unknown error kind {kind!r}") from None
    return cls(message[:2000], line=line, where=where, exc_type=exc_type)


def _source_line(code: str, preload: list[str], where: str | None, line: int) -> str | None:
    source = code
    if where and where.startswith("preload["):
        try:
            source = preload[int(where[len("preload[") : -1])]
        except (ValueError, IndexError):
            return None
    lines = source.splitlines()
    return lines[line - 1][:200] if 0 < line <= len(lines) else None
