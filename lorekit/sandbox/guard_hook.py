"""The audit hook: the in-process guard's backstop, with no state to switch off.

Loaded inside the sandbox worker next to ``guard.py`` (standard library
only). The hook is what still holds when every other in-process check has
been bypassed and the code holds real objects (a module, a frame, the real
``getattr``). It therefore keeps nothing the code could change:

- it is one function, built by :func:`make_hook` and handed straight to
  ``sys.addaudithook``; nothing else keeps a reference to it, so its closure
  cells cannot be reached (``gc`` is blocked, the interpreter does not list
  its hooks);
- its frame *can* be reached (a signal handler is given the frame it
  interrupted, ``f_back`` is never audited), so everything the frame shows
  is immutable: strings, numbers, frozensets, tuples, builtin functions and
  two ``itertools.count`` objects that can only be advanced (which tightens
  the file cap or adds an alarm record, nothing else); no Python function,
  list, dict or set, and no global lookups (its module's dict is reachable
  through any of its frames);
- it has no "busy" flag. It raises audit events itself (``sys._getframe``
  and reads of ``f_code``) and recognises those by what they are: a
  ``sys._getframe`` that returns one of its own frames, an attribute read
  made by one of its own frames. Any event anybody else raises meanwhile,
  a finaliser or a signal handler running inside the hook included, is
  judged like every other.

A refused event is written to the alarm pipe (every time: there is no
"already sounded" state to forget) and raised at the code as the guard's
``Stop``.
"""

from __future__ import annotations

import itertools
import os
import sys
import types
from collections.abc import Callable
from typing import Any

Hook = Callable[[str, tuple[Any, ...]], None]

#: Event name prefixes refused whoever raises them.
BLOCKED = (
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
TRUSTED_ONLY = frozenset({"object.__getattr__", "object.__setattr__", "object.__delattr__"})
#: Events the code may not raise itself (the standard library may).
BLOCKED_FROM_SNIPPET = frozenset({"exec", "compile", "sys._getframe"})
#: Names that code the standard library generates at run time (dataclasses,
#: namedtuple, typing) uses; any other dunder in such code is refused.
GENERATED_DUNDERS = frozenset(
    {
        "__class__",
        "__create_fn__",
        "__delattr__",
        "__post_init__",
        "__setattr__",
        "__init__",
        "__name__",
        "__doc__",
        "__qualname__",
    }
)
GENERATED_PRIVATE = frozenset({"_tuple_new"})
#: Names generated code never needs: builtins that reach past the guard and
#: everything that evaluates attribute paths from strings (format strings
#: walk ``{0.__globals__}`` in C, with no event to refuse).
GENERATED_DENIED = frozenset(
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
        "format",
        "format_map",
        "vformat",
        "attrgetter",
        "methodcaller",
        "Formatter",
        "get_type_hints",
        "ForwardRef",
    }
)
INERT_READS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
PLAIN_WRITES = frozenset(
    {"__doc__", "__name__", "__qualname__", "__module__", "__defaults__", "__kwdefaults__"}
)
LAZY_IMPORTS = ("encodings.",)


