"""``lorekit view``: the report page served on 127.0.0.1, straight from the run store.

Why a server at all when the report is one file: a run still being written
changes by the minute, and a reload should show it. Each request opens the
store read-only (SQLite ``mode=ro`` plus ``query_only``), builds the page and
closes the store, so the viewer never writes and never holds a lock a running
evaluation would wait on. Only ``GET /`` (and ``HEAD``) is answered; the
server listens on the loopback interface only.
"""

from __future__ import annotations

from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from lorekit.eval.report_html import build_report, page_policy

HOST = "127.0.0.1"


class ReportServer(ThreadingHTTPServer):
    """Serves the report of ``run_ids`` from the store at ``store_path``."""

    daemon_threads = True

    def __init__(
        self,
        store_path: Path,
        run_ids: Sequence[str],
        *,
        port: int = 0,
        max_episodes: int | None = None,
        rl_dir: Path | None = None,
    ) -> None:
        self.store_path = Path(store_path)
        self.run_ids = list(run_ids)
        self.max_episodes = max_episodes
        self.rl_dir = rl_dir
        super().__init__((HOST, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/"

    def page(self) -> str:
        from lorekit.eval.store import RunStore

        with RunStore.open_readonly(self.store_path) as store:
            return build_report(
                store,
                self.run_ids,
                max_episodes=self.max_episodes,
                rl_dir=self.rl_dir,
                title="LoreKit viewer",
            )


class _Handler(BaseHTTPRequestHandler):
    server: ReportServer

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, *, body: bool) -> None:
        if self.path.split("?")[0].split("#")[0] not in ("/", "/index.html"):
            self.send_error(HTTPStatus.NOT_FOUND, "only / is served")
            return
        try:
            page = self.server.page()
        except Exception as exc:  # the store went away, a run was deleted: say so
            self.send_error(HTTPStatus.INTERNAL_SERVER_ERROR, f"cannot build the report: {exc}")
            return
        data = page.encode("utf-8")
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", page_policy())
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the CLI prints the URL
        return
