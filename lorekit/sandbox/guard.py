"""In-child defences: syntax check, restricted builtins, import views, audit hook.

This module runs inside the sandbox worker, loaded by ``child.py`` as a plain
top-level module (with its siblings ``guard_syntax`` and ``guard_runtime``),
so it imports the standard library only. The layers, from the outside in:

1. ``check_tree`` rejects syntax that reaches interpreter internals
   (``x.__class__``, ``gen.gi_frame``, format strings that walk attributes,
   dunder hooks such as ``__getattr__`` defined in a class body);
   ``instrument`` adds run-time checks for private names and class patterns.
2. The code gets a builtins dict without ``eval``/``exec``/``compile``/``vars``,
   with a ``getattr`` family and a ``type`` that check names, an ``open``
   confined to the work dir and an ``__import__`` that hands out filtered
   *views* of allowlisted modules (see ``guard_runtime``).
3. An audit hook, installed by :func:`arm` just before untrusted code runs,
   blocks the effects that matter even if layers 1-2 are bypassed: files
   outside the work dir, sockets, processes, signals, ctypes, new imports,
   code generated at run time that names internals. The hook is a closure
   over values captured when it was made: no module global, flag or object
   the code could reach switches it off or changes what it allows.

Every violation raises :class:`Stop` (a ``BaseException``, so ``except
Exception`` does not swallow it) and is recorded; the first one recorded is
what the run reports, even if the code caught it.
"""

from __future__ import annotations

import itertools
import os
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lorekit.sandbox import guard_runtime as runtime
    from lorekit.sandbox import guard_syntax as syntax
else:  # in the worker this directory is on sys.path, the package is not
    import guard_runtime as runtime
    import guard_syntax as syntax

SNIPPET_PREFIX = "<sandbox:"
ALLOWED_DUNDERS = syntax.ALLOWED_DUNDERS
ModuleView = runtime.ModuleView
Rules = runtime.Rules
_ALWAYS_BLOCKED = (
    "os.",
    "socket.",
    "subprocess.",
    "ctypes.",
    "shutil.",
    "pty.",
    "fcntl.",
    "mmap.",
    "resource.",
    "signal.",
    "urllib.",
    "http.",
    "ftplib.",
    "smtplib.",
    "telnetlib.",
    "imaplib.",
    "poplib.",
    "nntplib.",
    "webbrowser.",
    "sqlite3.",
    "glob.",
    "tempfile.",
    "marshal.",
    "pickle.",
    "gc.",
    "cpython.",
    "syslog.",
    "_thread.",
    "_posixsubprocess.",
    "pdb.",
    "ensurepip.",
    "time.sleep",
    "code.__new__",
    "function.__new__",
    "sys.addaudithook",
    "sys.setprofile",
    "sys.settrace",
    "sys._current_frames",
    "sys._current_exceptions",
    "sys.excepthook",
    "sys.unraisablehook",
    "sys.monitoring",
    "builtins.input",
    "setopencode",
)
#: Audited attribute reads and writes (frames, code objects, ``__class__``
#: assignment, function internals): only the guard's own code may.
_TRUSTED_ONLY = frozenset({"object.__getattr__", "object.__setattr__", "object.__delattr__"})
_BLOCKED_FROM_SNIPPET = frozenset({"exec", "compile", "sys._getframe"})
_LAZY_IMPORTS = ("encodings.",)
_STDLIB_DIR = os.path.dirname(os.__file__)
_GUARD_DIR = os.path.dirname(os.path.abspath(__file__))
#: Names that code the standard library generates at run time (dataclasses,
#: namedtuple, typing) uses; any other dunder in such code is refused.
_GENERATED_DUNDERS = (
    frozenset({"__class__", "__create_fn__", "__delattr__", "__post_init__", "__setattr__"})
    | syntax.ALLOWED_DUNDERS
)
_GENERATED_PRIVATE = frozenset({"_tuple_new"})
_GENERATED_DENIED = frozenset(
    {
        "getattr",
        "setattr",
        "delattr",
        "eval",
        "exec",
        "compile",
        "open",
        "globals",
        "locals",
        "vars",
        "breakpoint",
        "input",
        "help",
    }
)
_TICKS = itertools.count()