def make_hook(
    workdir: str,
    max_files_written: int,
    alarm_fd: int | None,
    denied: frozenset[str],
    stop: Callable[[str, str], BaseException],
    *,
    snippet_prefix: str,
    guard_dir: str,
) -> Hook:
    """The audit hook of one worker (see the module docstring).

    ``denied`` are the policy's denied attribute names, refused in generated
    code too; ``stop(kind, message)`` builds the exception raised at the code.
    Every value the hook uses is bound here, once, to a local of this
    function: the hook's own code never looks up a global or a builtin.
    """
    getframe = sys._getframe
    write, write_failed = os.write, OSError
    own_globals = globals()
    t_type, t_str, t_bytes, t_int = type, str, bytes, int
    t_code, t_frame, t_tuple, t_slice = types.CodeType, types.FrameType, tuple, slice
    t_len, t_sorted, t_set, t_next, t_repr, is_sub = len, sorted, set, next, repr, issubclass
    as_str, starts, split, replace = str.__str__, str.startswith, str.split, str.replace
    join, encode, decode, copy_bytes = str.join, str.encode, bytes.decode, bytes.__getitem__
    type_name = type.__dict__["__name__"].__get__
    files = itertools.count(1)
    fd = -1 if alarm_fd is None else alarm_fd
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    stdlib_prefix = os.path.dirname(os.__file__) + os.sep
    guard_prefix = guard_dir.rstrip(os.sep) + os.sep
    inside_prefix = workdir.rstrip("/") + "/"
    root = workdir.rstrip("/") or "/"
    blocked, lazy_imports = BLOCKED, LAZY_IMPORTS
    trusted_only, from_snippet = TRUSTED_ONLY, BLOCKED_FROM_SNIPPET
    generated_ok, generated_private = GENERATED_DUNDERS, GENERATED_PRIVATE
    generated_denied = GENERATED_DENIED | frozenset(denied)
    inert_reads, plain_writes = INERT_READS, PLAIN_WRITES
    prefix, prefix_len = snippet_prefix, len(snippet_prefix)

    # Scratch values below are tuples and strings, rebound, never mutated: a
    # signal handler that gets this frame sees its locals but cannot edit them.
    def hook(event: str, args: tuple[Any, ...]) -> None:
        # (a) our own sys._getframe(0) below: the frame it returns is ours
        if (
            event == "sys._getframe"
            and t_len(args) == 1
            and t_type(args[0]) is t_frame
            and args[0].f_globals is own_globals
        ):
            return
        kind = ""
        message = ""
        if event == "open":
            path, flags = args[0], args[2]
            writes = not (t_type(flags) is t_int and not flags & write_flags)
            # where the path points, with str methods only (no subclass can lie)
            given = t_type(path)
            text: Any = None
            if given is t_str or given is t_bytes:
                text = path
            elif is_sub(given, t_str):
                text = as_str(path)
            elif is_sub(given, t_bytes):
                text = copy_bytes(path, t_slice(None))
            if t_type(text) is t_bytes:
                text = decode(text, "utf-8", "surrogateescape")
            full = None
            if text is not None and "\x00" not in text:
                if not starts(text, "/"):
                    text = inside_prefix + text
                parts: tuple[str, ...] = ()
                for part in t_tuple(split(text, "/")):
                    if part == "" or part == ".":
                        continue
                    parts = parts[:-1] if part == ".." else (*parts, part)
                full = "/" + join("/", parts)
            if full is not None and (full == root or starts(full, inside_prefix)):
                if not writes or t_next(files) <= max_files_written:
                    return
                kind = "ForbiddenOperation"
                message = f"more than {max_files_written} files opened for writing"
            elif (
                not writes
                and given is t_str
                and starts(path, stdlib_prefix)
                and ".." not in t_tuple(split(path, "/"))
            ):
                return  # lazy stdlib imports (codecs) read their own source
            else:
                plain = given is t_str or given is t_bytes or given is t_int
                what = t_repr(path) if plain else type_name(given)
                kind, message = "ForbiddenOperation", f"file access outside the sandbox: {what}"
        elif event == "import":
            name = args[0] if t_type(args[0]) is t_str else "?"
            if starts(name, lazy_imports):
                return
            kind, message = "ForbiddenImport", f"loading module {name!r} is not allowed"
        elif starts(event, blocked):
            kind, message = "ForbiddenOperation", f"operation {event!r} is not allowed"
        caller = getframe(0).f_back
        if not kind:
            filename = ""
            if caller is not None:
                # (b) our own reads of frames (f_code below and in the alarm's walk)
                if caller.f_globals is own_globals and event == "object.__getattr__":
                    return
                filename = caller.f_code.co_filename
            if t_type(filename) is not t_str:
                filename = ""
            if starts(filename, guard_prefix):
                return  # the worker's own code (guard, child)
            snippet = starts(filename, prefix)
            if event in from_snippet and snippet:
                kind, message = "ForbiddenOperation", f"operation {event!r} is not allowed"
            elif event in trusted_only:
                name = args[1] if t_len(args) > 1 and t_type(args[1]) is t_str else "?"
                if event == "object.__getattr__":
                    if not snippet and name in inert_reads:
                        return  # e.g. dataclasses reads __code__; a code object alone runs nothing
                elif name in plain_writes:
                    return  # dataclasses and functools set a class's or function's __doc__
                kind = "ForbiddenOperation"
                message = f"operation {event!r} ({name!r}) is not allowed"
            elif event == "compile":
                name = args[1] if t_len(args) > 1 and t_type(args[1]) is t_str else ""
                if not (starts(name, guard_prefix) or starts(name, prefix)):
                    return
                kind, message = "ForbiddenOperation", "compiling under a sandbox file name"
            elif event == "exec" and args and t_type(args[0]) is t_code:
                bad: tuple[str, ...] = ()
                todo: tuple[Any, ...] = (args[0],)
                while todo:
                    item, todo = todo[-1], todo[:-1]
                    for name in item.co_names:
                        if t_type(name) is not t_str:
                            continue
                        dunder = starts(name, "__")
                        if (
                            (dunder and name not in generated_ok)
                            or (not dunder and starts(name, "_") and name not in generated_private)
                            or name in generated_denied
                        ):
                            bad = (*bad, name)
                    for const in item.co_consts:
                        if t_type(const) is t_code:
                            todo = (*todo, const)
                if not bad:
                    return
                kind = "ForbiddenOperation"
                message = f"code generated at run time may not use {t_sorted(t_set(bad))}"
            else:
                return
        # refused: tell the parent (every time), then stop the code
        line = None
        where = ""
        frame = caller
        while frame is not None:
            name = frame.f_code.co_filename
            if t_type(name) is t_str and starts(name, prefix):
                line, where = frame.f_lineno, name[prefix_len:-1]
                break
            frame = frame.f_back
        if fd >= 0:
            shown = replace(replace(message, "\n", " "), "\t", " ")
            place = replace(replace(where, "\n", " "), "\t", " ")
            number = "" if line is None else t_str(line)
            record = kind + "\t" + number + "\t" + place + "\t" + shown
            try:  # noqa: SIM105 (no contextlib inside the hook)
                write(fd, encode(record[:1000], "utf-8", "replace") + b"\n")
            except write_failed:
                pass  # a full pipe: the first records are what the parent reads
        raise stop(kind, message)

    return hook
