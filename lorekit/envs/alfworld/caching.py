"""Caches of the ALFWorld engine: per process (bounded, shared by threads) and, for
groundings, on disk across processes."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import tempfile
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from lorekit.cachedir import disk_cache_disabled, user_cache_dir

#: Games whose grounding, parsed grammar and command texts are kept per process
#: (least recently used first out); see docs/alfworld.md "Speed" for the memory.
TRANSLATION_CACHE_SIZE = 64

_lock = threading.Lock()
_T = TypeVar("_T")


def cached(cache: OrderedDict[str, _T], key: str, build: Callable[[], _T]) -> _T:
    """``cache[key]``, built on a miss, keeping the newest ``TRANSLATION_CACHE_SIZE``."""
    with _lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = build()  # outside the lock: two threads may build the same entry once each
    with _lock:
        cache[key] = value
        while len(cache) > TRANSLATION_CACHE_SIZE:
            cache.popitem(last=False)
    return value


def digest(*texts: str) -> str:
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()


class DiskTexts:
    """Texts kept across processes, one compressed file per key, under the user's cache
    folder (:func:`lorekit.cachedir.user_cache_dir`).

    For what is slow to make, fully determined by its key, and needed again in other
    processes: every ALFWorld episode that plays in a child process of its own would
    otherwise ground its game's PDDL again. A file is written to a temporary name and
    renamed, so a reader (another worker, a crash half-way) sees a whole file or none; a
    file that does not decompress is deleted and made again. Past ``max_bytes`` the
    least recently used files go first. Nothing is kept where the folder cannot be
    written, or when ``LOREKIT_NO_DISK_CACHE=1``.
    """

    def __init__(self, name: str, max_bytes: int) -> None:
        self.name = name
        self.max_bytes = max_bytes

    @property
    def folder(self) -> Path:
        return user_cache_dir(self.name)

    def get(self, key: str, make: Callable[[], str]) -> str:
        """The text under ``key``, made by ``make`` (and kept) when it is not there."""
        if disk_cache_disabled():
            return make()
        path = self.folder / f"{key}.gz"
        try:
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
        except FileNotFoundError:
            pass
        except (OSError, EOFError, UnicodeDecodeError, zlib.error):  # torn or foreign: made again
            with contextlib.suppress(OSError):
                path.unlink()
        else:
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: pruned last
            return text
        text = make()
        self._put(path, text)
        return text

    def _put(self, path: Path, text: str) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".gz")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(gzip.compress(text.encode("utf-8"), compresslevel=5, mtime=0))
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            self._prune()
        except OSError:  # read-only, full or missing home: the cache is only an optimisation
            return

    def _prune(self) -> None:
        entries = []
        for item in self.folder.glob("*.gz"):
            with contextlib.suppress(OSError):
                stat = item.stat()
                entries.append((stat.st_mtime, stat.st_size, item))
        total = sum(size for _, size, _ in entries)
        for _, size, item in sorted(entries, key=lambda e: e[0]):
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                item.unlink()
            total -= size