Alarm = Callable[[str, str, "int | None", "str | None"], None]


def _silent(kind: str, message: str, line: int | None, where: str | None) -> None:
    """The alarm before :func:`arm` names a channel: nowhere to sound."""


def make_alarm(fd: int | None) -> Alarm:
    """A writer of violation records to the parent's alarm pipe.

    The record goes out the moment a violation is first seen, on a pipe that
    only carries these records, so what the parent learns from it cannot be
    taken back by whatever the code does afterwards (catch the exception,
    forge a report on the protocol pipe). Format: one line of
    ``kind<TAB>line<TAB>where<TAB>message``.
    """
    if fd is None:
        return _silent
    write, t_str = os.write, str

    def sound(kind: str, message: str, line: int | None, where: str | None) -> None:
        fields = (kind, "" if line is None else t_str(line), where or "", message)
        record = "\t".join(t_str.replace(t_str.replace(f, "\n", " "), "\t", " ") for f in fields)
        try:  # noqa: SIM105 (plain try: this runs inside the audit hook, no contextlib)
            write(fd, record[:1000].encode("utf-8", "replace") + b"\n")
        except OSError:
            pass

    return sound


_ALARM: list[Alarm] = [_silent]


class Stop(BaseException):
    """Raised at the code when it hits a policy or limit; carries the kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


Violation = tuple[str, str, int | None, str | None]


class State:
    """Run state the worker's own code reads (the hook keeps its own, unreachable)."""

    def __init__(self) -> None:
        self.running = False
        self.violation: Violation | None = None
        self.tick = -1
        self.workdir = os.getcwd()


STATE = State()


def snippet_location() -> tuple[int | None, str | None]:
    """Line and piece name of the innermost sandboxed frame on the stack."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(SNIPPET_PREFIX):
            return frame.f_lineno, name[len(SNIPPET_PREFIX) : -1]
        frame = frame.f_back  # type: ignore[assignment]
    return None, None


def stop(kind: str, message: str) -> Stop:
    """Record a violation (the first one wins) and build the exception to raise."""
    if STATE.violation is None:
        line, where = snippet_location()
        STATE.violation = (kind, message, line, where)
        STATE.tick = next(_TICKS)
        _ALARM[0](kind, message, line, where)
    return Stop(kind, message)


# ---------------------------------------------------------------- syntax and builtins

check_tree = syntax.check_tree
instrument = syntax.instrument


def new_rules(denied: frozenset[str]) -> runtime.Rules:
    """The run-time name rules of one run (shared by builtins and views)."""
    return runtime.Rules(denied, stop)


def make_type(rules: runtime.Rules) -> type:
    """The sandbox's ``type`` (checks class dicts; see ``guard_runtime.make_type``)."""
    return runtime.make_type(rules)


def build_views(
    allowed: list[str], hidden: dict[str, list[str]], rules: runtime.Rules, sandbox_type: type
) -> dict[str, runtime.ModuleView]:
    """Views of every allowlisted (already imported) module, keyed by full name."""
    return runtime.build_views(allowed, hidden, rules, sandbox_type)


def make_builtins(
    views: dict[str, runtime.ModuleView],
    rules: runtime.Rules,
    sandbox_type: type,
    printer: Callable[..., None],
) -> dict[str, Any]:
    """The builtins dict of sandboxed code."""
    check_path = _path_checker(os.getcwd())
    return runtime.make_builtins(views, rules, sandbox_type, printer, check_path)


