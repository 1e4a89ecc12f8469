"""``lorekit view``'s server trusts no request: loopback Host names only, one page build per
store change, a burst of concurrent reloads all answered, a silent client dropped."""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import lorekit.eval.report_html_serve as serve
from lorekit.eval.report_html_serve import ReportServer, allowed_host
from lorekit.eval.store import RunStore

#: Text that only the report's own page contains (the viewer's title).
MARK = "LoreKit viewer"


def _store(path: Path, episodes: int = 3, chars: int = 100) -> Path:
    with RunStore(path) as store:
        store.create_run("big", env="textcraft", agent="react", config={"split": "test"})
        for i in range(episodes):
            with store.episode("big", f"k{i}", index=i, task_id=f"t{i}", task_group="g") as ep:
                ep.add_step("o" * chars, f"act {i} " + "a" * chars)
                ep.finish(success=i % 2 == 0, reward=1.0)
    return path


class _Counter:
    """Counts calls of the serve module's ``build_report``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = serve.build_report

        def counted(*args: object, **kwargs: object) -> str:
            self.calls += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(serve, "build_report", counted)


@contextlib.contextmanager
def serving(srv: ReportServer) -> Iterator[ReportServer]:
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ReportServer]:
    with serving(ReportServer(_store(tmp_path / "runs.sqlite3"), ["big"])) as srv:
        yield srv


def _get(srv: ReportServer, host: str | None, method: str = "GET") -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        conn.putrequest(method, "/", skip_host=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        answer = conn.getresponse()
        return answer.status, answer.read().decode("utf-8", "replace")
    finally:
        conn.close()


def test_only_loopback_host_names_are_answered(server: ReportServer) -> None:
    port = server.port
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost"):
        status, body = _get(server, host)
        assert status == 200 and MARK in body, host
    refused = ("evil.example", f"evil.example:{port}", f"127.0.0.1.nip.io:{port}", "localhost:1")
    for host in (*refused, None, ""):
        for method in ("GET", "HEAD"):
            status, body = _get(server, host, method)
            assert status == 403 and MARK not in body and "act 0" not in body, (host, method)


def test_two_hosts_or_odd_requests_get_no_report(server: ReportServer) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.putrequest("GET", "/", skip_host=True)
    conn.putheader("Host", f"127.0.0.1:{server.port}")
    conn.putheader("Host", "evil.example")
    conn.endheaders()
    answer = conn.getresponse()
    assert answer.status == 403 and MARK not in answer.read().decode()
    conn.close()
    for path, expected in (("?a=1&b=%00", 200), ("index.html?x#y", 200), ("..%2fetc", 404)):
        try:
            status = urllib.request.urlopen(server.url + path, timeout=30).status
        except urllib.error.HTTPError as error:
            status = error.code
        assert status == expected, path
    for method in ("PUT", "DELETE", "OPTIONS", "TRACE", "CONNECT"):
        status, body = _get(server, f"localhost:{server.port}", method)
        assert status in (405, 501) and MARK not in body, method


def test_the_page_is_built_once_per_store_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = _Counter(monkeypatch)
    path = _store(tmp_path / "runs.sqlite3")
    with serving(ReportServer(path, ["big"])) as srv:
        first = urllib.request.urlopen(srv.url, timeout=30).read().decode()
        second = urllib.request.urlopen(srv.url, timeout=30).read().decode()
        assert builds.calls == 1 and first == second
        with RunStore(path) as store, store.episode("big", "new", index=99, task_id="x") as ep:
            ep.add_step("obs", "the newest action")
            ep.finish(success=True, reward=1.0)
        third = urllib.request.urlopen(srv.url, timeout=30).read().decode()
        assert builds.calls == 2 and "the newest action" in third
        urllib.request.urlopen(srv.url, timeout=30).read()
        assert builds.calls == 2


def test_a_burst_of_concurrent_reloads_is_all_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = _Counter(monkeypatch)
    path = _store(tmp_path / "runs.sqlite3", episodes=120, chars=4_000)
    with serving(ReportServer(path, ["big"])) as srv:

        def fetch(_: int) -> int:
            with urllib.request.urlopen(srv.url, timeout=60) as answer:
                return len(answer.read())

        started = time.perf_counter()
        with ThreadPoolExecutor(100) as pool:
            sizes = list(pool.map(fetch, range(100)))
        wall = time.perf_counter() - started
    assert len(sizes) == 100 and len(set(sizes)) == 1 and sizes[0] > 1_000_000
    assert builds.calls == 1
    assert wall < 60


def test_a_silent_client_is_dropped_and_blocks_no_one(tmp_path: Path) -> None:
    path = _store(tmp_path / "runs.sqlite3")
    with serving(ReportServer(path, ["big"], client_timeout_s=0.5)) as srv:
        silent = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        silent.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")  # and never ends its headers
        with urllib.request.urlopen(srv.url, timeout=10) as answer:  # others are served
            assert answer.status == 200
        started = time.perf_counter()
        try:
            closed = silent.recv(100) is not None  # the server hangs up: b"" or an error status
        except TimeoutError:
            closed = False
        finally:
            silent.close()
        assert closed and time.perf_counter() - started < 5


def test_allowed_host() -> None:
    assert allowed_host("LOCALHOST.:80", 80) and allowed_host("[::1]", 80)
    for host in ("[::1]x", "[::2]:80", "localhost:80:80", "localhost:８０", "0.0.0.0:80"):
        assert not allowed_host(host, 80), host


def _version(srv: ReportServer) -> str:
    with urllib.request.urlopen(srv.url + "version", timeout=30) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain")
        return str(answer.read().decode("ascii"))


def test_version_changes_with_the_store_and_the_page_knows_its_own(
    tmp_path: Path,
) -> None:
    path = _store(tmp_path / "runs.sqlite3", episodes=2)
    with serving(ReportServer(path, ["big"])) as srv:
        first = _version(srv)
        assert first == _version(srv)  # nothing changed: the same token
        page = urllib.request.urlopen(srv.url, timeout=30).read().decode("utf-8")
        assert f'"version": "{first}"' in page or f'"version":"{first}"' in page
        with RunStore(path) as store, store.episode("big", "k9", index=9, task_id="t9",
                                                    task_group="g") as ep:  # fmt: skip
            ep.finish(success=True, reward=1.0)
        assert _version(srv) != first
    with serving(ReportServer(path, ["big"], live_every_s=None)) as quiet:
        page = urllib.request.urlopen(quiet.url, timeout=30).read().decode("utf-8")
        assert '"live": null' in page or '"live":null' in page
