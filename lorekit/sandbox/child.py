"""Entry point of a sandbox worker process: ``python -I -S child.py CONFIG``.

Runs as a script with the standard library only (``-I``: no environment
variables, no user site, no script dir on ``sys.path``). The parent started
it with an empty environment, in a fresh session (its own process group) and
in a private working directory. Stdin and stdout are the protocol pipes; they
are moved to private descriptors and replaced by ``/dev/null`` so nothing the
code does can write onto the protocol stream by accident.

Lifecycle: import the allowlisted modules, install the (inert) audit hook,
say ``ready``, wait for exactly one job, run it, report, exit. A worker never
runs a job of anyone else's: after untrusted code ran, nothing in this
interpreter can be trusted, so the parent discards it.

The one exception is a *session* (``job["session"]``, see
:mod:`lorekit.sandbox.session`): the same caller's later code, one agent
episode's turns, runs in the same namespace, so its variables survive
between turns. Each later job is checked and compiled like the first, under
the limits the first set (rlimits only ever go down; the CPU rlimit covers
``session_runs`` runs, the per-run timers each run's own share), and the
parent ends the session at the first violation. Code of one session can
only affect that session's later code, which trusts it anyway; the later
jobs themselves (their limits and policy) arrive through ``child_json``,
which no class the code can reach takes part in, and the guard refuses
changes to the library's classes that the worker's own steps use.
"""

from __future__ import annotations

import ast
import gc
import importlib
import json
import math
import os
import resource
import signal
import struct
import sys
import types
from typing import Any

HEADER = struct.Struct(">I")
MAX_MESSAGE_CHARS = 2_000
guard: Any = None  # the guard module, imported from this directory in main()
wire: Any = None  # child_json: frames that no class the code can change is asked to encode
_ARMED: list[bool] = []  # whether a session's first job armed the audit hook


class ApiCallRejected(TypeError):
    """The parent refused an API call (unknown method or wrong argument types)."""


class ApiError(RuntimeError):
    """The environment API raised while handling a call."""


