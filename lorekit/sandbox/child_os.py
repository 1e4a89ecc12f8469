"""The worker's OS-facing pieces, loaded by ``child.py`` from this directory.

Standard library only, like the rest of the worker: the raw facts about the
process's confinement that the parent checks, the old network-namespace step
for workers started without the OS layer, and the unguarded test hook.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any


def enter_network_namespace() -> bool:
    """Best effort: an empty network namespace (root on Linux only)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.unshare(0x40000000)) == 0  # CLONE_NEWNET
    except Exception:
        return False


def confine_signals(spec: Any) -> bool:
    """Stack a seccomp filter that lets tgkill(2) reach only this process.

    The main filter (bwrap's) limits ``kill`` to the worker's own process
    group and refuses ``tkill`` and the queued-signal calls; ``tgkill`` is
    what ``raise()``/``abort()`` use, so it stays, but only with this
    process's own pid, known only now (inside the PID namespace). Classic
    BPF, eight instructions; seccomp filters stack, so this only narrows.
    """
    if not isinstance(spec, dict) or not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        import struct

        arch, tgkill = int(spec["arch"]), int(spec["tgkill"])
        arg0 = 16 if sys.byteorder == "little" else 20  # low half of args[0]
        allow, eperm = 0x7FFF0000, 0x00050000 | 1
        ld, jeq, ret = 0x20, 0x15, 0x06
        program = [
            (ld, 0, 0, 4),  # seccomp_data.arch
            (jeq, 0, 5, arch),
            (ld, 0, 0, 0),  # seccomp_data.nr
            (jeq, 0, 3, tgkill),
            (ld, 0, 0, arg0),  # tgkill's tgid
            (jeq, 1, 0, os.getpid()),
            (ret, 0, 0, eperm),
            (ret, 0, 0, allow),
        ]
        code = b"".join(struct.pack("=HBBI", *insn) for insn in program)
        buffer = ctypes.create_string_buffer(code, len(code))

        class Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        prog = Prog(len(program), ctypes.addressof(buffer))
        libc = ctypes.CDLL(None, use_errno=True)
        # PR_SET_SECCOMP, SECCOMP_MODE_FILTER (no_new_privs is already set)
        return int(libc.prctl(22, 2, ctypes.byref(prog), 0, 0)) == 0
    except Exception:
        return False


def watch_signals(fd: object) -> None:
    """Have the C-level signal handler write each signal's number to ``fd``.

    The parent reads it if the worker dies without reporting: a SIGXCPU seen
    there means RLIMIT_CPU's soft limit passed, even when the code was stuck
    in C and no Python handler ran (``exits.py``).
    """
    if isinstance(fd, int):
        try:
            os.set_blocking(fd, False)
            signal.set_wakeup_fd(fd, warn_on_full_buffer=False)
        except (OSError, ValueError):
            pass


def confinement_facts() -> dict[str, Any]:
    """Raw facts about this process's isolation, for the parent to judge.

    The worker reports values, never conclusions: the parent compares the
    namespace ids with its own and checks uid, capabilities, no_new_privs
    and the seccomp mode itself.
    """
    facts: dict[str, Any] = {"uid": os.getuid(), "ns": {}}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key == "CapEff":
                    facts["cap_eff"] = value.strip()
                elif key == "NoNewPrivs":
                    facts["no_new_privs"] = int(value)
                elif key == "Seccomp":
                    facts["seccomp"] = int(value)
        for name in ("user", "pid", "net", "mnt", "ipc", "uts"):
            facts["ns"][name] = os.readlink(f"/proc/self/ns/{name}")
        facts["work_inodes"] = os.statvfs("/work").f_files
    except (OSError, ValueError):
        pass
    return facts


def run_unguarded(job: dict[str, Any], set_limits: Callable[..., None]) -> dict[str, Any]:
    """TEST HOOK: run the code with no in-process guard at all.

    Only a pool created with ``unguarded_for_tests=True`` starts workers that
    accept this, so tests can show what the OS layer alone stops: the code
    gets real builtins and can import anything. Resource limits still apply,
    except ``RLIMIT_NPROC``, so that forking works and the PID namespace is
    what must end the children.
    """
    limits = dict(job["limits"])
    set_limits(limits, allow_processes=True)
    namespace: dict[str, Any] = {"__name__": "__unguarded__"}
    lines: list[str] = []
    namespace["print"] = lambda *a, **k: lines.append(" ".join(map(str, a)) + "\n")
    error = None
    try:
        exec(compile(job["code"], "<unguarded>", "exec"), namespace)
    except BaseException as exc:
        error = {"kind": "CodeError", "message": f"{type(exc).__name__}: {exc}"[:2000]}
    output = "".join(lines)[: int(limits["max_output_chars"])]
    return {"op": "done", "output": output, "error": error}
