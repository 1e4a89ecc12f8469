"""``lorekit report`` draws a saved ``reproduce run`` comparison: per row and column the
paper's figure (with its spread) beside ours (with its interval), the verdict, and which
models answered; a simulated run is marked as no reproduction. Checked on the parsed DOM."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from lorekit.eval.report_html import build_report
from lorekit.eval.report_html_reproduce import comparisons_for
from lorekit.eval.report_html_svg import PALETTE
from lorekit.eval.store import RunStore

VOID = {"meta", "link", "br", "hr", "img", "input", "line", "rect", "circle", "path"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.parts) + "".join(c.text for c in self.children)

    def find_all(self, tag: str, **attrs: str) -> list[Node]:
        found = []
        for c in self.children:
            if c.tag == tag and all(
                (v in c.attrs.get(k.rstrip("_"), "").split())
                if k == "class_"
                else c.attrs.get(k.replace("_", "-")) == v
                for k, v in attrs.items()
            ):
                found.append(c)
            found += c.find_all(tag, **attrs)
        return found


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.root = Node("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        while len(self.stack) > 1:
            if self.stack.pop().tag == tag:
                break

    def handle_data(self, data: str) -> None:
        self.stack[-1].parts.append(data)


def dom(page: str) -> Node:
    parser = _Dom()
    parser.feed(page)
    return parser.root


HOSTILE = '<script>alert("x")</script>'


def _cell(row: str, column: str, published: Any, spread: Any, ours: Any, low: Any, high: Any,
          compatible: Any, **more: Any) -> dict[str, Any]:  # fmt: skip
    diff = None if ours is None or published is None else ours - published
    verdict = {True: "compatible", False: "differs"}.get(compatible, "-")
    return {"row": row, "label": more.get("label", row), "column": column,
            "published": published, "published_spread": spread, "ours": ours, "low": low,
            "high": high, "n": more.get("n", 10), "errored": more.get("errored", 0),
            "run_id": f"r.{row}", "metric": more.get("metric", "success_rate"),
            "difference": diff, "compatible": compatible,
            "verdict": more.get("verdict", verdict), "episodes": more.get("episodes", 10),
            "over": more.get("over", "all"), "diff_low": more.get("diff_low"),
            "diff_high": more.get("diff_high"), "power": more.get("power"),
            "needed": more.get("needed")}  # fmt: skip


def _record(answered_by: str, reproduction: bool, cells: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "experiment": "exp-1",
        "paper": "Some paper",
        "source": "Table 9",
        "title": "A table",
        "spread_kind": "std over 3 runs",
        "models": "scripted models (--simulate): x" if answered_by == "simulated" else "gpt-x",
        "answered_by": answered_by,
        "reproduction": reproduction,
        "runs": {c["row"]: c["run_id"] for c in cells},
        "builds": {},
        "cells": cells,
        "path": "reproduce/exp-1-r.json",
    }


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("repro") / "runs.sqlite3"
    with RunStore(path) as store:
        rid = store.create_run("r.a", env="textcraft", agent="oracle", config={})
        with store.episode(rid, "k0", index=0, task_id="t", task_group="g") as ep:
            ep.add_step("obs", "act", 1.0, True, {})
            ep.finish(success=True, reward=1.0, info={})
    return path


def _page(store_path: Path, records: list[dict[str, Any]]) -> Node:
    with RunStore.open_readonly(store_path) as store:
        return dom(build_report(store, ["r.a"], reproductions=records))


def _rows(section: Node) -> dict[tuple[str, str], Node]:
    out = {}
    for tr in section.find_all("tr", class_="repro-row"):
        tds = tr.find_all("td")
        out[(tds[0].text, tds[1].text)] = tr
    return out


def test_each_cell_draws_the_paper_beside_ours(store_path: Path) -> None:
    cells = [
        _cell("a", "all", 50.0, 5.0, 80.0, 70.0, 90.0, False),
        _cell("a", "score", 20.0, None, 22.0, 15.0, 30.0, True, metric="crafter_score"),
    ]
    root = _page(store_path, [_record("model", True, cells)])
    (section,) = root.find_all("section", id="reproduce-0")
    assert root.find_all("nav")[0].find_all("a", href="#reproduce-0")[0].text == "Reproduction"
    assert section.find_all("h2")[0].text == "Reproduction: Some paper, Table 9"
    assert "models that answered here: gpt-x" in section.text
    assert not section.find_all("p", class_="repro-not")  # a real model answered
    rows = _rows(section)
    differs, fits = rows[("a", "all")], rows[("a", "score")]
    assert differs.find_all("td", class_="repro-verdict")[0].text == "differs"
    # as the CLI prints them: one decimal, intervals on ours and on the difference
    assert differs.find_all("td", class_="repro-published")[0].text == "50.0 ± 5.0"
    assert differs.find_all("td", class_="repro-ours")[0].text == "80.0 [70.0, 90.0]"
    assert differs.find_all("td", class_="repro-diff")[0].text == "+30.0"
    assert fits.find_all("td", class_="repro-verdict")[0].text == "compatible"
    assert fits.find_all("td")[2].text == "crafter_score"
    (svg,) = differs.find_all("svg", data_plot="reproduce-cell")
    assert (svg.attrs["data-published"], svg.attrs["data-ours"]) == ("50.0", "80.0")
    assert svg.attrs["data-verdict"] == "differs"
    (paper,) = svg.find_all("rect", class_="paper-mark")
    (ours,) = svg.find_all("circle", class_="ours-mark")
    (spread,) = svg.find_all("line", class_="paper-bar")
    (interval,) = svg.find_all("line", class_="ours-bar")
    centre = float(paper.attrs["x"]) + float(paper.attrs["width"]) / 2
    # on one axis: the paper's 50 ± 5 lies left of our interval 70..90, which holds our 80
    assert float(spread.attrs["x1"]) < centre < float(spread.attrs["x2"])
    assert float(spread.attrs["x2"]) < float(interval.attrs["x1"])
    assert float(interval.attrs["x1"]) < float(ours.attrs["cx"]) < float(interval.attrs["x2"])
    assert ours.attrs["fill"] == PALETTE[5]  # vermilion: differs
    (dot,) = fits.find_all("circle", class_="ours-mark")
    assert dot.attrs["fill"] == PALETTE[2]  # green: compatible
    assert not fits.find_all("line", class_="paper-bar")  # the paper gives no spread
    assert "std over 3 runs" in section.text


def test_a_simulated_comparison_says_it_is_not_a_reproduction(store_path: Path) -> None:
    cells = [
        _cell("a", "all", None, None, 50.0, 20.0, 80.0, None),
        _cell("b", "all", 40.0, None, None, None, None, None, label=HOSTILE),
    ]
    root = _page(store_path, [_record("simulated", False, cells)])
    (section,) = root.find_all("section", id="reproduce-0")
    (warning,) = section.find_all("p", class_="repro-not")
    assert warning.text.startswith("NOT a reproduction: scripted models answered (--simulate)")
    assert "scripted models (--simulate): x" in section.text
    rows = _rows(section)
    (svg,) = rows[("a", "all")].find_all("svg")
    assert svg.find_all("text", class_="paper-none")[0].text == "not published"
    (hostile,) = [tr for key, tr in rows.items() if key[0] == HOSTILE]  # text, not markup
    assert hostile.find_all("text", class_="ours-none")[0].text == "no episodes"
    assert not [s for s in root.find_all("script") if "alert" in s.text]


def test_no_comparison_no_section(store_path: Path) -> None:
    assert not _page(store_path, []).find_all("section", id="reproduce-0")


def test_comparisons_are_found_by_their_rows_runs(tmp_path: Path) -> None:
    folder = tmp_path / "reproduce"
    folder.mkdir()
    record = _record("model", True, [_cell("a", "all", 1.0, None, 1.0, 0.0, 2.0, True)])
    (folder / "exp-1-r.json").write_text(json.dumps(record), encoding="utf-8")
    (folder / "other.json").write_text('{"not": "a comparison"}', encoding="utf-8")
    (folder / "broken.json").write_text("{", encoding="utf-8")
    assert [r["experiment"] for r in comparisons_for(folder, ["r.a", "x"])] == ["exp-1"]
    assert comparisons_for(folder, ["x"]) == []
    assert comparisons_for(tmp_path / "none", ["r.a"]) == []


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    return tmp_path


def test_report_of_a_reproduction_row_shows_its_comparison(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(here / "s.sqlite3")
    args = ["reproduce", "run", "adapt-table2-textcraft", "--rows", "react", "--simulate"]
    code, _out, err = run_cli(
        [*args, "-n", "1", "--store", store, "--run-id", "sim", "--no-progress"], capsys
    )
    assert code == 0, err
    code, _out, err = run_cli(["report", "sim.react", "--store", store, "-o", "r.html"], capsys)
    assert code == 0, err
    root = dom((here / "r.html").read_text(encoding="utf-8"))
    (section,) = root.find_all("section", id="reproduce-0")
    assert "Table 2" in section.find_all("h2")[0].text
    assert section.find_all("p", class_="repro-not")
    (row,) = section.find_all("tr", class_="repro-row")
    assert row.find_all("svg", data_plot="reproduce-cell")[0].attrs["data-published"] == "19.0"
    code, _out, err = run_cli(
        ["report", "sim.react", "--store", store, "-o", "r2.html", "--reproduce", "r.html"],
        capsys,
    )
    assert code == 2 and "--reproduce: r.html is not a comparison" in err
    saved = str(here / "reproduce" / "adapt-table2-textcraft-sim.json")
    code, _out, err = run_cli(
        ["report", "sim.react", "--store", store, "-o", "r3.html", "--reproduce", saved], capsys
    )
    assert code == 0, err
    assert dom((here / "r3.html").read_text()).find_all("section", id="reproduce-0")


def test_the_viewer_shows_the_comparisons_beside_the_store(store_path: Path) -> None:
    from lorekit.eval.report_html_serve import ReportServer

    folder = store_path.parent / "reproduce"
    folder.mkdir(exist_ok=True)
    record = _record("local", False, [_cell("a", "all", 1.0, None, 1.0, 0.0, 2.0, True)])
    record["runs"] = {"a": "r.a"}
    (folder / "exp-1-view.json").write_text(json.dumps(record), encoding="utf-8")
    srv = ReportServer(store_path, ["r.a"], port=0)
    try:
        root = dom(srv.page())
    finally:
        srv.server_close()
        (folder / "exp-1-view.json").unlink()
    (section,) = root.find_all("section", id="reproduce-0")
    (warning,) = section.find_all("p", class_="repro-not")
    assert "the bundled small model answered (--model local)" in warning.text


def _x(svg: Node, cls: str) -> float:
    (mark,) = svg.find_all("circle", class_=cls) or svg.find_all("rect", class_=cls)
    if mark.tag == "circle":
        return float(mark.attrs["cx"])
    return float(mark.attrs["x"]) + float(mark.attrs["width"]) / 2


def test_the_cells_of_a_column_share_one_axis(store_path: Path) -> None:
    """Rows are read against each other: the same value sits at the same place in every
    cell of a column, whatever each cell's own range."""
    cells = [
        _cell("a", "all", 20.0, None, 10.0, 5.0, 15.0, False),
        _cell("b", "all", 20.0, None, 80.0, 70.0, 90.0, False),
        _cell("a", "k", 1.9, None, 2.0, 1.5, 2.5, True, metric="mean"),
        _cell("b", "k", 1.9, None, 1.0, 1.0, 1.0, False, metric="mean"),
    ]
    (section,) = _page(store_path, [_record("model", True, cells)]).find_all(
        "section", id="reproduce-0"
    )
    rows = _rows(section)
    svg = {key: tr.find_all("svg")[0] for key, tr in rows.items()}
    # the paper's 20 at one x in both rows of "all" (its own axis would move it)
    assert _x(svg[("a", "all")], "paper-mark") == _x(svg[("b", "all")], "paper-mark")
    assert _x(svg[("a", "k")], "paper-mark") == _x(svg[("b", "k")], "paper-mark")
    axis = svg[("a", "all")].attrs["data-axis"]
    assert axis == svg[("b", "all")].attrs["data-axis"] == "5.0 90.0"
    assert svg[("a", "k")].attrs["data-axis"] == "1.0 2.5"
    assert _x(svg[("a", "all")], "ours-mark") < _x(svg[("b", "all")], "ours-mark")


