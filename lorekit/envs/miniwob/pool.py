"""A bounded pool of browsers, started once and reused across episodes.

Starting Chromium costs 0.5-2.7 s; resetting a MiniWoB page in a running one
costs ~40 ms. The pool hands out at most ``size`` browsers at a time (callers
wait for one to come back), keeps returned healthy browsers for the next
lease, and drops a browser that crashed or hung (it was killed by its call
deadline) so the next lease starts a fresh one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from lorekit.envs.miniwob.browser import Browser, BrowserCrashed


class BrowserPool:
    """At most ``size`` live browsers; :meth:`lease` one for an episode."""

    def __init__(self, size: int = 2, *, factory: Callable[[], Browser] | None = None) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"pool size must be a whole number of at least 1, got {size!r}")
        self.size = size
        self._factory = factory or Browser
        self._idle: list[Browser] = []
        self._leased = 0
        self._cond = threading.Condition()
        self._closed = False
        self.started = 0
        self.replaced = 0

    def acquire(self, timeout: float | None = None) -> Browser:
        """A healthy browser (an idle one, or a new one while under ``size``)."""
        with self._cond:
            if not self._cond.wait_for(
                lambda: self._closed or self._idle or self._leased < self.size, timeout
            ):
                raise TimeoutError(f"no browser came free within {timeout} s")
            if self._closed:
                raise RuntimeError("the browser pool is closed")
            while self._idle:
                browser = self._idle.pop()
                if browser.alive:
                    self._leased += 1
                    return browser
            self._leased += 1
        try:
            browser = self._factory()
        except BaseException:
            with self._cond:
                self._leased -= 1
                self._cond.notify()
            raise
        with self._cond:
            self.started += 1
        return browser

    def release(self, browser: Browser) -> None:
        """Give ``browser`` back; a dead one is dropped (and counted as replaced)."""
        with self._cond:
            self._leased -= 1
            if browser.alive and not self._closed:
                self._idle.append(browser)
            else:
                self.replaced += 0 if self._closed else 1
            self._cond.notify()
        if self._closed or not browser.alive:
            browser.kill()

    @contextmanager
    def lease(self, timeout: float | None = None) -> Iterator[Browser]:
        browser = self.acquire(timeout)
        try:
            yield browser
        except BrowserCrashed:
            browser.kill()
            raise
        finally:
            self.release(browser)

    def close(self) -> None:
        """Close idle browsers; leased ones close when they come back."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for browser in idle:
            browser.close()

    def __enter__(self) -> BrowserPool:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


_shared: BrowserPool | None = None
_shared_lock = threading.Lock()


def shared_pool(size: int | None = None) -> BrowserPool:
    """The process-wide pool envs lease from (``size`` only counts on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared._closed:
            _shared = BrowserPool(size or 2)
        return _shared
