"""The report page: self-contained, safe against hostile text, and the two commands that make it."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import run_cli
from _report_runs import HOSTILE, textcraft_runs

from lorekit.eval.report_html import build_report, script_json
from lorekit.eval.report_html_serve import ReportServer
from lorekit.eval.store import RunStore

DATA = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)
SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("page") / "runs.sqlite3"
    asyncio.run(textcraft_runs(path))
    with RunStore(path) as store:  # a run whose every name is hostile too
        rid = store.create_run(HOSTILE, env=HOSTILE, agent=HOSTILE, config={})
        with store.episode(rid, HOSTILE, index=0, task_id=HOSTILE, task_group=HOSTILE) as ep:
            ep.add_step(HOSTILE, HOSTILE, 1.0, True, {"valid": True})
            ep.finish(
                success=False,
                reward=0.0,
                error=f"ValueError: {HOSTILE}",
                info={"notes": {"tree": {"task": HOSTILE, "depth": 1, "success": False}}},
            )
    return path


def page_of(path: Path, runs: list[str]) -> str:
    with RunStore.open_readonly(path) as store:
        return build_report(store, runs)


def test_page_is_self_contained(store_path: Path) -> None:
    page = page_of(store_path, ["react", "adapt"])
    for plot in ("success", "steps-per-episode", "calls-per-episode", "tokens", "latency"):
        assert f'data-plot="{plot}"' in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)  # nothing to fetch
    assert "<link" not in page and "<script src" not in page
    assert "@import" not in page and "url(" not in page
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None and "default-src 'none'" in policy.group(1)


def test_hostile_text_never_becomes_markup(store_path: Path) -> None:
    page = page_of(store_path, ["react", HOSTILE])
    assert HOSTILE not in page
    assert "<img" not in page and not re.search(r"<[^>]*\sonerror=", page)
    assert page.count("<script") == 2  # the data and our script, nothing injected
    # the data survives exactly: the page's script reads the model's words as they were
    data = json.loads(DATA.search(page).group(1))  # type: ignore[union-attr]
    calls = [c for e in data["episodes"] for c in e["calls"]]
    # each prompt text is kept once, and every message points at its own
    assert len(set(data["texts"])) == len(data["texts"])
    assert len(data["texts"]) < sum(len(c["messages"]) for c in calls)
    episode = next(e for e in data["episodes"] if e["run_id"] == "react")
    with RunStore.open_readonly(store_path) as store:
        stored = store.llm_calls("react", episode["key"])
    first = episode["calls"][0]
    assert [data["texts"][m["text"]] for m in first["messages"]] == [
        m["content"] for m in stored[0]["messages"]
    ]
    answers = [c["answer"] for c in calls]
    assert any(HOSTILE in (a or "") for a in answers)
    hostile = next(e for e in data["episodes"] if e["run_id"] == HOSTILE)
    assert hostile["steps"][0]["observation"] == HOSTILE and hostile["group"] == HOSTILE
    assert "&lt;/script&gt;" in page  # the run id in the tables, escaped


def test_script_json_escapes_what_could_close_the_element() -> None:
    text = script_json({"a": "</script><!-- & \u2028", "b": float("nan")})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028", "b": None}


def test_only_the_inlined_script_may_run(store_path: Path) -> None:
    page = page_of(store_path, ["adapt"])
    [js] = SCRIPT.findall(page)
    digest = base64.b64encode(hashlib.sha256(js.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}';" in page


def test_report_command(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    code, _, err = run_cli(
        ["report", "react", "adapt", "--store", str(store_path), "-o", str(out),
         "--max-episodes", "2"],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert f"wrote {out}" in err
    data = json.loads(DATA.search(out.read_text()).group(1))  # type: ignore[union-attr]
    assert [(e["run_id"], e["index"]) for e in data["episodes"]] == [
        ("react", 0), ("react", 1), ("adapt", 0), ("adapt", 1)
    ]  # fmt: skip
    code, _, err = run_cli(["report", "react", "nope", "--store", str(store_path)], capsys)
    assert code == 2 and "RUN: no run 'nope'" in err and "lorekit runs list" in err
    code, _, err = run_cli(["report", "react", "--store", str(tmp_path / "none.db")], capsys)
    assert code == 2 and "no run store" in err
    code, _, err = run_cli(["view", "nope", "--store", str(store_path)], capsys)
    assert code == 2 and "RUN: no run 'nope'" in err


@pytest.fixture
def server(store_path: Path) -> Iterator[ReportServer]:
    srv = ReportServer(store_path, ["react", "adapt"])
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_view_serves_the_page_read_only(server: ReportServer, store_path: Path) -> None:
    before = _digest(store_path)
    assert server.url.startswith("http://127.0.0.1:")
    with urllib.request.urlopen(server.url, timeout=30) as answer:
        assert answer.status == 200
        assert "default-src 'none'" in answer.headers["Content-Security-Policy"]
        page = answer.read().decode()
    assert 'data-plot="success"' in page and "LoreKit viewer" in page
    for path, method, status in (("nope", "GET", 404), ("", "POST", 501)):
        request = urllib.request.Request(
            server.url + path, method=method, data=b"" if method == "POST" else None
        )
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=30)
        assert caught.value.code == status
    assert _digest(store_path) == before  # the viewer wrote nothing


def test_view_shows_new_episodes_on_reload(tmp_path: Path) -> None:
    path = tmp_path / "live.sqlite3"
    with RunStore(path) as store:
        store.create_run("live", env="textcraft", agent="react", config={})
        srv = ReportServer(path, ["live"])
        thread = threading.Thread(target=srv.serve_forever, daemon=True)
        thread.start()
        try:
            first = urllib.request.urlopen(srv.url, timeout=30).read().decode()
            with store.episode("live", "k0", index=0, task_id="stick") as ep:
                ep.add_step("obs", "get 2 bamboo")
                ep.finish(success=True, reward=1.0)
            second = urllib.request.urlopen(srv.url, timeout=30).read().decode()
        finally:
            srv.shutdown()
            srv.server_close()
    assert '"episodes": []' in first
    assert '"key": "k0"' in second and "get 2 bamboo" in second


def test_view_command_serves_until_interrupted(store_path: Path) -> None:
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lorekit",
            "view",
            "adapt",
            "--store",
            str(store_path),
            "--port",
            "0",
        ],
        stderr=subprocess.PIPE,
        text=True,
        # a suite started in the background (`pytest &`) ignores SIGINT, and a child
        # inherits that: give it Ctrl-C's default, as in a terminal
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = re.search(r"at (http://127\.0\.0\.1:\d+/) \(read-only", line)
        assert url is not None, line
        page = urllib.request.urlopen(url.group(1), timeout=30).read().decode()
        assert 'data-plot="success"' in page
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
    assert code == 0  # Ctrl-C stops the viewer cleanly