def test_the_report_shows_power_tasks_cost_and_what_k_max_counts(store_path: Path) -> None:
    cells = [
        _cell("a", "all", 19.0, None, 0.0, 0.0, 56.1, None, n=3, episodes=3,
              verdict="too few episodes", diff_low=-29.6, diff_high=37.2, power=0.08,
              needed=160),
        _cell("a", "k_max", 1.9, None, 2.0, 1.0, 3.0, None, metric="mean", n=2, episodes=12,
              over="successes", verdict="too few episodes", power=0.1),
    ]  # fmt: skip
    record = _record("model", False, cells)
    record["why_not"] = ["a sample: 3 of the experiment's 200 tasks"]
    record["tasks"] = {"split": "adapt-200", "population": 200, "played": 3, "sampled": True,
                       "seed": 0, "groups": {"depth-2": [1, 77], "depth-3": [2, 112]}}  # fmt: skip
    record["rows"] = {"a": {"label": "ReAct", "run_id": "r.a", "planned": 3, "episodes": 3,
                            "errored": 0, "calls": 42, "prompt_tokens": 1200,
                            "completion_tokens": 300, "usd": 0.0123, "unpriced": [],
                            "setup": {"split": "adapt-200", "env_options": {"compat": True},
                                      "options": {"profile": "paper"}}}}  # fmt: skip
    (section,) = _page(store_path, [record]).find_all("section", id="reproduce-0")
    rows = _rows(section)
    overall, k_max = rows[("a", "all")], rows[("a", "k_max")]
    assert overall.find_all("td", class_="repro-verdict")[0].text == "too few episodes"
    assert overall.find_all("td", class_="repro-power")[0].text == "8%, 160 needed"
    assert overall.find_all("td", class_="repro-diff")[0].text == "-19.0 [-29.6, +37.2]"
    (dot,) = overall.find_all("circle", class_="ours-mark")
    assert dot.attrs["fill"] == PALETTE[1]  # orange: too few to tell
    # k_max counts the column's episodes, and says how many successes it averages
    assert k_max.find_all("td", class_="repro-n")[0].text == "12 (2 successes)"
    (tasks,) = section.find_all("p", class_="repro-tasks")
    assert "3 of the experiment's 200 (split adapt-200)" in tasks.text
    assert "depth-2 1 of 77, depth-3 2 of 112" in tasks.text
    (partial,) = section.find_all("p", class_="repro-partial")
    assert "NOT a reproduction: a sample: 3 of the experiment's 200 tasks" in partial.text
    (table,) = section.find_all("table", class_="reproduce-rows")
    (tr,) = table.find_all("tbody")[0].find_all("tr")
    texts = [td.text for td in tr.find_all("td")]
    assert texts == ["ReAct", "r.a", "3 of 3", "0", "42", "1,200 + 300", "$0.0123",
                     "split adapt-200, compat=True, profile=paper"]  # fmt: skip


def test_a_comparison_of_another_setup_says_it_was_not_compared(store_path: Path) -> None:
    cells = [_cell("a", "all", 19.0, None, 30.0, 10.0, 50.0, None, verdict="setup differs")]
    record = _record("model", False, cells)
    record["compared"] = False
    record["setup_differs"] = ["split dev, the experiment's test"]
    (section,) = _page(store_path, [record]).find_all("section", id="reproduce-0")
    (warning,) = section.find_all("p", class_="repro-setup")
    assert "Not compared with the paper" in warning.text and "split dev" in warning.text
    (row,) = section.find_all("tr", class_="repro-row")
    assert row.find_all("td", class_="repro-verdict")[0].text == "setup differs"
