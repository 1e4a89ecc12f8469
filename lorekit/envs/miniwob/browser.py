"""One headless Chromium, driven through chromedriver, that can always be killed.

A browser call can hang (a page in an endless loop, a wedged renderer),
Chromium can crash or be killed from outside, and Chromium outlives its
driver unless someone kills it. So every browser:

- runs chromedriver in a session (process group) of its own, with Chromium
  under it, and a profile directory LoreKit owns (removed on kill, so killed
  browsers leave no ``/tmp`` litter);
- makes each WebDriver call on its own worker thread with a deadline (the
  watchdog): a call past its deadline kills the whole tree and raises
  :class:`BrowserCrashed`, so the caller's thread is never stuck;
- turns the signs of a dead browser (a refused connection, "invalid session
  id", a Chromium process gone) into :class:`BrowserCrashed` as well, never
  into an ordinary WebDriver error the page would report as a failed action;
- is registered process-wide, so :func:`kill_all` runs at interpreter exit
  (before Python waits for worker threads, so a Ctrl-C is not held up by a
  hung call) and on SIGTERM/SIGHUP;
- asks the kernel to SIGKILL chromedriver and Chromium when their parent dies
  (``PR_SET_PDEATHSIG``; Chromium through ``setpriv``), so even a LoreKit
  killed with SIGKILL leaves nothing running.

Chromium and chromedriver come from Debian (``apt-get install chromium
chromium-driver``); :func:`find_browser` says exactly what is missing.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import concurrent.futures.thread  # its exit hook must be registered before ours
import contextlib
import os
import queue
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from lorekit.envs.miniwob.procs import (
    chromium_launcher,
    descendants,
    die_with_parent,
    executable,
    parent,
    prctl,
    pss_bytes,
    running,
    wait_gone,
)
from lorekit.extras import MissingExtraError

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
    "--disable-crash-reporter",  # no crashpad handler outside the process tree
    "--window-size=800,600",
)
DEFAULT_CALL_TIMEOUT = 20.0
START_TIMEOUT = 30.0
QUIT_TIMEOUT = 3.0
KILL_WAIT = 2.0
INSTALL_HINT = "apt-get install -y chromium chromium-driver"

#: WebDriver error texts that mean the browser is gone, not that an action failed.
_DEAD_SIGNS = (
    "invalid session id",
    "chrome not reachable",
    "not connected to devtools",
    "session deleted",
    "browser has closed",
    "tab crashed",
    "target crashed",
    "no such session",
)


class BrowserMissing(MissingExtraError):
    """Chromium or chromedriver is not installed; the message says how to install them.

    A :class:`~lorekit.extras.MissingExtraError`, so the command line prints
    it as one line (exit 2) like any other missing dependency.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, module=None, install=INSTALL_HINT)


class BrowserCrashed(RuntimeError):
    """The browser died or a call ran past its deadline (it has been killed)."""


@dataclass(frozen=True)
class BrowserPaths:
    chromium: str
    chromedriver: str


def find_browser() -> BrowserPaths:
    """Chromium and chromedriver from ``$LOREKIT_CHROMIUM`` /
    ``$LOREKIT_CHROMEDRIVER`` or the PATH (Debian's names first)."""
    problems = []
    found: dict[str, str] = {}
    for name, variable, candidates in (
        ("chromium", "LOREKIT_CHROMIUM", ("chromium", "chromium-browser", "google-chrome")),
        ("chromedriver", "LOREKIT_CHROMEDRIVER", ("chromedriver",)),
    ):
        given = os.environ.get(variable, "").strip()
        if given:
            if executable(given):
                found[name] = given
            else:
                problems.append(f"${variable}={given} is not an executable file")
            continue
        path = next((p for c in candidates if (p := shutil.which(c))), None)
        if path:
            found[name] = path
        else:
            problems.append(f"{name} not found on the PATH")
    if problems:
        raise BrowserMissing(
            f"MiniWoB++ needs Chromium and chromedriver: {'; '.join(problems)} (install them "
            f"with '{INSTALL_HINT}', or set LOREKIT_CHROMIUM and LOREKIT_CHROMEDRIVER "
            "to their paths)"
        )
    return BrowserPaths(found["chromium"], found["chromedriver"])


