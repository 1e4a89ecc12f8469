"""In-child defences: syntax check, restricted builtins, import views, audit hook.

This module runs inside the sandbox worker, loaded by ``child.py`` as a plain
top-level module, so it imports the standard library only. The layers, from
the outside in:

1. ``check_tree`` rejects syntax that reaches interpreter internals
   (``x.__class__``, ``gen.gi_frame``, format strings that walk attributes).
2. The code gets a builtins dict without ``eval``/``exec``/``compile``/``vars``,
   with a guarded ``getattr``, an ``open`` confined to the work dir and an
   ``__import__`` that hands out filtered *views* of allowlisted modules.
3. An audit hook, armed just before untrusted code runs and never disarmed,
   blocks the effects that matter even if layers 1-2 are bypassed: files
   outside the work dir, sockets, processes, signals, ctypes, new imports.

Every violation raises :class:`Stop` (a ``BaseException``, so ``except
Exception`` does not swallow it) and is recorded in ``STATE.violation``; the
first one recorded is what the run reports, even if the code caught it.
"""

from __future__ import annotations

import ast
import os
import string
import sys
import types
from collections.abc import Callable
from typing import Any

SNIPPET_PREFIX = "<sandbox:"
ALLOWED_DUNDERS = frozenset({"__init__", "__name__", "__doc__", "__qualname__"})
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
    "code.__new__",
    "function.__new__",
    "sys.addaudithook",
    "sys.setprofile",
    "sys.settrace",
    "sys._current_frames",
    "sys.monitoring",
    "builtins.input",
    "setopencode",
)
_BLOCKED_FROM_SNIPPET = ("exec", "compile", "sys._getframe", "object.__getattr__")
_LAZY_IMPORTS = ("encodings.",)
# Modules C code imports through the *calling frame's* ``__import__`` (e.g.
# ``datetime.strptime``); code itself cannot name them: the syntax check
# rejects importing any name with a leading underscore.
_C_LAZY_IMPORTS = frozenset({"_strptime"})
_STDLIB_DIR = os.path.dirname(os.__file__)


class Stop(BaseException):
    """Raised at the code when it hits a policy or limit; carries the kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class State:
    """Mutable state of the one job this worker runs."""

    def __init__(self) -> None:
        self.armed = False
        self.running = False
        self.in_hook = False
        self.violation: tuple[str, str, int | None, str | None] | None = None
        self.workdir = os.getcwd()
        self.files_written = 0
        self.max_files_written = 16


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
    return Stop(kind, message)


# ---------------------------------------------------------------- syntax check


def _bad_attribute(name: str, denied: frozenset[str]) -> bool:
    return (name.startswith("__") and name not in ALLOWED_DUNDERS) or name in denied


def _format_is_plain(template: str) -> bool:
    """True when no replacement field walks attributes or indexes (``{0.x}``)."""
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError:
        return True  # str.format will raise on it anyway, touching nothing
    for _, field, spec, _ in parts:
        if field and ("." in field or "[" in field):
            return False
        if spec and "{" in spec and not _format_is_plain(spec):
            return False
    return True


def check_tree(tree: ast.AST, denied: frozenset[str]) -> tuple[int, str] | None:
    """First construct (in source order) the policy rejects, as (line, reason)."""
    problems = []
    for node in ast.walk(tree):
        reason = _check_node(node, denied)
        if reason is not None:
            where = (getattr(node, "lineno", 0), getattr(node, "end_col_offset", 0) or 0)
            problems.append((*where, reason))
    if not problems:
        return None
    line, _, reason = min(problems)
    return line, reason


def _check_node(node: ast.AST, denied: frozenset[str]) -> str | None:
    if isinstance(node, ast.Attribute):
        if node.attr in ("format", "format_map"):
            receiver = node.value
            if (
                isinstance(receiver, ast.Constant)
                and isinstance(receiver.value, str)
                and _format_is_plain(receiver.value)
            ):
                return None
            return (
                f"'.{node.attr}' is only allowed on a string literal without "
                "attribute or index lookups; use an f-string"
            )
        if _bad_attribute(node.attr, denied):
            return f"access to attribute {node.attr!r} is not allowed"
    elif isinstance(node, ast.Name):
        if node.id.startswith("__") and node.id not in ALLOWED_DUNDERS:
            return f"use of name {node.id!r} is not allowed"
    elif isinstance(node, ast.Import):
        for alias in node.names:
            if any(part.startswith("_") for part in alias.name.split(".")):
                return f"importing private module {alias.name!r} is not allowed"
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            return "relative imports are not allowed"
        if any(part.startswith("_") for part in (node.module or "").split(".")):
            return f"importing from private module {node.module!r} is not allowed"
        for alias in node.names:
            if alias.name.startswith("_"):
                return f"importing private name {alias.name!r} is not allowed"
    elif isinstance(node, ast.MatchClass):
        for attr in node.kwd_attrs:
            if _bad_attribute(attr, denied):
                return f"matching on attribute {attr!r} is not allowed"
    return None


# ---------------------------------------------------------------- module views


class ModuleView:
    """A snapshot of a module's public, non-module names handed to the code."""

    def __init__(self, name: str, attrs: dict[str, Any]) -> None:
        self.__dict__.update(attrs)
        self.__dict__["__name__"] = name

    def __repr__(self) -> str:
        return f"<module {self.__dict__['__name__']!r} (sandbox view)>"


