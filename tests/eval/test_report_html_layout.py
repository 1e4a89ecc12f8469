"""The report's layout data: x-axis labels that never overlap, one colour per run in every
chart, the runs table's split and model, and a warning when runs played different splits."""

from __future__ import annotations

import math
import re
from html import unescape
from pathlib import Path

import pytest
from _report_layout import GROUPS, RUNS, Quad, layout_store, overlapping

from lorekit.eval.report_html import build_report
from lorekit.eval.report_html_svg import PALETTE, Series, bar_chart
from lorekit.eval.store import RunStore

#: Width of a character of 11 px tick text, generous (DejaVu Sans averages about 6.6 px).
CHAR_PX = 6.8
TEXT = re.compile(r"<text ([^>]*)>(?:<title>[^<]*</title>)?([^<]*)</text>")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("layout") / "runs.sqlite3"
    ids = layout_store(path)
    with RunStore.open_readonly(path) as store:
        return build_report(store, ids)


def _plot(page: str, name: str) -> str:
    one = rf'<figure class="chart">(?:(?!</figure>).)*data-plot="{name}".*?</figure>'
    m = re.search(one, page, re.S)
    assert m is not None, name
    return m.group(0)


def tick_label_quads(svg: str) -> tuple[list[Quad], float, float]:
    """Corners of every x-axis tick label in ``svg`` (from its attributes and its text),
    and the figure's width and height."""
    w, h = (float(v) for v in re.search(r'viewBox="0 0 (\S+) (\S+)"', svg).groups())  # type: ignore[union-attr]
    axis = float(re.findall(r'<line x1="[^"]*" x2="[^"]*" y1="([^"]*)"[^>]*class="axis"', svg)[-1])
    quads = []
    for attrs, text in TEXT.findall(svg):
        if 'class="tick' not in attrs:
            continue
        length = len(unescape(text)) * CHAR_PX
        anchor = re.search(r'text-anchor="(\w+)"', attrs)
        shift = {"start": 0.0, "middle": -length / 2, "end": -length}[
            anchor.group(1) if anchor else "start"
        ]
        move = re.search(r"translate\(([-\d.]+) ([-\d.]+)\)(?: rotate\(([-\d.]+)\))?", attrs)
        if move:
            x, y, angle = float(move.group(1)), float(move.group(2)), float(move.group(3) or 0)
        else:
            x = float(re.search(r' x="([-\d.]+)"', " " + attrs).group(1))  # type: ignore[union-attr]
            y = float(re.search(r' y="([-\d.]+)"', " " + attrs).group(1))  # type: ignore[union-attr]
            angle = 0.0
        if y <= axis:  # a y-axis tick
            continue
        a = math.radians(angle)
        ux, uy, nx, ny = math.cos(a), math.sin(a), -math.sin(a), math.cos(a)
        local = [(shift, -9.0), (shift + length, -9.0), (shift + length, 3.0), (shift, 3.0)]
        quads.append([(x + u * ux + v * nx, y + u * uy + v * ny) for u, v in local])
    return quads, w, h


def assert_labels_fit(svg: str) -> None:
    quads, w, h = tick_label_quads(svg)
    assert quads
    assert overlapping(quads) == []
    for quad in quads:  # inside the figure, not cut off at its edges
        assert all(-1 <= x <= w + 1 and -1 <= y <= h + 1 for x, y in quad), quad


def test_long_group_names_do_not_overlap(page: str) -> None:
    assert_labels_fit(_plot(page, "success"))
    assert_labels_fit(_plot(page, "latency"))
    # the whole name stays at hand: in the success table beside the chart
    for group in GROUPS:
        assert f"<td>{group}</td>" in page


@pytest.mark.parametrize("n", [1, 3, 6, 9, 20, 45])
@pytest.mark.parametrize("length", [4, 12, 30, 70])
def test_category_labels_never_overlap(n: int, length: int) -> None:
    cats = [f"{i:02d}" + "wide-name-Mw" * (length // 12) + "x" * (length % 12) for i in range(n)]
    series = [Series("a", [0.5] * n), Series("b", [0.3] * n)]
    assert_labels_fit(bar_chart("t", "t", cats, series, percent=True))


def test_runs_table_names_split_and_model(page: str) -> None:
    head = re.search(r'<table class="runs"><thead><tr>(.*?)</tr>', page).group(1)  # type: ignore[union-attr]
    columns = re.findall(r"<th>(.*?)</th>", head)
    assert "split" in columns and "model" in columns
    for run_id, split, model in RUNS:
        row = re.search(
            rf"<tr[^>]*>(?:<td>[^<]*(?:<i[^>]*></i>)?</td>)*?<td>{run_id}</td>.*?</tr>", page
        )
        assert row is not None, run_id
        cells = re.findall(r"<td>([^<]*)</td>", row.group(0))
        at = cells.index(run_id)
        by_column = dict(zip(columns[-len(cells[at:]) :], cells[at:], strict=True))
        assert by_column["split"] == split
        assert by_column["model"] == (model or "-")


def test_a_warning_when_runs_played_different_splits(page: str, tmp_path: Path) -> None:
    assert re.search(r'class="warning">[^<]*different splits', page)
    path = tmp_path / "runs.sqlite3"
    ids = layout_store(path)
    with RunStore.open_readonly(path) as store:
        same = build_report(store, ids[1:])  # both on "test"
    assert "different splits" not in same


def test_the_histogram_colours_each_run_by_its_own_colour(page: str) -> None:
    # the first run made no model calls: the latency chart leaves it out, and the
    # others keep the colours they have in every other chart
    def fills(name: str) -> list[str]:
        return list(
            dict.fromkeys(re.findall(r'<rect class="bar"[^>]* fill="(#\w+)"', _plot(page, name)))
        )

    assert fills("success") == [PALETTE[0], PALETTE[1], PALETTE[2]]
    assert fills("latency") == [PALETTE[1], PALETTE[2]]
    legend = re.findall(r'background:(#\w+)"></i>([^<]*)<', _plot(page, "latency"))
    assert legend == [(PALETTE[1], RUNS[1][0]), (PALETTE[2], RUNS[2][0])]