class Channel:
    """Length-prefixed JSON frames over the two protocol descriptors.

    Once the job arrived, every frame carries the job's nonce: the parent
    drops a worker whose frames lack it, so nothing written into this pipe
    before the job (by anyone) can pass for this run's answer.
    """

    def __init__(self, rfd: int, wfd: int, max_bytes: int) -> None:
        self.rfd, self.wfd, self.max_bytes = rfd, wfd, max_bytes
        self.nonce: str | None = None

    def send_bytes(self, data: bytes) -> None:
        view = memoryview(HEADER.pack(len(data)) + data)
        while view:
            view = view[os.write(self.wfd, view) :]

    def send(self, message: dict[str, Any]) -> None:
        if self.nonce is not None:
            message["nonce"] = self.nonce
        self.send_bytes(wire.encode(message).encode())

    def _read(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = os.read(self.rfd, min(left, 1 << 20))
            if not chunk:
                os._exit(3)  # the parent went away: nothing left to do
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def recv(self) -> dict[str, Any]:
        (size,) = HEADER.unpack(self._read(HEADER.size))
        if size > self.max_bytes:
            os._exit(4)
        try:
            message = wire.decode(self._read(size))
        except ValueError:
            os._exit(4)
        if not isinstance(message, dict):
            os._exit(4)
        return message


class Output:
    """Bounded capture of everything the code prints."""

    def __init__(self, limit: int) -> None:
        self.limit, self.size, self.sent = limit, 0, 0
        self.parts: list[str] = []

    def add(self, text: str) -> None:
        room = self.limit - self.size
        if len(text) > room:
            self.parts.append(text[: max(room, 0)])
            self.size = self.limit
            raise guard.stop(
                "OutputLimitExceeded", f"printed output exceeded {self.limit} characters"
            )
        self.parts.append(text)
        self.size += len(text)

    def print(
        self,
        *args: object,
        sep: str | None = " ",
        end: str | None = "\n",
        file: Any = None,
        flush: bool = False,
    ) -> None:
        text = (" " if sep is None else str(sep)).join(map(str, args))
        text += "\n" if end is None else str(end)
        if file is not None:
            file.write(text)
        else:
            self.add(text)

    def take_new(self) -> str:
        text = "".join(self.parts)
        new, self.sent = text[self.sent :], len(text)
        return new


class ApiProxy:
    """What the code sees as ``api``: each method forwards to the parent."""

    def __init__(self, methods: dict[str, str], call: Any) -> None:
        for name, signature in methods.items():
            self.__dict__[name] = _make_method(name, signature, call)

    def __getattr__(self, name: str) -> Any:
        known = ", ".join(sorted(self.__dict__))
        raise AttributeError(f"the API has no method {name!r} (methods: {known})")

    def __repr__(self) -> str:
        return f"<api: {', '.join(sorted(self.__dict__))}>"


def _make_method(name: str, signature: str, call: Any) -> Any:
    def method(*args: Any, **kwargs: Any) -> Any:
        return call(name, args, kwargs)

    method.__name__ = name
    method.__doc__ = f"api.{name}{signature}"
    return method


def state_setter(target: dict[str, Any], methods: dict[str, str]) -> Any:
    """Writes the API's state attributes (``agent.holding``) into the proxy's ``target``."""

    def apply(state: Any) -> None:
        if isinstance(state, dict):
            for key, value in state.items():
                public = isinstance(key, str) and key.isidentifier() and not key.startswith("_")
                if public and key not in methods:
                    target[key] = value

    return apply


def make_caller(chan: Channel, out: Output, on_state: Any = None) -> Any:
    """The function proxies use: one request, one reply, signals held meanwhile.

    A reply's ``state`` (the API's attributes after the call) goes to ``on_state``.
    """
    held = {signal.SIGALRM, signal.SIGPROF, signal.SIGXCPU}

    def call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            body = wire.encode([list(args), kwargs])
        except (TypeError, ValueError) as exc:
            raise ApiCallRejected(
                f"api.{name}: arguments must be JSON values "
                f"(str, int, float, bool, None, list, dict with str keys): {exc}"
            ) from None
        if len(body) > chan.max_bytes // 2:
            raise ApiCallRejected(f"api.{name}: arguments are too large ({len(body)} bytes)")
        message = {"op": "call", "method": name, "args": list(args), "kwargs": kwargs}
        message["output"] = out.take_new()
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            chan.send(message)
            reply = chan.recv()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        if on_state is not None and "state" in reply:
            on_state(reply["state"])
        if reply.get("ok"):
            return reply.get("result")
        kind, text = str(reply.get("kind")), str(reply.get("message"))
        if kind == "ActionBudgetExceeded":
            raise guard.stop(kind, text)
        if kind == "ApiCallRejected":
            raise ApiCallRejected(text)
        raise ApiError(text)

    return call


def set_limits(limits: dict[str, Any], *, allow_processes: bool = False) -> None:
    """Apply the job's rlimits; all of them only ever go down."""
    page = os.sysconf("SC_PAGE_SIZE")
    with open("/proc/self/statm") as statm:
        vm_bytes = int(statm.read().split()[0]) * page
    memory = vm_bytes + int(limits["memory_mb"]) * (1 << 20)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    runs = max(1, int(limits.get("session_runs", 1)))
    cpu = math.ceil(usage.ru_utime + usage.ru_stime + float(limits["cpu_s"]) * runs)
    plan = [
        (resource.RLIMIT_AS, memory),
        (resource.RLIMIT_DATA, memory),
        (resource.RLIMIT_FSIZE, int(limits["max_file_bytes"])),
        (resource.RLIMIT_NOFILE, int(limits["max_open_files"])),
        (resource.RLIMIT_CORE, 0),
        # kernel memory outside RLIMIT_AS: queued signals, locked pages, POSIX
        # message queues (refused by seccomp too)
        (resource.RLIMIT_SIGPENDING, 128),
        (resource.RLIMIT_MEMLOCK, 0),
        (resource.RLIMIT_MSGQUEUE, 0),
    ]
    if not allow_processes:
        plan.append((resource.RLIMIT_NPROC, 0))
    for which, value in plan:
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))
    cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if cpu_hard == resource.RLIM_INFINITY or cpu + 1 <= cpu_hard:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big write fails, not kills
    sys.setrecursionlimit(int(limits["recursion_limit"]))


def _interrupt(kind: str, text: str) -> Any:
    def handler(signum: int, frame: Any) -> None:
        if guard.STATE.running:
            raise guard.stop(kind, text)

    return handler