def _path_checker(workdir: str) -> Callable[[object], str | None]:
    """A function telling whether a path names something inside ``workdir``.

    It uses only ``str`` methods on exact strings (a path given as a ``str``
    or ``bytes`` subclass is copied first), so nothing the code patches or
    subclasses changes its answer; symlinks are not followed (the code cannot
    make any: ``os`` is blocked).
    """
    t_type, t_str, t_bytes = type, str, bytes
    as_str, decode = str.__str__, bytes.decode
    is_sub = issubclass
    inside_prefix = workdir + "/"

    def inside(path: object) -> str | None:
        kind = t_type(path)
        if kind is not t_str and kind is not t_bytes:
            if is_sub(kind, t_str):
                path = as_str(path)
            elif is_sub(kind, t_bytes):
                path = t_bytes.__getitem__(path, slice(None))  # type: ignore[call-overload]
            else:
                return None
        if t_type(path) is t_bytes:
            path = decode(path, "utf-8", "surrogateescape")  # type: ignore[arg-type]
        text: str = path  # type: ignore[assignment]
        if "\x00" in text:
            return None
        if not text.startswith("/"):
            text = inside_prefix + text
        parts: list[str] = []
        for part in text.split("/"):
            if part == "" or part == ".":
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(part)
        full = "/" + "/".join(parts)
        if full == workdir or full.startswith(inside_prefix):
            return full
        return None

    return inside


# ---------------------------------------------------------------- audit hook