_Job = tuple[Callable[[], Any], "concurrent.futures.Future[Any]"]


class _Worker(threading.Thread):
    """The one thread that talks to a browser. A daemon (a hung call never
    holds up the interpreter's exit), and alive as long as the browser: it
    started chromedriver, whose parent-death signal follows this thread."""

    def __init__(self) -> None:
        super().__init__(name="browser", daemon=True)
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.start()

    def submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self.jobs.put((fn, future))
        return future

    def stop(self) -> None:
        self.jobs.put(None)

    def run(self) -> None:
        while (job := self.jobs.get()) is not None:
            fn, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(result)


_live: dict[int, Browser] = {}
_live_lock = threading.Lock()


class Browser:
    """One Chromium with its chromedriver; see the module docstring.

    ``call_timeout`` is the default deadline of :meth:`call`; ``start_timeout``
    bounds the start (chromedriver and Chromium up, a session open).
    """

    def __init__(
        self, *, call_timeout: float = DEFAULT_CALL_TIMEOUT, start_timeout: float = START_TIMEOUT
    ) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        paths = find_browser()
        self.call_timeout = call_timeout
        self.calls = 0
        self._dead = False
        self._kill_lock = threading.Lock()
        self.driver_pid: int | None = None
        self.chromium_pid: int | None = None
        self.profile = tempfile.mkdtemp(prefix="lorekit-chromium-")
        options = webdriver.ChromeOptions()
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={self.profile}"):
            options.add_argument(flag)
        options.binary_location = chromium_launcher(paths.chromium)
        options.unhandled_prompt_behavior = "dismiss"
        popen_kw: dict[str, Any] = {"start_new_session": True}
        if prctl is not None:
            popen_kw["preexec_fn"] = die_with_parent
        self._service = Service(paths.chromedriver, popen_kw=popen_kw, log_output=os.devnull)
        self._worker = _Worker()
        with _live_lock:
            _live[id(self)] = self
        started = time.monotonic()
        future = self._worker.submit(
            lambda: webdriver.Chrome(service=self._service, options=options)
        )
        try:
            self.driver: Any = future.result(timeout=start_timeout)
        except concurrent.futures.TimeoutError:
            self.kill()
            raise BrowserCrashed(f"Chromium did not start within {start_timeout:g} s") from None
        except BaseException as error:
            self.kill()
            if isinstance(error, Exception):
                raise BrowserCrashed(f"Chromium failed to start: {_first_line(error)}") from None
            raise
        self.start_seconds = time.monotonic() - started
        process = self._service.process
        self.driver_pid = process.pid if process is not None else None
        if self.driver_pid is not None:
            children = [p for p in descendants(self.driver_pid) if parent(p) == self.driver_pid]
            self.chromium_pid = min(children) if children else None

    # -- state ---------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Not killed, and chromedriver and Chromium's main process still run."""
        if self._dead:
            return False
        process = self._service.process
        if process is None or process.poll() is not None:
            return False
        return self.chromium_pid is None or running(self.chromium_pid)

    def process_ids(self) -> list[int]:
        """chromedriver and every process under it (Chromium and its helpers)."""
        if self.driver_pid is None:
            return []
        return [self.driver_pid, *descendants(self.driver_pid)]

    def memory_bytes(self) -> int:
        """Memory of chromedriver, Chromium and its helpers: the sum of their
        proportional set sizes (shared pages split among the processes that
        share them, so browsers can be added up), RSS where PSS is unreadable."""
        total = 0
        for pid in self.process_ids():
            total += pss_bytes(pid)
        return total

    def reset(self, timeout: float = 5.0) -> None:
        """Back to one window for the next episode (~1 ms when there is only
        one). The episode's page itself is restarted by
        :meth:`MiniWoBPage.begin`; JavaScript dialogs (``alert``) never stay
        open, the browser dismisses them (``unhandledPromptBehavior``)."""

        def tidy(driver: Any) -> None:
            handles = driver.window_handles
            if len(handles) > 1:
                for handle in handles[1:]:
                    driver.switch_to.window(handle)
                    driver.close()
                driver.switch_to.window(handles[0])

        self.call(tidy, timeout=timeout)

    # -- calls ---------------------------------------------------------------------------

    def call(self, fn: Callable[[Any], T], timeout: float | None = None) -> T:
        """``fn(driver)`` on the browser's worker thread, within ``timeout`` seconds.

        Past the deadline, or when the browser turns out dead, the browser is
        killed and :class:`BrowserCrashed` raised. Errors ``fn`` raises itself
        (a bad xpath, a stale element) pass through unchanged.
        """
        if self._dead:
            raise BrowserCrashed("the browser was killed earlier")
        self.calls += 1
        driver = self.driver
        future = self._worker.submit(lambda: fn(driver))
        limit = self.call_timeout if timeout is None else timeout
        try:
            return future.result(timeout=limit)
        except concurrent.futures.TimeoutError:
            self.kill()
            raise BrowserCrashed(
                f"a browser call took more than {limit:g} s; the browser was killed"
            ) from None
        except Exception as error:
            if self._dead:
                raise BrowserCrashed("the browser was killed during the call") from None
            if self._is_dead_sign(error):
                self.kill()
                raise BrowserCrashed(f"the browser died: {_first_line(error)}") from None
            raise

    def _is_dead_sign(self, error: Exception) -> bool:
        from selenium.common.exceptions import InvalidSessionIdException, WebDriverException
        from urllib3.exceptions import HTTPError

        if isinstance(error, (HTTPError, ConnectionError, InvalidSessionIdException)):
            return True
        if not isinstance(error, WebDriverException):
            return False
        text = str(error).lower()
        return any(sign in text for sign in _DEAD_SIGNS) or not self.alive

    # -- ending --------------------------------------------------------------------------

    def kill(self) -> None:
        """Kill chromedriver, Chromium and its helpers now; remove the profile (idempotent)."""
        with self._kill_lock:
            if self._dead:
                return
            self._dead = True
        with _live_lock:
            _live.pop(id(self), None)
        process = getattr(self._service, "process", None)
        if process is not None:
            pids = [process.pid, *descendants(process.pid)]
            for pid in reversed(pids):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                process.wait(timeout=5)
            wait_gone(pids, KILL_WAIT)
        self._worker.stop()
        shutil.rmtree(self.profile, ignore_errors=True)

    def close(self) -> None:
        """Quit politely (a few seconds at most), then make sure nothing is left."""
        if self._dead:
            return
        driver = getattr(self, "driver", None)
        if driver is not None:
            with contextlib.suppress(Exception):
                self._worker.submit(driver.quit).result(timeout=QUIT_TIMEOUT)
        self.kill()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "alive" if self.alive else "dead"
        return f"<Browser pid={self.driver_pid} {state} calls={self.calls}>"


