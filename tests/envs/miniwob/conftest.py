"""Shared fixtures for the MiniWoB++ tests (real headless Chromium).

Without Chromium the tests are skipped; under CI (where ``.ci/run`` installs
it) tests/conftest.py turns those skips into failures.

Every browser these tests start inherits a marker in its environment, so
Chromium processes can be counted per test run even while other programs on
the machine run browsers of their own. At the end of the session the shared
pool is closed and no marked Chromium may be left.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

MARK_VARIABLE = "LOREKIT_TEST_BROWSER_MARK"
MARK = f"miniwob-tests-{uuid.uuid4().hex}"
os.environ[MARK_VARIABLE] = MARK


def _browser_missing() -> str | None:
    from lorekit.envs.miniwob.browser import BrowserMissing, find_browser

    try:
        find_browser()
    except BrowserMissing as error:
        return str(error)
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    problem = _browser_missing()
    if problem is None:
        return
    skip = pytest.mark.skip(reason=f"MiniWoB++ needs a browser: {problem}")
    for item in items:
        if "tests/envs/miniwob/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)


def chromium_processes(mark: str = MARK) -> list[int]:
    """Running (not zombie) chromium/chromedriver processes whose
    environment carries ``mark``."""
    needle = f"{MARK_VARIABLE}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            environ = (entry / "environ").read_bytes()
        except (OSError, IndexError):
            continue
        if "chrom" in comm and state not in ("Z", "X") and needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def wait_for_no_chromium(mark: str = MARK, within: float = 5.0) -> list[int]:
    """Marked Chromium processes still running after up to ``within`` seconds
    (dying processes get a moment); [] when all are gone."""
    deadline = time.monotonic() + within
    while (left := chromium_processes(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.fixture(scope="session", autouse=True)
def no_chromium_left() -> Iterator[None]:
    """After all MiniWoB++ tests: the shared pool closed, no Chromium left."""
    yield
    from lorekit.envs.miniwob import pool
    from lorekit.envs.miniwob.browser import kill_all

    if pool._shared is not None:
        pool._shared.close()
    kill_all()
    left = wait_for_no_chromium()
    assert not left, f"Chromium processes left after the tests: {left}"


@pytest.fixture(scope="module")
def closes_shared_pool() -> Iterator[None]:
    """For modules whose envs use the shared browser pool (the harness's default):
    close it when the module is done, so later tests start with no browser."""
    yield
    from lorekit.envs.miniwob import pool

    if pool._shared is not None:
        pool._shared.close()
    assert not wait_for_no_chromium(), "the shared pool left Chromium running"


@pytest.fixture
def chromium_left() -> Callable[..., list[int]]:
    """``chromium_left(mark=MARK, within=5.0)``: marked Chromium processes
    still running after up to ``within`` seconds ([] when none)."""
    return wait_for_no_chromium


@pytest.fixture
def browser_mark() -> tuple[str, str]:
    """(variable, value) of this run's marker, for subprocesses to replace."""
    return MARK_VARIABLE, MARK
