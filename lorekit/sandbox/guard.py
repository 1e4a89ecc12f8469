"""In-child defences: syntax check, restricted builtins, import views, audit hook.

This module runs inside the sandbox worker, loaded by ``child.py`` as a plain
top-level module (with its siblings ``guard_syntax`` and ``guard_runtime``),
so it imports the standard library only. The layers, from the outside in:

1. ``check_tree`` rejects syntax that reaches interpreter internals
   (``x.__class__``, ``gen.gi_frame``, format strings that walk attributes,
   dunder hooks such as ``__getattr__`` defined in a class body);
   ``instrument`` adds run-time checks for private names, class patterns
   and every attribute write (only what the code made may change).
2. The code gets a builtins dict without ``eval``/``exec``/``compile``/``vars``,
   with a ``getattr`` family and a ``type`` that check names, an ``open``
   confined to the work dir and an ``__import__`` that hands out filtered
   *views* of allowlisted modules (see ``guard_runtime``).
3. An audit hook (``guard_hook``), installed by :func:`arm` just before
   untrusted code runs, blocks the effects that matter even if layers 1-2
   are bypassed: files outside the work dir, sockets, processes, signals,
   ctypes, new imports, code generated at run time that names internals.
   It keeps no state the code could switch: no flag, no global, nothing
   mutable in its frame, and no other function shares its closure.

Every violation raises :class:`Stop` (a ``BaseException``, so ``except
Exception`` does not swallow it) and is recorded; the first one recorded is
what the run reports, even if the code caught it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lorekit.sandbox import guard_hook
    from lorekit.sandbox import guard_runtime as runtime
    from lorekit.sandbox import guard_syntax as syntax
else:  # in the worker this directory is on sys.path, the package is not
    import guard_hook
    import guard_runtime as runtime
    import guard_syntax as syntax

SNIPPET_PREFIX = "<sandbox:"
ALLOWED_DUNDERS = syntax.ALLOWED_DUNDERS
ModuleView = runtime.ModuleView
Rules = runtime.Rules

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
        try:  # noqa: SIM105 (plain try: no contextlib in the worker's guard)
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
    """Run state the worker's own code reads and reports.

    Code that escaped every name rule could reach it and rewrite the child's
    own report; the audit hook never reads it, and each violation has
    already gone to the parent on the alarm pipe when it is recorded here.
    """

    def __init__(self) -> None:
        self.running = False
        self.violation: Violation | None = None
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


def install_audit_hook() -> None:
    """Kept for the worker's start-up sequence: the hook is installed by :func:`arm`.

    Installing it at start-up would need an "armed" flag somewhere the code
    could reach; installing it just before the code runs needs none.
    """


def arm(
    max_files_written: int, alarm_fd: int | None = None, denied: frozenset[str] = frozenset()
) -> None:
    """Install the audit hook; from now on every blocked event raises. No way back.

    Nothing is returned and nothing keeps the hook: the only reference to it
    is the interpreter's. What it refuses reaches the parent on the alarm
    pipe (made non-blocking here, so a flood of refusals never stalls the
    hook) and the code as :class:`Stop`.
    """
    if alarm_fd is not None:
        os.set_blocking(alarm_fd, False)
    _ALARM[0] = make_alarm(alarm_fd)
    sys.addaudithook(
        guard_hook.make_hook(
            STATE.workdir,
            max_files_written,
            alarm_fd,
            denied,
            Stop,
            snippet_prefix=SNIPPET_PREFIX,
            guard_dir=os.path.dirname(os.path.abspath(__file__)),
        )
    )
