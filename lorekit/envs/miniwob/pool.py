"""A bounded pool of browsers, started once and reused across episodes.

Starting Chromium costs 0.5-2.7 s; resetting a MiniWoB page in a running one
costs ~40 ms. The pool holds at most ``size`` browsers (idle, leased and
starting together; callers wait for one to come back), hands the most
recently returned healthy browser to the next lease (its page is likely the
one the next episode wants), and drops a browser that crashed, hung (its
call deadline killed it) or was killed from outside, so a later lease starts
a fresh one. Each episode resets its page itself (:meth:`MiniWoBPage.begin`).

A lease can name an ``owner`` (the env): if the owner is garbage-collected
without giving its browser back (the harness drops an env whose episode was
cancelled mid-call, and never closes it), the browser returns to the pool
instead of holding a slot forever.
"""

from __future__ import annotations

import queue
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from lorekit.envs.miniwob.browser import (
    DEFAULT_CALL_TIMEOUT,
    Browser,
    BrowserCrashed,
    find_browser,
)

ORPHAN_POLL_S = 0.5
STARVED_WARN_S = 30.0


class PoolStarved(RuntimeWarning):
    """Leases waited long for a browser: the pool is likely smaller than the
    number of envs that hold one (see :meth:`BrowserPool.acquire`)."""


class PoolClosed(RuntimeError):
    """The pool was closed; make a new one."""


class BrowserPool:
    """At most ``size`` live browsers; :meth:`lease` one for an episode.

    ``max_uses`` (None: no limit) quits a browser after that many leases, so
    a long run's browsers cannot grow without bound; a fresh one takes its
    place. ``factory`` makes a browser (tests pass their own); by default a
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
        max_uses: int | None = None,
    ) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"pool size must be a whole number of at least 1, got {size!r}")
        if not call_timeout > 0:
            raise ValueError(f"call_timeout must be positive, got {call_timeout!r}")
        if max_uses is not None and (
            isinstance(max_uses, bool) or not isinstance(max_uses, int) or max_uses < 1
        ):
            raise ValueError(f"max_uses must be at least 1 or None, got {max_uses!r}")
        if factory is None:
            find_browser()
        self.max_uses = max_uses
        self.size = size
        self._factory = factory or (lambda: Browser(call_timeout=call_timeout))
        self._idle: list[Browser] = []
        self._leased: set[Browser] = set()
        self._starting = 0
        self._uses: dict[Browser, int] = {}
        self._owners: dict[Browser, weakref.finalize[..., object]] = {}
        self._orphans: queue.SimpleQueue[Browser] = queue.SimpleQueue()
        self._cond = threading.Condition()
        self._closed = False
        self._warned = False
        self.starved_warn_s = STARVED_WARN_S
        self.started = 0
        """Browsers this pool started (a reused one is not counted again)."""
        self.replaced = 0
        """Dead browsers dropped (crashed, hung or killed from outside)."""
        self.reclaimed = 0
        """Leases given back because their owner was garbage-collected."""
        self.retired = 0
        """Healthy browsers quit after ``max_uses`` leases."""

    # -- leasing -------------------------------------------------------------------------

    def acquire(self, timeout: float | None = None, *, owner: object | None = None) -> Browser:
        """A healthy browser: an idle one, else a new one while under ``size``;
        waits (up to ``timeout`` seconds, None = no limit) for one to come back.
        With an ``owner``, the lease ends by itself when the owner is collected.

        An env holds its lease until its episode ends on the page or it is
        reset or closed: with fewer browsers than envs that hold one, the
        waiting can last; after 30 s a :class:`PoolStarved` warning says so."""
        browser = self._take(timeout)
        if owner is not None:
            with self._cond:
                self._owners[browser] = weakref.finalize(owner, self._orphans.put, browser)
        return browser

    def _take(self, timeout: float | None) -> Browser:
        began = time.monotonic()
        deadline = None if timeout is None else began + timeout
        dead: list[Browser] = []
        try:
            with self._cond:
                while True:
                    if self._closed:
                        raise PoolClosed("the browser pool is closed")
                    self._adopt_orphans()
                    while self._idle:
                        browser = self._idle.pop()
                        if browser.alive:
                            self._leased.add(browser)
                            self._uses[browser] = self._uses.get(browser, 0) + 1
                            return browser
                        dead.append(browser)
                        self.replaced += 1
                    if len(self._leased) + self._starting < self.size:
                        self._starting += 1
                        break
                    now = time.monotonic()
                    if not self._warned and now - began > self.starved_warn_s:
                        self._warned = True
                        message = _STARVED.format(seconds=self.starved_warn_s, size=self.size)
                        warnings.warn(message, PoolStarved, stacklevel=4)
                    left = None if deadline is None else deadline - now
                    if left is not None and left <= 0:
                        raise TimeoutError(
                            f"no browser came free within {timeout:g} s "
                            f"(all {self.size} are in use)"
                        )
                    # orphans arrive without a notify (from the garbage collector): poll;
                    # the starvation warning is checked as often
                    poll = min(ORPHAN_POLL_S, self.starved_warn_s)
                    self._cond.wait(poll if left is None else min(left, poll))
        finally:
            for browser in dead:
                browser.kill()
        return self._start()

    def _adopt_orphans(self) -> None:
        """Leases whose owner was collected come back (under the lock; the
        finalizer itself only queues, as it may run inside any allocation)."""
        while True:
            try:
                browser = self._orphans.get_nowait()
            except queue.Empty:
                return
            if browser in self._leased:
                self._leased.discard(browser)
                self._owners.pop(browser, None)
                self.reclaimed += 1
                self._idle.insert(0, browser)  # checked for health when taken

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
                self._uses[browser] = 1
                return browser
            self._cond.notify()
        browser.kill()
        raise PoolClosed("the browser pool was closed while a browser started")

    def release(self, browser: Browser) -> None:
        """Give ``browser`` back: reset (one window) and kept for the next
        lease if healthy; killed and dropped (counted in :attr:`replaced`) if
        dead or its reset failed; quit (counted in :attr:`retired`) after
        ``max_uses`` leases. Idempotent."""
        with self._cond:
            if browser not in self._leased:
                return
        healthy = not self._closed and _reset(browser)
        with self._cond:
            if browser not in self._leased:  # released twice, or close() took it
                return
            self._leased.discard(browser)
            if (finalizer := self._owners.pop(browser, None)) is not None:
                finalizer.detach()
            uses = self._uses.pop(browser, 0) if not healthy else self._uses.get(browser, 0)
            retire = healthy and self.max_uses is not None and uses >= self.max_uses
            if healthy and not retire:
                self._idle.append(browser)
            elif retire:
                self._uses.pop(browser, None)
                self.retired += 1
            elif not self._closed:
                self.replaced += 1
            self._cond.notify()
        if retire:
            browser.close()
        elif not healthy:
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
            self._adopt_orphans()
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
            for finalizer in self._owners.values():
                finalizer.detach()
            self._owners.clear()
            self._uses.clear()
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


_STARVED = (
    "waited {seconds:g} s for a browser: all {size} are leased; an env keeps its browser "
    "until its episode ends (on the page, or by end_episode(), reset or close); outside "
    "the harness, end episodes you leave early, or give the pool more browsers (pool_size)"
)


def _reset(browser: Browser) -> bool:
    """Whether ``browser`` is alive and was reset for the next episode."""
    if not browser.alive:
        return False
    try:
        browser.reset()
    except Exception:  # BrowserCrashed, or a state reset could not repair
        browser.kill()
        return False
    return True


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
