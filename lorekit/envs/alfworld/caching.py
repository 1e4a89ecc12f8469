"""Per-process caches of the ALFWorld engine, bounded and shared by threads."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

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
