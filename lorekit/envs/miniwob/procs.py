"""Processes behind a browser, read from /proc and managed with signals (Linux).

Helpers for :mod:`.browser`: walking a process tree, telling a running
process from a zombie, summing memory, waiting for killed processes to go,
and making chromedriver and Chromium die with their parent (a parent-death
signal: ``PR_SET_PDEATHSIG`` for chromedriver, which Python starts, and
``setpriv --pdeathsig`` for Chromium, which chromedriver starts).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1


def executable(path: str | None) -> bool:
    """Whether ``path`` names an executable file."""
    return bool(path) and os.path.isfile(str(path)) and os.access(str(path), os.X_OK)


def _stat(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) from /proc, or None if the process is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])


def running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (dead, waiting to be reaped)."""
    found = _stat(pid)
    return found is not None and found[0] not in ("Z", "X")


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc; Linux)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (found := _stat(int(entry.name))) is not None:
            children.setdefault(found[1], []).append(int(entry.name))
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        out.append(child)
        todo += children.get(child, [])
    return out


prctl: Any = None
with contextlib.suppress(OSError, AttributeError):
    prctl = ctypes.CDLL(None, use_errno=True).prctl


def die_with_parent() -> None:
    """In the forked chromedriver, before exec: SIGKILL me when my parent thread ends."""
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def chromium_launcher(chromium: str) -> str:
    """A tiny script that execs Chromium with a parent-death signal set
    (``setpriv --pdeathsig KILL``): chromedriver starts Chromium, so only a
    wrapper can set it. Chromium's helpers exit with their main process.
    Falls back to Chromium itself where ``setpriv`` or a writable temp
    directory is missing."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return chromium
    text = f'#!/bin/sh\nexec "{setpriv}" --pdeathsig KILL -- "{chromium}" "$@"\n'
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"lorekit-browser-{os.getuid()}"
    path = folder / f"chromium-{digest}.sh"
    try:
        if executable(str(path)) and path.read_text() == text:
            return str(path)
        folder.mkdir(mode=0o700, exist_ok=True)
        if os.statvfs(folder).f_flag & os.ST_NOEXEC:
            return chromium  # a script there could not be run
        partial = folder / f".{digest}.{os.getpid()}.{threading.get_ident()}"
        partial.write_text(text)
        partial.chmod(0o755)
        os.replace(partial, path)
    except OSError:
        return chromium
    return str(path)


def pss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def wait_gone(pids: list[int], within: float) -> None:
    """Until none of ``pids`` runs (SIGKILL is delivered asynchronously), so
    that after :meth:`Browser.kill` no process of the browser is left."""
    deadline = time.monotonic() + within
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.01)


def parent(pid: int) -> int | None:
    found = _stat(pid)
    return found[1] if found else None
