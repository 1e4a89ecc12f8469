"""``lorekit view``: the report page served on 127.0.0.1, straight from the run store.

Why a server at all when the report is one file: a run still being written
changes by the minute, and a reload should show it. The page is built once per
change of the store (SQLite's ``data_version`` and the files' stat), not once
per request: a page of a megabyte takes a while to build, and a burst of
reloads must not queue up builds. Each build opens the store read-only (SQLite
``mode=ro`` plus ``query_only``) and closes it, so the viewer never writes and
never holds a lock a running evaluation would wait on.

What the server trusts of a request: nothing. It listens on the loopback
interface only, and also answers only requests whose ``Host`` names the
loopback (``localhost``, ``127.0.0.1``, ``[::1]``, with our port or none): a
web page on another site that rebinds its DNS name to 127.0.0.1 would
otherwise read the report through the reader's browser. Only ``GET /`` and
``HEAD /`` are answered, and ``GET /version`` (a token that changes with the
store, which an open page polls every few seconds to reload itself when new
episodes arrive; other paths 404, other methods 501); request bodies
are never read; each connection is served on its own thread, and a client
that goes silent is dropped after ``client_timeout_s``, so one slow client
cannot hold the viewer up.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from lorekit.eval.report_html import build_report, page_policy

HOST = "127.0.0.1"
#: Host names a request may carry (DNS rebinding sends the attacker's own name).
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
#: Seconds a client may stay silent (reading its request, taking our answer).
CLIENT_TIMEOUT_S = 10.0
#: How often an open page asks whether the store changed.
LIVE_EVERY_S = 5.0


def allowed_host(header: str | None, port: int) -> bool:
    """Whether a ``Host`` header names this server on the loopback (``port`` or no port)."""
    if not header:
        return False
    host = header.strip().lower()
    if host.startswith("["):  # an IPv6 literal: [::1] or [::1]:PORT
        inside, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return False
        name, given = f"[{inside}]", rest[1:]
    else:
        name, _, given = host.partition(":")
        name = name.rstrip(".")  # "localhost." is the same name, fully qualified
    if name not in LOOPBACK_NAMES:
        return False
    return given == "" or (given.isascii() and given.isdigit() and int(given) == port)


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class StoreWatch:
    """Says whether the store changed since last asked: SQLite's ``data_version`` on one
    idle read-only connection (it changes with every commit of another connection), and
    the stat of the file and its WAL (a store replaced by another file)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def fingerprint(self) -> tuple[Any, ...]:
        wal = self.path.with_name(self.path.name + "-wal")
        with self._lock:
            try:
                if self._conn is None:
                    uri = self.path.resolve().as_uri() + "?mode=ro"
                    self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
                version = self._conn.execute("PRAGMA data_version").fetchone()[0]
            except sqlite3.Error as exc:  # gone or broken: the build will say so
                self.close_locked()
                version = f"error: {exc}"
        return (version, _stat(self.path), _stat(wal))

    def close_locked(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def close(self) -> None:
        with self._lock:
            self.close_locked()


def version_token(fingerprint: Any) -> str:
    """A short text that changes when the store does (what the page polls ``/version`` for)."""
    return hashlib.sha256(repr(fingerprint).encode("utf-8")).hexdigest()[:16]


class PageCache:
    """The page, built again only when ``fingerprint`` changes; one build at a time,
    and requests that arrive during a build wait for it and share its page.

    ``build`` is given the version token of the fingerprint it builds for, so the
    page knows which version of the store it shows."""

    def __init__(self, build: Callable[[str], str], fingerprint: Callable[[], Any]) -> None:
        self._build = build
        self._fingerprint = fingerprint
        self._lock = threading.Lock()
        self._key: Any = None
        self._page: bytes | None = None
        self.builds = 0

    def get(self) -> bytes:
        with self._lock:
            key = self._fingerprint()  # before building: a change meanwhile rebuilds next time
            if self._page is None or key != self._key:
                page = self._build(version_token(key)).encode("utf-8")
                self.builds += 1
                self._page, self._key = page, key
            return self._page


class ReportServer(ThreadingHTTPServer):
    """Serves the report of ``run_ids`` from the store at ``store_path``."""

    daemon_threads = True
    #: connections waiting to be accepted (the standard library's 5 drops a burst of reloads)
    request_queue_size = 128

    def __init__(
        self,
        store_path: Path,
        run_ids: Sequence[str],
        *,
        port: int = 0,
        max_episodes: int | None = None,
        rl_dir: Path | None = None,
        client_timeout_s: float = CLIENT_TIMEOUT_S,
        live_every_s: float | None = LIVE_EVERY_S,
    ) -> None:
        self.store_path = Path(store_path)
        self.live_every_s = live_every_s
        self.run_ids = list(run_ids)
        self.max_episodes = max_episodes
        self.rl_dir = rl_dir
        self.client_timeout_s = client_timeout_s
        self.watch = StoreWatch(self.store_path)
        self.cache = PageCache(self.page, self._fingerprint)
        # the socket timeout of every connection: reading the request, sending the answer
        handler = type("_Handler", (_Handler,), {"timeout": client_timeout_s})
        super().__init__((HOST, port), handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/"

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def _fingerprint(self) -> tuple[Any, ...]:
        rl = (
            tuple((str(p), _stat(p)) for p in sorted(self.rl_dir.glob("seed-*/progress.csv")))
            if self.rl_dir is not None
            else ()
        )
        return (self.watch.fingerprint(), rl)

    def version(self) -> str:
        """The store's version now (``GET /version``): cheap, nothing is built."""
        return version_token(self._fingerprint())

    def page(self, version: str | None = None) -> str:
        """Build the page now (the handler asks :attr:`cache`, which calls this on a change).
        With ``version`` the page polls ``/version`` and reloads itself when it changes,
        keeping the reader's place (scroll, filters, the episode shown)."""
        from lorekit.eval.report_html_reproduce import comparisons_for
        from lorekit.eval.store import RunStore

        saved = comparisons_for(self.store_path.parent / "reproduce", self.run_ids)
        with RunStore.open_readonly(self.store_path) as store:
            return build_report(
                store,
                self.run_ids,
                max_episodes=self.max_episodes,
                rl_dir=self.rl_dir,
                title="LoreKit viewer",
                reproductions=saved,
                live=(
                    {"version": version, "every_s": self.live_every_s}
                    if version and self.live_every_s
                    else None
                ),
            )

    def server_close(self) -> None:
        super().server_close()
        self.watch.close()


class _Handler(BaseHTTPRequestHandler):
    server: ReportServer

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, *, body: bool) -> None:
        self.close_connection = True  # one request per connection; a body is never read
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or not allowed_host(hosts[0], self.server.port):
            self.send_error(HTTPStatus.FORBIDDEN, "this viewer answers only to localhost")
            return
        path = self.path.split("?")[0].split("#")[0]
        if path == "/version":
            self._send(self.server.version().encode("ascii"), "text/plain; charset=utf-8", body)
            return
        if path not in ("/", "/index.html"):
            self.send_error(HTTPStatus.NOT_FOUND, "only / and /version are served")
            return
        try:
            data = self.server.cache.get()
        except Exception as exc:  # the store went away, a run was deleted: say so
            self.send_error(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot build the report: {exc}")
            return
        self._send(data, "text/html; charset=utf-8", body)

    def _send(self, data: bytes, kind: str, body: bool) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", page_policy())
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the CLI prints the URL
        return