def _location(exc: BaseException) -> tuple[int | None, str | None]:
    line, where = None, None
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.startswith(guard.SNIPPET_PREFIX):
            line, where = tb.tb_lineno, name[len(guard.SNIPPET_PREFIX) : -1]
        tb = tb.tb_next
    return line, where


def _text(value: object) -> str:
    try:
        text = str(value)
    except BaseException:  # a hostile __str__ must not break the report
        text = "<unprintable message>"
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + "..."


def describe(
    exc: BaseException | None, limits: dict[str, Any], violation: Any = None
) -> dict[str, Any] | None:
    """The report of how the code ended; a recorded violation always wins."""
    if violation is not None:
        kind, message, line, where = violation
        return {"kind": kind, "message": message, "line": line, "where": where}
    if exc is None:
        return None
    line, where = _location(exc)
    if isinstance(exc, guard.Stop):  # the audit hook's refusal (it keeps no record here)
        kind, message = _text(exc.kind), _text(exc.message)
        return {"kind": kind, "message": message, "line": line, "where": where}
    report: dict[str, Any] = {"line": line, "where": where, "exc_type": type(exc).__name__}
    if isinstance(exc, SyntaxError):
        report.update(kind="CodeError", message=_text(exc.msg), line=exc.lineno)
        report["where"] = str(exc.filename or "")[len(guard.SNIPPET_PREFIX) : -1] or None
    elif isinstance(exc, MemoryError):
        report.update(
            kind="MemoryLimitExceeded",
            message=f"the code needed more than the {limits['memory_mb']} MB memory limit",
        )
    elif isinstance(exc, AssertionError):
        report.update(kind="AssertionFailed", message=_text(exc) or "assertion failed")
    elif isinstance(exc, ApiCallRejected):
        report.update(kind="ApiCallRejected", message=_text(exc))
        del report["exc_type"]
    else:
        report.update(kind="CodeError", message=_text(exc))
    return report


def compile_pieces(job: dict[str, Any], denied: frozenset[str]) -> list[Any] | dict[str, Any]:
    """Parse, check and compile every piece, or the report of the first bad one."""
    pieces = [(f"preload[{i}]", src) for i, src in enumerate(job["preload"])]
    pieces.append(("code", job["code"]))
    compiled = []
    for where, source in pieces:
        filename = f"{guard.SNIPPET_PREFIX}{where}>"
        try:
            # compile() called from this (trusted) file, not ast.parse's: in a
            # session's later jobs the audit hook is armed and refuses a
            # sandbox file name compiled from anywhere else.
            tree = compile(source, filename, "exec", ast.PyCF_ONLY_AST)
        except SyntaxError as exc:
            return describe(exc, job["limits"]) or {}
        except (ValueError, RecursionError, MemoryError) as exc:
            return {
                "kind": "CodeError",
                "exc_type": type(exc).__name__,
                "message": _text(exc),
                "line": None,
                "where": where,
            }
        problem = guard.check_tree(tree, denied)
        if problem is not None:
            return {
                "kind": "ForbiddenSyntax",
                "message": problem[1],
                "line": problem[0],
                "where": where,
            }
        # dont_inherit: this file's `from __future__ import annotations` must not
        # turn the code's annotations into strings (library code evaluates those)
        compiled.append(compile(guard.instrument(tree), filename, "exec", dont_inherit=True))
    return compiled


