"""The report in a real headless Chromium: plots and the episode list render, paging
changes what is shown, the agent's structure is drawn, and the console stays free of errors.

Chromium and chromedriver come from Debian (``apt-get install chromium
chromium-driver``) and selenium from the ``web`` extra; without them these
tests are skipped, except under CI (``CI`` set), where they must run.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _report_layout import layout_store, overlapping
from _report_runs import HOSTILE, automanual_run, spring_run, team_run, textcraft_runs

from lorekit.eval.report_html import build_report
from lorekit.eval.report_html_serve import ReportServer
from lorekit.eval.store import RunStore

RUNS = ["react", "adapt", "team", "spring", "automanual"]


def _browser_problem() -> str | None:
    try:
        import selenium  # noqa: F401

        from lorekit.envs.miniwob.browser import find_browser

        find_browser()
    except Exception as error:  # no selenium, no chromium: say which
        return str(error)
    return None


_problem = _browser_problem()
pytestmark = pytest.mark.skipif(
    _problem is not None,
    reason=f"needs Chromium and the web extra: {_problem}",
)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("browser") / "runs.sqlite3"
    asyncio.run(textcraft_runs(path))
    asyncio.run(team_run(path))
    asyncio.run(spring_run(path))
    automanual_run(path)
    return path


@pytest.fixture(scope="module")
def report(store_path: Path) -> Path:
    page = store_path.with_name("report.html")
    with RunStore.open_readonly(store_path) as store:
        page.write_text(build_report(store, RUNS), encoding="utf-8")
    return page


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    """One headless Chromium for the module, with its console log kept."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from lorekit.envs.miniwob.browser import CHROMIUM_FLAGS, find_browser
    from lorekit.envs.miniwob.procs import chromium_launcher

    paths = find_browser()
    profile = tempfile.mkdtemp(prefix="lorekit-report-test-")
    options = webdriver.ChromeOptions()
    for flag in CHROMIUM_FLAGS:
        if not flag.startswith("--window-size"):
            options.add_argument(flag)
    options.add_argument("--window-size=1400,1000")
    options.add_argument(f"--user-data-dir={profile}")
    options.binary_location = chromium_launcher(paths.chromium)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(paths.chromedriver, log_output=os.devnull)
    browser = webdriver.Chrome(service=service, options=options)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver: Any, url: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(url)
    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return document.body.dataset.ready") == "1"
    )


def console_errors(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def text(driver: Any, css: str) -> str:
    return str(driver.find_element("css selector", css).text)


def test_plots_and_episode_list_render(driver: Any, report: Path, tmp_path: Path) -> None:
    open_page(driver, report.as_uri())
    plots = driver.find_elements("css selector", "svg.plot")
    names = {p.get_attribute("data-plot") for p in plots}
    assert {"success", "steps-per-episode", "calls-per-episode", "tokens", "latency"} <= names
    for plot in plots:  # each one drew marks with a size on screen
        size = driver.execute_script(
            "const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]", plot
        )
        assert size[0] > 300 and size[1] > 150
        marks = plot.find_elements("css selector", "rect.bar, circle.dot, path.line")
        assert marks, plot.get_attribute("data-plot")
    bars = driver.find_elements("css selector", 'svg[data-plot="success"] rect.bar')
    assert any(float(b.get_attribute("height")) > 10 for b in bars)
    items = driver.find_elements("css selector", "#episode-list li")
    with RunStore.open_readonly(report.with_name("runs.sqlite3")) as store:
        expected = [(r, e.episode_key) for r in RUNS for e in store.episodes(r)]
    assert [(i.text.split(" · ")[0][2:], i.get_attribute("data-key")) for i in items] == expected
    assert text(driver, "#episode-count") == f"{len(expected)} of {len(expected)} episodes"
    assert text(driver, "#episode-title") == f"react · #0 · {expected[0][1]}"
    driver.save_screenshot(str(tmp_path / "report.png"))
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert console_errors(driver) == []


def test_paging_changes_what_is_shown(driver: Any, report: Path, tmp_path: Path) -> None:
    open_page(driver, report.as_uri() + "#episodes")
    before = (text(driver, "#episode-title"), text(driver, "#episode-steps"))
    driver.save_screenshot(str(tmp_path / "first.png"))
    driver.find_element("id", "next-episode").click()
    after = (text(driver, "#episode-title"), text(driver, "#episode-steps"))
    driver.save_screenshot(str(tmp_path / "second.png"))
    assert after[0] != before[0] and after[0].startswith("react · #1 · ")
    assert after[1] != before[1]
    current = driver.find_elements("css selector", "#episode-list li.current")
    assert len(current) == 1 and current[0].get_attribute("data-key") in after[0]
    assert driver.execute_script("return location.hash").startswith("#ep=react%2F")
    driver.find_element("id", "prev-episode").click()
    assert text(driver, "#episode-title") == before[0]
    driver.find_element("tag name", "body").send_keys("j")  # the keyboard pages too
    assert text(driver, "#episode-title") == after[0]
    # filtering the list to failed-with-error episodes, then opening one
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "status-filter")).select_by_value("error")
    items = driver.find_elements("css selector", "#episode-list li")
    assert len(items) == 2 and all("birch_door" in i.text for i in items)
    items[1].click()
    assert text(driver, "#episode-title").startswith("adapt · ")
    assert "RuntimeError" in text(driver, "#episode-view .error")
    assert console_errors(driver) == []


