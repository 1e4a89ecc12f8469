"""One headless Chromium, driven through chromedriver, that can always be killed.

A browser call can hang (a page in an endless loop, a wedged renderer), and
Chromium leaves processes behind when its driver dies. So every browser:

- runs chromedriver in a session (process group) of its own, with Chromium
  under it, and knows the whole process tree it started;
- makes each WebDriver call on a worker thread with a deadline: a call past
  its deadline kills the tree and raises :class:`BrowserCrashed`, so the
  caller's thread is never stuck;
- is registered process-wide, so :func:`kill_all` (run at exit and on
  SIGTERM/SIGINT) leaves no Chromium behind.

Chromium and chromedriver come from Debian (``apt-get install chromium
chromium-driver``); :func:`find_browser` says exactly what is missing.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import os
import shutil
import signal
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

#: Flags for an offline, headless, unsandboxed (we may run as root) Chromium.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--no-first-run",
    "--mute-audio",
    "--window-size=800,600",
)
DEFAULT_CALL_TIMEOUT = 20.0
START_TIMEOUT = 30.0


class BrowserMissing(RuntimeError):
    """Chromium or chromedriver is not installed; the message says how to install them."""


class BrowserCrashed(RuntimeError):
    """The browser died or a call ran past its deadline (it has been killed)."""


@dataclass(frozen=True)
class BrowserPaths:
    chromium: str
    chromedriver: str


def find_browser() -> BrowserPaths:
    """Chromium and chromedriver from ``$LOREKIT_CHROMIUM`` /
    ``$LOREKIT_CHROMEDRIVER`` or the PATH (Debian's names first)."""
    chromium = os.environ.get("LOREKIT_CHROMIUM") or next(
        (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))),
        None,
    )
    driver = os.environ.get("LOREKIT_CHROMEDRIVER") or shutil.which("chromedriver")
    missing = [
        name for name, path in (("chromium", chromium), ("chromedriver", driver)) if not path
    ]
    if missing:
        raise BrowserMissing(
            f"{' and '.join(missing)} not found: install them with "
            "'apt-get install -y chromium chromium-driver' (or set LOREKIT_CHROMIUM and "
            "LOREKIT_CHROMEDRIVER to their paths)"
        )
    assert chromium is not None and driver is not None
    return BrowserPaths(chromium, driver)


_live: weakref.WeakSet[Browser] = weakref.WeakSet()
_live_lock = threading.Lock()


class Browser:
    """One Chromium with its chromedriver; see the module docstring."""

    def __init__(self, *, call_timeout: float = DEFAULT_CALL_TIMEOUT) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        paths = find_browser()
        self.call_timeout = call_timeout
        self.calls = 0
        self._worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="browser")
        self._dead = False
        options = webdriver.ChromeOptions()
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.binary_location = paths.chromium
        service = Service(
            paths.chromedriver, popen_kw={"start_new_session": True}, log_output=os.devnull
        )
        self._service = service
        self.driver_pid: int | None = None
        started = time.monotonic()
        future = self._worker.submit(webdriver.Chrome, service=service, options=options)
        try:
            self.driver: Any = future.result(timeout=START_TIMEOUT)
        except concurrent.futures.TimeoutError:
            self._kill_service()
            raise BrowserCrashed(f"Chromium did not start within {START_TIMEOUT:.0f} s") from None
        except Exception as error:
            self._kill_service()
            raise BrowserCrashed(f"Chromium failed to start: {_first_line(error)}") from None
        self.start_seconds = time.monotonic() - started
        self.driver_pid = service.process.pid if service.process else None
        with _live_lock:
            _live.add(self)

    @property
    def alive(self) -> bool:
        return not self._dead

    def call(self, fn: Callable[[Any], T], timeout: float | None = None) -> T:
        """``fn(driver)`` on the browser's worker thread, within ``timeout`` seconds.

        Past the deadline, or if the driver connection is gone, the browser is
        killed and :class:`BrowserCrashed` raised. Errors ``fn`` raises itself
        (a bad xpath, a stale element) pass through unchanged.
        """
        if self._dead:
            raise BrowserCrashed("the browser was killed earlier")
        from urllib3.exceptions import HTTPError

        self.calls += 1
        future = self._worker.submit(fn, self.driver)
        limit = self.call_timeout if timeout is None else timeout
        try:
            return future.result(timeout=limit)
        except concurrent.futures.TimeoutError:
            self.kill()
            raise BrowserCrashed(
                f"a browser call took more than {limit:g} s; browser killed"
            ) from None
        except (HTTPError, ConnectionError) as error:
            self.kill()
            raise BrowserCrashed(f"the browser connection broke: {_first_line(error)}") from None

    def process_ids(self) -> list[int]:
        """chromedriver and every process under it (Chromium and its helpers)."""
        if self.driver_pid is None:
            return []
        return [self.driver_pid, *descendants(self.driver_pid)]

    def kill(self) -> None:
        """Kill chromedriver, Chromium and its helpers now (idempotent)."""
        if self._dead:
            return
        self._dead = True
        self._kill_service()
        self._worker.shutdown(wait=False, cancel_futures=True)
        with _live_lock:
            _live.discard(self)

    def close(self) -> None:
        """Quit politely (a few seconds at most), then make sure nothing is left."""
        if self._dead:
            return
        with contextlib.suppress(Exception):
            self._worker.submit(self.driver.quit).result(timeout=5)
        self.kill()

    def _kill_service(self) -> None:
        process = getattr(self._service, "process", None)
        if process is None:
            return
        pids = [process.pid, *descendants(process.pid)]
        for sig in (signal.SIGKILL,):
            for pid in reversed(pids):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
        with contextlib.suppress(Exception):
            process.wait(timeout=5)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc; Linux)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        out.append(child)
        todo += children.get(child, [])
    return out


def kill_all() -> None:
    """Kill every browser this process started (at exit, on SIGTERM/SIGINT)."""
    with _live_lock:
        browsers = list(_live)
    for browser in browsers:
        browser.kill()


def live_browsers() -> int:
    with _live_lock:
        return len(_live)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _on_signal(signum: int, frame: Any) -> None:
    kill_all()
    previous = _previous_handlers.get(signum)
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_DFL or previous is None:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


_previous_handlers: dict[int, Any] = {}


def install_cleanup() -> None:
    """Kill all browsers at interpreter exit and on SIGTERM (chaining any
    handler already installed). Called when the first browser module loads;
    signal handlers can only be set from the main thread, so elsewhere only
    the exit hook is installed."""
    atexit.register(kill_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM,):
        if signum in _previous_handlers:
            continue
        _previous_handlers[signum] = signal.getsignal(signum)
        signal.signal(signum, _on_signal)


install_cleanup()