def build_views(allowed: list[str], hidden: dict[str, list[str]]) -> dict[str, ModuleView]:
    """Views of every allowlisted (already imported) module, keyed by full name."""
    views: dict[str, ModuleView] = {}
    for full in sorted(allowed, key=lambda n: n.count(".")):
        module = sys.modules.get(full)
        if module is None:
            continue
        skip = set(hidden.get(full, ()))
        attrs = {
            key: value
            for key, value in vars(module).items()
            if not key.startswith("_")
            and key not in skip
            and not isinstance(value, types.ModuleType)
        }
        views[full] = ModuleView(full, attrs)
    for full, view in views.items():  # allowlisted submodules become attributes
        parent, _, leaf = full.rpartition(".")
        if parent in views:
            setattr(views[parent], leaf, view)
    return views


def make_import(views: dict[str, ModuleView]) -> Callable[..., ModuleView]:
    """An ``__import__`` that only returns views of allowlisted modules."""
    allowed = ", ".join(sorted(views))

    def guarded_import(
        name: str,
        globals: object = None,
        locals: object = None,
        fromlist: object = (),
        level: int = 0,
    ) -> ModuleView:
        if level != 0:
            raise stop("ForbiddenImport", "relative imports are not allowed")
        if name in _C_LAZY_IMPORTS and name in sys.modules:
            return sys.modules[name]  # type: ignore[return-value]
        if name not in views:
            raise stop("ForbiddenImport", f"import of {name!r} is not allowed (allowed: {allowed})")
        if fromlist:
            return views[name]
        return views[name.partition(".")[0]]

    return guarded_import


# ---------------------------------------------------------------- builtins

_REMOVED_BUILTINS = (
    "eval",
    "exec",
    "compile",
    "vars",
    "globals",
    "locals",
    "input",
    "breakpoint",
    "help",
    "__loader__",
    "__spec__",
    "__package__",
)


def _unavailable(name: str) -> Callable[..., None]:
    def stub(*args: object, **kwargs: object) -> None:
        raise stop("ForbiddenOperation", f"{name}() is not available in the sandbox")

    stub.__name__ = name
    return stub


