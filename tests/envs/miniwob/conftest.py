"""MiniWoB++ tests drive a real headless Chromium.

Without Chromium they are skipped, except under CI (``CI`` set), where
``.ci/run`` installs it and a missing browser must fail loudly. At the end of
the session no Chromium process may be left.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from lorekit.envs.miniwob.browser import BrowserMissing, find_browser, kill_all


def _browser_missing() -> str | None:
    try:
        find_browser()
    except BrowserMissing as error:
        return str(error)
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    problem = _browser_missing()
    if problem is None or os.environ.get("CI"):
        return
    skip = pytest.mark.skip(reason=f"MiniWoB++ needs a browser: {problem}")
    for item in items:
        if "tests/envs/miniwob/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)


def chromium_processes() -> list[int]:
    """Live (not zombie) Chromium and chromedriver processes on this machine."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        state = stat[stat.rindex(")") + 2]
        if state != "Z" and name.startswith(("chromium", "chromedriver", "chrome")):
            found.append(int(entry))
    return found


@pytest.fixture(scope="session", autouse=True)
def _no_browser_left_behind() -> Iterator[None]:
    before = set(chromium_processes())
    yield
    kill_all()
    deadline = time.monotonic() + 5
    while set(chromium_processes()) - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not set(chromium_processes()) - before, "Chromium processes outlived the tests"
