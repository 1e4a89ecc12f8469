"""One writer per run: a lock beside the run store, held while a process writes a run.

Two processes on the same ``--run-id`` used to both play it: each resumed the
episodes the other had not committed yet, so calls were billed twice and, for an
AutoManual build, rules and library rows were written twice. A run is now locked
by the process that writes it, and a second one is refused with who holds it
(pid, host, since when, its command line).

Why an ``fcntl`` record lock on a small file, not a row in the store: the
operating system releases it when its process dies, however it dies (``kill -9``,
a crash, a power cut of a container), so a lock can never outlive its writer, and
resuming after a kill needs no "is that pid still alive?" guess (a pid may be
reused). The file also holds the holder's description as JSON, for the message;
a file left by a killed process is therefore stale by construction and simply
taken over. Record locks belong to a process, so the same process may take the
same lock again (the lock is counted and released with its last holder), and a
child process does not inherit it.

Where ``fcntl`` locks do not work (some network filesystems answer ``ENOLCK``),
the holder written in the file decides: a live process on this host holds it,
anything else is stale.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from lorekit.eval.store_schema import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locking, only the holder file
    fcntl = None  # type: ignore[assignment]

_BUSY = (errno.EACCES, errno.EAGAIN)


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a lock: enough to find the process and tell what it is doing."""

    pid: int
    host: str
    since: float
    command: str

    def describe(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"pid {self.pid} on {self.host}, since {when}: {self.command}"

    @classmethod
    def me(cls) -> Holder:
        command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else "python"
        return cls(os.getpid(), socket.gethostname(), time.time(), command[:300])

    @classmethod
    def parse(cls, raw: bytes) -> Holder | None:
        try:
            data = json.loads(raw.decode("utf-8"))
            return cls(
                int(data["pid"]), str(data["host"]), float(data["since"]), str(data["command"])
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


class RunLockedError(Exception):
    """Another process writes this run (or this output) now; the message says who."""

    def __init__(self, what: str, holder: Holder | None, hint: str) -> None:
        self.holder = holder
        who = holder.describe() if holder is not None else "a process that did not say who it is"
        super().__init__(f"{what} is being written by another process ({who}); {hint}")


_held: dict[str, tuple[int, int]] = {}  # lock file -> (fd, how many holders in this process)
_guard = threading.Lock()


def lock_path_for(store: Path, run_id: str) -> Path:
    """The lock file of ``run_id`` in ``store``: beside it, named by a hash of the id
    (run ids of older stores may hold any character)."""
    digest = hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return store.with_name(f"{store.name}.lock-{digest}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(fd: int) -> Holder | None:
    try:
        return Holder.parse(os.pread(fd, 4096, 0))
    except OSError:
        return None


def _write(fd: int, holder: Holder) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(asdict(holder)).encode("utf-8"), 0)


def acquire(path: Path, what: str, hint: str) -> Holder | None:
    """Take the lock file ``path`` for this process, or raise :class:`RunLockedError`.

    Returns the holder a killed process left in the file (the lock was stale and
    is now ours), else None. ``what`` and ``hint`` word the refusal."""
    key = os.path.abspath(path)
    with _guard:
        if key in _held:
            fd, count = _held[key]
            _held[key] = (fd, count + 1)
            return None
        for _ in range(20):  # another process may unlink the file between open and lock
            fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                if not _lock(fd):
                    holder = _read(fd)
                    raise RunLockedError(what, holder, hint)
                if not _same_file(fd, key):
                    os.close(fd)
                    continue
                stale = _read(fd)
                _write(fd, Holder.me())
            except BaseException:
                os.close(fd)
                raise
            _held[key] = (fd, 1)
            return stale
    raise RunLockedError(what, None, hint)  # pragma: no cover - the file kept vanishing


def _lock(fd: int) -> bool:
    """True when this process now holds the record lock of ``fd``, False when another does."""
    if fcntl is None:  # pragma: no cover
        return _holder_file_says_free(fd)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in _BUSY:
            return False
        if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
            return _holder_file_says_free(fd)
        raise
    return True


def _holder_file_says_free(fd: int) -> bool:
    """Without record locks: free unless a live process on this host wrote the file."""
    holder = _read(fd)
    if holder is None or holder.pid == os.getpid():
        return True
    return holder.host != socket.gethostname() or not _alive(holder.pid)


def _same_file(fd: int, path: str) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)


def release(path: Path) -> None:
    """Give back one hold of ``path``; the last one removes the file and the lock."""
    key = os.path.abspath(path)
    with _guard:
        if key not in _held:
            return
        fd, count = _held[key]
        if count > 1:
            _held[key] = (fd, count - 1)
            return
        del _held[key]
        with contextlib.suppress(OSError):
            os.unlink(key)  # while still locked: nobody can take a file on its way out
        os.close(fd)


def holder(path: Path) -> Holder | None:
    """Who holds ``path`` now (this process included), or None when nobody does."""
    key = os.path.abspath(path)
    with _guard:
        if key in _held:
            return _read(_held[key][0])
        try:
            fd = os.open(key, os.O_RDONLY)  # a reader may not be allowed to write here
        except OSError:
            return None  # no file: nobody holds it
        try:
            if fcntl is None:  # pragma: no cover
                return None if _holder_file_says_free(fd) else _read(fd)
            try:  # a shared lock is refused while a writer holds its exclusive one
                fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in _BUSY:
                    return _read(fd) or Holder(0, "?", 0.0, "?")
                return None if _holder_file_says_free(fd) else _read(fd)
            fcntl.lockf(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)


class RunLocking:
    """The run store's side of the locks (a mixin of :class:`~lorekit.eval.store.RunStore`).

    The host sets ``path``, ``readonly``, ``_lock``, ``_run_locks`` (a set) and
    ``last_writer`` (a dict) in its ``__init__``, and calls :meth:`_release_runs`
    when it closes."""

    path: Path
    readonly: bool
    _lock: threading.RLock
    _run_locks: set[str]
    last_writer: dict[str, Holder]
    """Runs whose lock was taken over from a killed process, and that process."""

    def lock_run(self, run_id: str) -> None:
        """Make this process the one writer of ``run_id`` until the store closes, or
        raise :class:`RunLockedError` naming the process that is.

        ``create_run`` takes it, so every command that plays a run holds it; one
        that writes a run otherwise (deleting it, say) takes it itself. A lock left
        by a killed process is stale and taken over (``last_writer`` names it)."""
        if self.readonly:
            raise StoreError(f"the run store {self.path} was opened read-only")
        with self._lock:
            if run_id in self._run_locks:
                return
            stale = acquire(
                lock_path_for(self.path, run_id),
                f"run {run_id!r} in {self.path}",
                "let it finish or stop it, then run the same command again to resume",
            )
            self._run_locks.add(run_id)
            if stale is not None:
                self.last_writer[run_id] = stale

    def _release_runs(self, *run_ids: str) -> None:
        """Give back the locks of ``run_ids`` (all this store holds when none are named)."""
        with self._lock:
            for run_id in sorted(run_ids or self._run_locks):
                if run_id in self._run_locks:
                    self._run_locks.discard(run_id)
                    release(lock_path_for(self.path, run_id))