def run_job(
    chan: Channel,
    job: dict[str, Any],
    alarm_fd: int | None = None,
    module: types.ModuleType | None = None,
) -> dict[str, Any]:
    """Run one job under every limit and return the ``done`` message.

    Violations also go to ``alarm_fd`` the moment they are seen (see
    ``guard.make_alarm``), so the ``done`` message is not their only witness.
    ``module`` is a session's namespace from its earlier jobs (default: a new one).
    """
    limits, policy = job["limits"], job["policy"]
    denied = frozenset(policy["denied_attributes"])
    out = Output(int(limits["max_output_chars"]))
    compiled = compile_pieces(job, denied)
    if isinstance(compiled, dict):
        return {"op": "done", "output": "", "error": compiled}
    rules = guard.new_rules(denied)
    sandbox_type = guard.make_type(rules)
    views = guard.build_views(policy["imports"], policy["hidden_names"], rules, sandbox_type)
    if module is None:
        module = types.ModuleType("__sandbox__")  # a real module: dataclasses look it up
    sys.modules["__sandbox__"] = module
    namespace: dict[str, Any] = module.__dict__
    namespace["__builtins__"] = guard.make_builtins(views, rules, sandbox_type, out.print)
    if job.get("api") is not None:
        setters: list[Any] = []
        caller = make_caller(chan, out, lambda state: [f(state) for f in setters])
        proxy = ApiProxy(job["api"], caller)
        setters.append(state_setter(proxy.__dict__, job["api"]))
        setters[0](job.get("api_state"))
        namespace[job["api_name"]] = proxy
    wall = float(limits["wall_s"])
    signal.signal(signal.SIGALRM, _interrupt("TimeLimitExceeded", f"time limit of {wall}s hit"))
    cpu_hit = _interrupt("CpuLimitExceeded", f"CPU time limit of {limits['cpu_s']}s hit")
    signal.signal(signal.SIGPROF, cpu_hit)  # precise soft limit
    signal.signal(signal.SIGXCPU, cpu_hit)  # RLIMIT_CPU, whole seconds, then SIGKILL
    if job.get("later"):  # a session's later job: the first job's rlimits stand
        sys.setrecursionlimit(int(limits["recursion_limit"]))
    else:
        set_limits(limits)
    reserve = bytearray(1 << 20)  # released on MemoryError so the report fits
    failure: BaseException | None = None
    if not (job.get("later") and _ARMED):  # the hook stays from the first job; no second one
        guard.arm(int(limits["max_files_written"]), alarm_fd, denied)
        _ARMED[:] = [True]
    guard.STATE.running = True
    signal.setitimer(signal.ITIMER_REAL, wall, 0.05)
    signal.setitimer(signal.ITIMER_PROF, float(limits["cpu_s"]), 0.05)
    try:
        for code in compiled:
            exec(code, namespace)
    except BaseException as exc:
        failure = exc
    while True:  # a late timer signal may still land here: retry until quiet
        try:
            guard.STATE.running = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.setitimer(signal.ITIMER_PROF, 0)
            break
        except guard.Stop:
            continue
    if isinstance(failure, MemoryError):
        del reserve
        namespace.clear()
        gc.collect()
    report = describe(failure, limits, guard.STATE.violation)
    return {"op": "done", "output": out.take_new(), "error": report}


def main() -> None:
    global guard, wire
    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    config = json.loads(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    guard = importlib.import_module("guard")
    wire = importlib.import_module("child_json")
    child_os = importlib.import_module("child_os")
    sys.path.remove(here)
    for name in config["preload"]:
        importlib.import_module(name)
    if "datetime" in config["preload"]:
        importlib.import_module("_strptime")  # imported lazily by strptime otherwise
    netns = bool(config.get("netns")) and child_os.enter_network_namespace()
    guard.install_audit_hook()
    chan = Channel(rfd, wfd, int(config["max_message_bytes"]))
    facts = child_os.confinement_facts()
    facts["signal_filter"] = child_os.confine_signals(config.get("signal_filter"))
    chan.send({"op": "ready", "pid": os.getpid(), "netns": netns, "facts": facts})
    job = chan.recv()
    if job.get("op") != "run" or not isinstance(job.get("nonce"), str):
        os._exit(2)
    chan.nonce = job["nonce"]
    child_os.watch_signals(config.get("signals_fd"))
    session = bool(job.get("session")) and not job.get("unguarded")
    module = types.ModuleType("__sandbox__")  # a real module: dataclasses look it up
    used = {job["nonce"]}
    while True:
        try:
            if job.get("unguarded"):
                if not config.get("unguarded_for_tests"):
                    os._exit(2)
                message = child_os.run_unguarded(job, set_limits)
            else:
                alarm = config.get("alarm_fd")
                message = run_job(chan, job, alarm if isinstance(alarm, int) else None, module)
        except BaseException as exc:  # a bug here must still end the worker cleanly
            os.write(2, f"sandbox worker failed: {exc!r}\n".encode(errors="replace"))
            os._exit(5)
        chan.send(message)
        if not session:
            break
        job = chan.recv()  # the session's next run, or its end
        nonce = job.get("nonce")
        if job.get("op") != "run" or not isinstance(nonce, str) or nonce in used:
            break
        if job.get("unguarded") or not job.get("session"):
            os._exit(2)
        used.add(nonce)
        chan.nonce = nonce
        job["later"] = True
    os._exit(0)


if __name__ == "__main__":
    main()