def _inside_workdir(path: object) -> str | None:
    """The absolute path if ``path`` names something inside the work dir."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return None
    full = os.path.normpath(os.path.join(STATE.workdir, path))
    if full == STATE.workdir or full.startswith(STATE.workdir + os.sep):
        return full
    return None


def make_builtins(
    views: dict[str, ModuleView], denied: frozenset[str], printer: Callable[..., None]
) -> dict[str, Any]:
    """The builtins dict of sandboxed code."""
    import builtins

    real_open = builtins.open
    safe: dict[str, Any] = {k: v for k, v in vars(builtins).items() if k not in _REMOVED_BUILTINS}

    def check_name(name: object) -> str:
        if not isinstance(name, str):
            raise TypeError("attribute name must be a string")
        if _bad_attribute(name, denied):
            raise stop("ForbiddenOperation", f"access to attribute {name!r} is not allowed")
        return name

    def guarded_getattr(obj: object, name: str, *default: object) -> object:
        return getattr(obj, check_name(name), *default)

    def guarded_hasattr(obj: object, name: str) -> bool:
        return hasattr(obj, check_name(name))

    def guarded_setattr(obj: object, name: str, value: object) -> None:
        setattr(obj, check_name(name), value)

    def guarded_delattr(obj: object, name: str) -> None:
        delattr(obj, check_name(name))

    def guarded_open(file: object, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        full = _inside_workdir(file)
        if full is None:
            raise stop(
                "ForbiddenOperation",
                f"open({file!r}) is outside the sandbox's working directory",
            )
        return real_open(full, mode, *args, **kwargs)

    for name in _REMOVED_BUILTINS:
        if not name.startswith("_"):
            safe[name] = _unavailable(name)
    safe.update(
        getattr=guarded_getattr,
        hasattr=guarded_hasattr,
        setattr=guarded_setattr,
        delattr=guarded_delattr,
        open=guarded_open,
        print=printer,
        __import__=make_import(views),
    )
    return safe


# ---------------------------------------------------------------- audit hook


def _caller_is_snippet() -> bool:
    frame = sys._getframe(3)  # 0: this, 1: _check_event, 2: _hook, 3: the trigger
    return frame is not None and frame.f_code.co_filename.startswith(SNIPPET_PREFIX)


def _check_event(event: str, args: tuple[Any, ...]) -> None:
    if event == "open":
        path, mode, flags = args[0], args[1], args[2]
        readonly = (
            not set(mode) & set("wax+")
            if isinstance(mode, str)
            else not (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR))
        )
        if _inside_workdir(path) is not None:
            if not readonly:
                STATE.files_written += 1
                if STATE.files_written > STATE.max_files_written:
                    limit = STATE.max_files_written
                    raise stop("ForbiddenOperation", f"more than {limit} files opened for writing")
            return
        if readonly and isinstance(path, str) and path.startswith(_STDLIB_DIR + os.sep):
            return  # lazy stdlib imports (codecs) read their own source
        raise stop("ForbiddenOperation", f"file access outside the sandbox: {path!r}")
    if event == "import":
        name = str(args[0])
        if name.startswith(_LAZY_IMPORTS):
            return
        raise stop("ForbiddenImport", f"loading module {name!r} is not allowed")
    if event.startswith(_ALWAYS_BLOCKED) or event in _ALWAYS_BLOCKED:
        raise stop("ForbiddenOperation", f"operation {event!r} is not allowed in the sandbox")
    if event in _BLOCKED_FROM_SNIPPET and _caller_is_snippet():
        detail = f" ({args[1]!r})" if event == "object.__getattr__" else ""
        raise stop("ForbiddenOperation", f"operation {event!r}{detail} is not allowed")


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not STATE.armed or STATE.in_hook:
        return
    STATE.in_hook = True
    try:
        _check_event(event, args)
    finally:
        STATE.in_hook = False


def install_audit_hook() -> None:
    """Install the hook (inert until :func:`arm`); it can never be removed."""
    sys.addaudithook(_hook)


def arm() -> None:
    """From now on every blocked event raises. There is no way back."""
    STATE.armed = True
