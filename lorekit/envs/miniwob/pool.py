"""A bounded pool of browsers, started once and reused across episodes.

Starting Chromium costs 0.5-2.7 s; resetting a MiniWoB page in a running one
costs ~40 ms. The pool holds at most ``size`` browsers (idle, leased and
starting together; callers wait for one to come back), hands the most
recently returned healthy browser to the next lease (its page is likely the
one the next episode wants), and drops a browser that crashed, hung (its
call deadline killed it) or was killed from outside, so a later lease starts
a fresh one. Each episode resets its page itself (:meth:`MiniWoBPage.begin`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from lorekit.envs.miniwob.browser import (
    DEFAULT_CALL_TIMEOUT,
    Browser,
    BrowserCrashed,
    find_browser,
)


class PoolClosed(RuntimeError):
    """The pool was closed; make a new one."""


class BrowserPool:
    """At most ``size`` live browsers; :meth:`lease` one for an episode.

    ``factory`` makes a browser (tests pass their own); by default a
    :class:`Browser` with ``call_timeout``, and the pool checks at once that
    Chromium is installed (:class:`BrowserMissing` otherwise), so a missing
    browser fails when the env is made, not in every episode.
    """

    def __init__(
        self,
        size: int = 2,
        *,
        factory: Callable[[], Browser] | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"pool size must be a whole number of at least 1, got {size!r}")
        if not call_timeout > 0:
            raise ValueError(f"call_timeout must be positive, got {call_timeout!r}")
        if factory is None:
            find_browser()
        self.size = size
        self._factory = factory or (lambda: Browser(call_timeout=call_timeout))
        self._idle: list[Browser] = []
        self._leased: set[Browser] = set()
        self._starting = 0
        self._cond = threading.Condition()
        self._closed = False
        self.started = 0
        """Browsers this pool started (a reused one is not counted again)."""
        self.replaced = 0
        """Dead browsers dropped (crashed, hung or killed from outside)."""

    # -- leasing -------------------------------------------------------------------------

    def acquire(self, timeout: float | None = None) -> Browser:
        """A healthy browser: an idle one, else a new one while under ``size``;
        waits (up to ``timeout`` seconds, None = no limit) for one to come back."""
        deadline = None if timeout is None else time.monotonic() + timeout
        dead: list[Browser] = []
        try:
            with self._cond:
                while True:
                    if self._closed:
                        raise PoolClosed("the browser pool is closed")
                    while self._idle:
                        browser = self._idle.pop()
                        if browser.alive:
                            self._leased.add(browser)
                            return browser
                        dead.append(browser)
                        self.replaced += 1
                    if len(self._leased) + self._starting < self.size:
                        self._starting += 1
                        break
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise TimeoutError(
                            f"no browser came free within {timeout:g} s "
                            f"(all {self.size} are in use)"
                        )
                    self._cond.wait(left)
        finally:
            for browser in dead:
                browser.kill()
        return self._start()

    def _start(self) -> Browser:
        try:
            browser = self._factory()
        except BaseException:
            with self._cond:
                self._starting -= 1
                self._cond.notify()
            raise
        with self._cond:
            self._starting -= 1
            self.started += 1
            if not self._closed:
                self._leased.add(browser)
                return browser
            self._cond.notify()
        browser.kill()
        raise PoolClosed("the browser pool was closed while a browser started")

    def release(self, browser: Browser) -> None:
        """Give ``browser`` back: kept for the next lease if healthy, else
        killed and dropped (counted in :attr:`replaced`). Idempotent."""
        with self._cond:
            if browser not in self._leased:
                return
            self._leased.discard(browser)
            keep = browser.alive and not self._closed
            if keep:
                self._idle.append(browser)
            elif not self._closed:
                self.replaced += 1
            self._cond.notify()
        if not keep:
            browser.kill()

    @contextmanager
    def lease(self, timeout: float | None = None) -> Iterator[Browser]:
        """``with pool.lease() as browser:`` one browser for the block."""
        browser = self.acquire(timeout)
        try:
            yield browser
        except BrowserCrashed:
            browser.kill()
            raise
        finally:
            self.release(browser)

    # -- state and ending ----------------------------------------------------------------

    @property
    def live(self) -> int:
        """Browsers the pool holds now (idle, leased and starting)."""
        with self._cond:
            return len(self._idle) + len(self._leased) + self._starting

    @property
    def idle(self) -> int:
        with self._cond:
            return len(self._idle)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Quit idle browsers and kill leased ones (their next call raises
        :class:`BrowserCrashed`); later leases raise :class:`PoolClosed`."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            leased, self._leased = list(self._leased), set()
            self._cond.notify_all()
        for browser in leased:
            browser.kill()
        for browser in idle:
            browser.close()

    def __enter__(self) -> BrowserPool:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"<BrowserPool size={self.size} live={self.live} started={self.started} "
            f"replaced={self.replaced}{' closed' if self._closed else ''}>"
        )


_shared: BrowserPool | None = None
_shared_lock = threading.Lock()


def shared_pool(size: int | None = None) -> BrowserPool:
    """The process-wide pool envs lease from. ``size`` counts when the pool
    is made (first use, or after :meth:`close`); a later, larger ``size``
    grows it, a smaller one is ignored (other envs may be using it)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.closed:
            _shared = BrowserPool(size or 2)
        elif size is not None and size > _shared.size:
            with _shared._cond:
                _shared.size = size
                _shared._cond.notify_all()
        return _shared