def test_hostile_model_output_is_shown_as_text(driver: Any, report: Path, store_path: Path) -> None:
    open_page(driver, report.as_uri())
    first_call = driver.find_element("css selector", "#episode-calls details.call")
    first_call.find_element("tag name", "summary").click()
    shown = [p.get_attribute("textContent") for p in first_call.find_elements("tag name", "pre")]
    with RunStore.open_readonly(store_path) as store:
        call = store.llm_calls("react", store.episodes("react")[0].episode_key)[0]
    assert shown == [m["content"] for m in call["messages"]] + [call["answer"]]  # whole prompt
    assert HOSTILE in shown[-1]  # the words, not markup
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    assert not driver.find_elements("css selector", "#episode-view img, #episode-view script")
    assert console_errors(driver) == []


def test_agent_structure(driver: Any, report: Path, store_path: Path) -> None:
    with RunStore.open_readonly(store_path) as store:
        deep = next(e for e in store.episodes("adapt") if e.task_group == "depth-3" and e.success)
        team = store.episodes("team")[0]
    open_page(driver, report.as_uri() + f"#ep=adapt%2F{deep.episode_key.replace('/', '%2F')}")
    assert text(driver, "#episode-title") == f"adapt · #{deep.index} · {deep.episode_key}"
    nodes = driver.find_elements("css selector", "#adapt-tree li")
    assert len(nodes) >= 3 and "d2" in text(driver, "#adapt-tree")
    assert "plan" in text(driver, "#adapt-tree")
    open_page(driver, report.as_uri() + f"#ep=team%2F{team.episode_key.replace('/', '%2F')}")
    events = team.info["notes"]["team"]["events"]
    dots = driver.find_elements("css selector", "#team-timeline circle")
    assert len(dots) == len(events)
    rows = driver.find_elements("css selector", "table.team-events tbody tr")
    assert [r.find_elements("tag name", "td")[2].text for r in rows] == [e["agent"] for e in events]
    assert console_errors(driver) == []


def test_graph_passes_and_automanual(driver: Any, report: Path, store_path: Path) -> None:
    with RunStore.open_readonly(store_path) as store:
        spring = store.episodes("spring")[0]
    passes = spring.info["notes"]["spring"]["steps"]
    open_page(driver, report.as_uri() + "#ep=spring%2F" + spring.episode_key.replace("/", "%2F"))
    blocks = driver.find_elements("css selector", "#episode-view details.pass")
    assert len(blocks) == len(passes) > 0
    blocks[0].find_element("tag name", "summary").click()
    first = [
        r.find_element("tag name", "td").text
        for r in blocks[0].find_elements("css selector", "tbody tr")
    ]
    assert first == [n["key"] for n in passes[0]["nodes"]]  # the node trace, in order
    open_page(driver, report.as_uri() + "#ep=automanual%2Fput%2F0")
    view = text(driver, "#episode-view")
    assert "AutoManual planner: 2 turns, outcome failure" in view
    assert "AssertionFailed" in view and "take('mug 1', 'cabinet 1')" not in view
    assert "take('mug 1', 'counter 1')" in view
    assert "AutoManual rule changes: v1 → v2 (2 rules)" in view
    assert "rule_2 written" in view and "no rule rule_9" in view
    assert HOSTILE in view  # the conclusion, as text
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    assert console_errors(driver) == []