def kill_all() -> None:
    """Kill every browser this process started (at exit, on SIGTERM/SIGHUP)."""
    with _live_lock:
        browsers = list(_live.values())
    for browser in browsers:
        browser.kill()


def live_browsers() -> int:
    """How many browsers this process started and has not killed."""
    with _live_lock:
        return len(_live)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().removeprefix("Message: ").splitlines()
    return text[0][:300] if text else type(error).__name__


# -- process-wide cleanup ----------------------------------------------------------------

_previous_handlers: dict[int, Any] = {}


def _on_signal(signum: int, frame: Any) -> None:
    kill_all()
    previous = _previous_handlers.get(signum)
    if callable(previous):
        previous(signum, frame)
    else:  # the default action: die of the same signal
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def install_cleanup() -> None:
    """Kill all browsers at interpreter exit and on SIGTERM/SIGHUP.

    The exit hook runs in ``threading``'s shutdown, before Python joins
    worker threads (an event loop's executor stuck in a browser call would
    otherwise hold the exit up), and again through :mod:`atexit`. Ctrl-C needs
    nothing more: the ``KeyboardInterrupt`` ends the interpreter, which runs
    the hook (LoreKit leaves SIGINT's handler to Python and asyncio). Signal
    handlers are chained to any handler already set, not installed where the
    signal is ignored, and only from the main thread (elsewhere Python
    refuses them).
    """
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        with contextlib.suppress(RuntimeError):
            register(kill_all)
    atexit.register(kill_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGHUP):
        current = signal.getsignal(signum)
        if signum in _previous_handlers or current == signal.SIG_IGN:
            continue
        _previous_handlers[signum] = current
        signal.signal(signum, _on_signal)


install_cleanup()
