"""A session fixture's value shared by the suite's pytest-xdist workers."""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def shared_value(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], T]) -> T:
    """A session fixture's value made once for every pytest-xdist worker (README's test
    command runs two): the first worker that asks makes it under a lock, in a folder the
    workers share, and pickles it; the others wait for the lock and read it back. Without
    xdist it is made once, as any session fixture."""
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # pytest-N/, above each worker's popen-gwK/
    folder = root / f"shared-{name}"
    folder.mkdir(exist_ok=True)
    saved = folder / "value.pickle"
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if saved.is_file():
            value: T = pickle.loads(saved.read_bytes())
            return value
        value = make(folder)
        saved.write_bytes(pickle.dumps(value))
        return value