def test_view_serves_the_same_page(driver: Any, store_path: Path) -> None:
    server = ReportServer(store_path, ["adapt"])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        open_page(driver, server.url)
        assert driver.find_elements("css selector", 'svg[data-plot="success"]')
        items = driver.find_elements("css selector", "#episode-list li")
        assert len(items) == 10 and all("adapt" in i.text for i in items)
        driver.find_element("id", "next-episode").click()
        assert text(driver, "#episode-title").startswith("adapt · #1 · ")
        assert console_errors(driver) == []
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def layout_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A page with long task-group names and long run ids (see _report_layout)."""
    path = tmp_path_factory.mktemp("layout") / "runs.sqlite3"
    ids = layout_store(path)
    page = path.with_name("report.html")
    with RunStore.open_readonly(path) as store:
        page.write_text(build_report(store, ids), encoding="utf-8")
    return page


#: The corners on screen of every tick label below a chart's x axis (as Chromium drew it).
_LABEL_QUADS = """
const svg = document.querySelector(`svg[data-plot="${arguments[0]}"]`);
const axis = [...svg.querySelectorAll("line.axis")].pop().getBoundingClientRect().top;
const out = [];
for (const t of svg.querySelectorAll("text.tick")) {
  if (t.getBoundingClientRect().top < axis) continue;
  const b = t.getBBox(), m = t.getScreenCTM();
  const x1 = b.x + b.width, y1 = b.y + b.height;
  out.push([[b.x, b.y], [x1, b.y], [x1, y1], [b.x, y1]]
    .map(([x, y]) => { const p = new DOMPoint(x, y).matrixTransform(m); return [p.x, p.y]; }));
}
const r = svg.getBoundingClientRect();
return [out, [r.left, r.top, r.right, r.bottom]];
"""


def test_long_group_names_stay_apart_on_screen(
    driver: Any, layout_report: Path, tmp_path: Path
) -> None:
    open_page(driver, layout_report.as_uri())
    for name in ("success", "latency"):
        quads, (left, top, right, bottom) = driver.execute_script(_LABEL_QUADS, name)
        assert quads, name
        assert overlapping([[tuple(p) for p in q] for q in quads]) == [], name
        for quad in quads:  # drawn inside the figure, none cut off at its edges
            assert all(left - 1 <= x <= right + 1 and top - 1 <= y <= bottom + 1 for x, y in quad)
    figure = driver.find_element("css selector", 'svg[data-plot="success"]')
    figure.screenshot(str(tmp_path / "success.png"))
    assert (tmp_path / "success.png").stat().st_size > 5_000
    assert console_errors(driver) == []


def test_the_run_filter_leaves_previous_in_reach(driver: Any, layout_report: Path) -> None:
    open_page(driver, layout_report.as_uri() + "#episodes")
    driver.find_element("id", "next-episode").click()
    boxes = driver.execute_script(
        "return ['run-filter', 'status-filter', 'text-filter', 'prev-episode'].map((id) => {"
        "const r = document.getElementById(id).getBoundingClientRect();"
        "return [r.left, r.top, r.right, r.bottom]; })"
    )
    prev = boxes.pop()
    for left, top, right, bottom in boxes:  # no filter lies over the button
        assert right <= prev[0] or left >= prev[2] or bottom <= prev[1] or top >= prev[3]
    before = text(driver, "#episode-title")
    driver.find_element("id", "prev-episode").click()  # reachable: nothing intercepts it
    assert text(driver, "#episode-title") != before and "#0" in text(driver, "#episode-title")
    assert console_errors(driver) == []


def test_the_viewer_reloads_itself_when_episodes_arrive(driver: Any, tmp_path: Path) -> None:
    """An open page polls /version and reloads when the store changes, keeping the
    episode shown and the filters; no reload by hand."""
    from selenium.webdriver.support.ui import WebDriverWait

    path = tmp_path / "live.sqlite3"
    with RunStore(path) as store:
        store.create_run("live", env="textcraft", agent="react", config={})
        for i in range(3):
            with store.episode("live", f"k{i}", index=i, task_id=f"t{i}", task_group="g") as ep:
                ep.add_step("look", "a room", 0.0, False, {"valid": True})
                ep.finish(success=i != 1, reward=1.0 if i != 1 else 0.0)
    server = ReportServer(path, ["live"], live_every_s=1)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        open_page(driver, server.url)
        driver.find_element("id", "next-episode").click()
        shown = text(driver, "#episode-title")
        driver.find_element("id", "text-filter").send_keys("t")
        assert len(driver.find_elements("css selector", "#episode-list li")) == 3
        with (
            RunStore(path) as store,
            store.episode("live", "k3", index=3, task_id="t3", task_group="g") as ep,
        ):
            ep.add_step("look", "a room", 0.0, False, {"valid": True})
            ep.finish(success=True, reward=1.0)
        WebDriverWait(driver, 60).until(
            lambda d: len(d.find_elements("css selector", "#episode-list li")) == 4
        )
        WebDriverWait(driver, 20).until(
            lambda d: d.execute_script("return document.body.dataset.ready") == "1"
        )
        assert text(driver, "#episode-title") == shown  # the same episode, after the reload
        assert driver.find_element("id", "text-filter").get_attribute("value") == "t"
        assert console_errors(driver) == []
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