def _make_hook(
    workdir: str, max_files_written: int, sound: Alarm = _silent
) -> tuple[Callable[[str, tuple[Any, ...]], None], Callable[[], tuple[int, Violation] | None]]:
    """The audit hook and a reader of the first violation it raised.

    Everything the hook consults is captured here, as closure cells of
    functions nobody else holds: builtins, string methods, the work dir, the
    limits and its own counters. Replacing a module global, a builtin or an
    attribute of ``os`` or ``sys`` afterwards changes nothing it does.
    """
    getframe = sys._getframe
    inside = _path_checker(workdir)
    t_type, t_str, t_bytes, t_int, t_code = type, str, bytes, int, types.CodeType
    t_len, t_sorted, t_set, t_next = len, sorted, set, next
    prefix = SNIPPET_PREFIX
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    stdlib_prefix = _STDLIB_DIR + os.sep
    guard_prefix = _GUARD_DIR + os.sep
    blocked, lazy_imports = _ALWAYS_BLOCKED, _LAZY_IMPORTS
    trusted_only, from_snippet = _TRUSTED_ONLY, _BLOCKED_FROM_SNIPPET
    generated_ok, generated_private = _GENERATED_DUNDERS, _GENERATED_PRIVATE
    generated_denied = _GENERATED_DENIED
    make_stop, ticks = Stop, _TICKS
    inert_reads = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
    plain_writes = frozenset(
        {"__doc__", "__name__", "__qualname__", "__module__", "__defaults__", "__kwdefaults__"}
    )
    ledger: dict[str, Any] = {"busy": False, "files": 0, "first": None}

    def refuse(kind: str, message: str, caller: Any) -> Stop:
        if ledger["first"] is None:
            line = where = None
            frame = caller
            while frame is not None:
                name = frame.f_code.co_filename
                if name.startswith(prefix):
                    line, where = frame.f_lineno, name[t_len(prefix) : -1]
                    break
                frame = frame.f_back
            ledger["first"] = (t_next(ticks), (kind, message, line, where))
            sound(kind, message, line, where)
        return make_stop(kind, message)

    def generated_names(code: Any) -> list[str]:
        bad, todo = [], [code]
        while todo:
            item = todo.pop()
            for name in item.co_names:
                if t_type(name) is not t_str:
                    continue
                dunder = name.startswith("__")
                if (
                    (dunder and name not in generated_ok)
                    or (not dunder and name.startswith("_") and name not in generated_private)
                    or name in generated_denied
                ):
                    bad.append(name)
            todo.extend(c for c in item.co_consts if t_type(c) is t_code)
        return bad

    def check(event: str, args: tuple[Any, ...]) -> None:
        caller = getframe(2)  # 0: check, 1: hook, 2: the frame that raised the event
        filename = caller.f_code.co_filename if caller is not None else ""
        trusted = filename.startswith(guard_prefix)
        snippet = filename.startswith(prefix)
        if event == "open":
            path, flags = args[0], args[2]
            writes = not (t_type(flags) is t_int and not flags & write_flags)
            if inside(path) is not None:
                if writes:
                    ledger["files"] += 1
                    if ledger["files"] > max_files_written:
                        limit = max_files_written
                        raise refuse(
                            "ForbiddenOperation",
                            f"more than {limit} files opened for writing",
                            caller,
                        )
                return
            if (
                not writes
                and t_type(path) is t_str
                and path.startswith(stdlib_prefix)
                and ".." not in path.split("/")
            ):
                return  # lazy stdlib imports (codecs) read their own source
            shown = path if t_type(path) in (t_str, t_bytes, t_int) else t_type(path).__name__
            raise refuse(
                "ForbiddenOperation", f"file access outside the sandbox: {shown!r}", caller
            )
        if event == "import":
            name = args[0]
            if t_type(name) is t_str and name.startswith(lazy_imports):
                return
            raise refuse("ForbiddenImport", f"loading module {name!r} is not allowed", caller)
        if event.startswith(blocked):
            raise refuse("ForbiddenOperation", f"operation {event!r} is not allowed", caller)
        if trusted:
            return
        if event in from_snippet and snippet:
            raise refuse("ForbiddenOperation", f"operation {event!r} is not allowed", caller)
        if event in trusted_only:
            name = args[1] if t_len(args) > 1 and t_type(args[1]) is t_str else "?"
            if event == "object.__getattr__":
                if not snippet and name in inert_reads:
                    return  # e.g. dataclasses reads __code__; a code object alone runs nothing
            elif name in plain_writes:
                return  # dataclasses and functools set a class's or function's __doc__
            raise refuse(
                "ForbiddenOperation", f"operation {event!r} ({name!r}) is not allowed", caller
            )
        if event == "compile":
            name = args[1] if t_len(args) > 1 and t_type(args[1]) is t_str else ""
            if name.startswith(guard_prefix) or name.startswith(prefix):
                raise refuse("ForbiddenOperation", "compiling under a sandbox file name", caller)
        if event == "exec" and args and t_type(args[0]) is t_code:
            bad = generated_names(args[0])
            if bad:
                raise refuse(
                    "ForbiddenOperation",
                    f"code generated at run time may not use {t_sorted(t_set(bad))}",
                    caller,
                )

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if ledger["busy"]:
            return  # events the hook itself causes (frame reads)
        ledger["busy"] = True
        try:
            check(event, args)
        finally:
            ledger["busy"] = False

    def first() -> tuple[int, Violation] | None:
        found: tuple[int, Violation] | None = ledger["first"]
        return found

    return hook, first


def install_audit_hook() -> None:
    """Kept for the worker's start-up sequence: the hook is installed by :func:`arm`.

    Installing it at start-up would need an "armed" flag somewhere the code
    could reach; installing it just before the code runs needs none.
    """


def arm(max_files_written: int, alarm_fd: int | None = None) -> Callable[[], Violation | None]:
    """Install the audit hook; from now on every blocked event raises. No way back.

    Returns a function giving the run's first violation, whichever layer saw
    it first: the hook's own record (out of the code's reach) or ``STATE``'s.
    """
    sound = make_alarm(alarm_fd)
    _ALARM[0] = sound
    hook, hook_first = _make_hook(STATE.workdir, max_files_written, sound)
    sys.addaudithook(hook)

    def first_violation() -> Violation | None:
        found = hook_first()
        if found is not None and (STATE.violation is None or found[0] < STATE.tick):
            return found[1]
        return STATE.violation

    return first_violation
