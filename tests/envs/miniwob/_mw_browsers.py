"""Browser pools for tests that remember every process they started, to prove none is left.

Counting ``pgrep chromium`` would see other test runs on the same machine;
these pools record the process ids of their own browsers instead.
"""

from __future__ import annotations

import importlib.util
import shutil
import time
from pathlib import Path

import pytest

from lorekit.envs.miniwob import Browser, BrowserPool


def _chromium_ready() -> bool:
    found = all(importlib.util.find_spec(m) is not None for m in ("miniwob", "selenium"))
    return found and bool(shutil.which("chromium") and shutil.which("chromedriver"))


#: ``pytestmark = NEEDS_CHROMIUM``: skip where the web extra or Chromium is missing.
NEEDS_CHROMIUM = pytest.mark.skipif(
    not _chromium_ready(), reason="needs the web extra and Debian's chromium + chromium-driver"
)


class TrackedPool(BrowserPool):
    """A :class:`BrowserPool` whose browsers' process trees are recorded at start."""

    def __init__(self, size: int) -> None:
        self.pids: set[int] = set()
        super().__init__(size, factory=self._start_tracked)

    def _start_tracked(self) -> Browser:
        browser = Browser()
        self.pids.update(browser.process_ids())
        return browser

    def release(self, browser: Browser) -> None:
        if browser.alive:  # renderers start with pages: record them too
            self.pids.update(browser.process_ids())
        super().release(browser)

    def close_and_check(self, wait_s: float = 5.0) -> None:
        """Close the pool, then fail if any process it started is still running."""
        self.close()
        assert self.pids, "the pool never started a browser"
        deadline = time.monotonic() + wait_s
        while (left := sorted(p for p in self.pids if running(p))) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not left, f"browser processes left running: {left}"


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
