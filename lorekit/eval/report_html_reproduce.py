"""The report's reproduction section: a saved ``lorekit reproduce run`` comparison, each
cell drawn with the paper's figure beside ours.

``reproduce run`` saves its comparison as JSON (``reproduce/EXPERIMENT-RUN.json``
beside the run store, or under ``--out``). ``lorekit report`` finds the saved
comparisons whose rows' runs are on the page (or is handed them) and draws one
section per comparison: what was run, which models answered (a run with
scripted models or the bundled small model says in a warning that it is not a
reproduction), the tasks played and how they were drawn, what each row ran
with and spent, and per row and column a small chart: the published figure
with its spread where the paper gives one, ours with its 95% interval, and the
verdict. All cells of one column share one axis, so rows can be read against
each other; the figures are written as ``reproduce run`` printed them
(:mod:`lorekit.eval.reproduce_text`). Only the saved record is read, so this
module knows nothing of any paper, agent or env.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from lorekit import jsonscan
from lorekit.eval.report_html_runs import section
from lorekit.eval.report_html_svg import PALETTE, fmt
from lorekit.eval.reproduce_text import HEADERS, cell_texts, number, verdict_text
from lorekit.eval.store_rows import json_depth

MAX_COMPARISON_DEPTH = 20
"""A saved comparison nests a few levels (rows, cells, figures); a deeper file is no
comparison, and drawing one would walk it recursively."""
CELL_W, CELL_H = 240, 46
_PAD, _LABEL = 6, 40
#: the dot of ours: the palette's green when compatible, its vermilion when it differs,
#: its orange when there were too few episodes to tell, grey otherwise
VERDICT_COLOUR = {
    "compatible": PALETTE[2],
    "differs": PALETTE[5],
    "too few episodes": PALETTE[1],
    "-": "#888888",
}
PAPER_COLOUR = "#555555"
NOT_REPRODUCTION = {
    "simulated": "scripted models answered (--simulate)",
    "local": "the bundled small model answered (--model local)",
}


def load_comparisons(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """The saved comparisons among ``paths`` (JSON files that hold one); others are skipped,
    so a folder may hold other files. Each record gets its ``path``."""
    out = []
    for path in sorted(paths):
        try:
            record = jsonscan.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):  # nested too deeply too
            continue
        if (
            json_depth(record, MAX_COMPARISON_DEPTH) <= MAX_COMPARISON_DEPTH
            and isinstance(record, dict)
            and isinstance(record.get("cells"), list)
            and isinstance(record.get("runs"), dict)
            and "experiment" in record
        ):
            out.append({**record, "path": str(path)})
    return out


def comparisons_for(folder: Path, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The comparisons saved in ``folder`` that name at least one of ``run_ids`` as a row's
    run: a report of a reproduction's rows shows that reproduction."""
    if not folder.is_dir():
        return []
    wanted = set(run_ids)
    return [
        r
        for r in load_comparisons(folder.glob("*.json"))
        if wanted & {str(v) for v in r["runs"].values()}
    ]


Axis = tuple[float, float]


def _ends(cell: Mapping[str, Any]) -> list[float]:
    """The values a cell draws: the paper's figure and spread, ours and its interval."""
    published, spread = number(cell.get("published")), number(cell.get("published_spread"))
    ends = [
        v
        for v in (number(cell.get(k)) for k in ("published", "ours", "low", "high"))
        if v is not None
    ]
    if published is not None and spread is not None:
        ends += [published - spread, published + spread]
    return ends


def column_axes(cells: Sequence[Mapping[str, Any]]) -> dict[str, Axis]:
    """One axis per column: the range every cell of the column draws, so that rows are
    read against each other on the same scale."""
    found: dict[str, list[float]] = {}
    for cell in cells:
        found.setdefault(str(cell.get("column", "")), []).extend(_ends(cell))
    return {name: (min(v), max(v)) if v else (0.0, 1.0) for name, v in found.items()}


def cell_svg(cell: Mapping[str, Any], axis: Axis | None = None) -> str:
    """One cell drawn on its column's ``axis`` (its own range when None): the paper's
    figure (a square, with its spread as a bar) above ours (a dot coloured by the
    verdict, with its interval as a bar)."""
    published, spread = number(cell.get("published")), number(cell.get("published_spread"))
    ours, low, high = (number(cell.get(k)) for k in ("ours", "low", "high"))
    verdict = verdict_text(cell)
    ends = _ends(cell)
    first, last = axis if axis is not None else ((min(ends), max(ends)) if ends else (0.0, 1.0))
    pad = (last - first) * 0.08 or max(abs(last), 1.0) * 0.1
    lo, hi = first - pad, last + pad
    width = CELL_W - _LABEL - 2 * _PAD

    def x(v: float) -> str:
        return f"{_LABEL + _PAD + (v - lo) / (hi - lo) * width:.1f}"

    body = [
        f'<line x1="{_LABEL + _PAD}" x2="{CELL_W - _PAD}" y1="37" y2="37" stroke="#bbbbbb"/>',
    ]
    marks = [(first, "start"), (last, "end")] if first < last else [(first, "middle")]
    for v, anchor in marks if ends or axis is not None else []:
        body.append(
            f'<text class="axis-end" x="{x(v)}" y="46" font-size="8" fill="#777777" '
            f'text-anchor="{anchor}">{escape(fmt(v))}</text>'
        )
    body += _mark("paper", 12, published, spread, spread, x, PAPER_COLOUR, square=True)
    colour = VERDICT_COLOUR.get(verdict, VERDICT_COLOUR["-"])
    if ours is not None and low is not None and high is not None:
        body += _mark("ours", 28, ours, ours - low, high - ours, x, colour, square=False)
    else:
        body += _mark("ours", 28, None, None, None, x, colour, square=False)
    texts = cell_texts(cell)
    title = f"{texts[0]} / {texts[1]}: paper {texts[2]}, ours {texts[3]}; {verdict}"
    attrs = " ".join(
        f'data-{k}="{escape(v)}"'
        for k, v in (
            ("row", str(cell.get("row"))),
            ("column", str(cell.get("column"))),
            ("published", _attr(published)),
            ("spread", _attr(spread)),
            ("ours", _attr(ours)),
            ("low", _attr(low)),
            ("high", _attr(high)),
            ("axis", "" if axis is None else f"{axis[0]!r} {axis[1]!r}"),
            ("verdict", verdict),
        )
    )
    return (
        f'<svg class="repro-cell" data-plot="reproduce-cell" {attrs} '
        f'viewBox="0 0 {CELL_W} {CELL_H}" width="{CELL_W}" height="{CELL_H}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>{"".join(body)}</svg>'
    )


def _mark(
    who: str,
    y: int,
    value: float | None,
    minus: float | None,
    plus: float | None,
    x: Any,
    colour: str,
    *,
    square: bool,
) -> list[str]:
    """A labelled line of the cell: the value's marker and its bar (spread or interval)."""
    out = [f'<text x="2" y="{y + 3}" font-size="10" fill="{colour}">{who}</text>']
    if value is None:
        text = "not published" if who == "paper" else "no episodes"
        out.append(
            f'<text class="{who}-none" x="{_LABEL + _PAD}" y="{y + 3}" font-size="9" '
            f'fill="#777777">{text}</text>'
        )
        return out
    if minus is not None and plus is not None and (minus > 0 or plus > 0):
        out.append(
            f'<line class="{who}-bar" x1="{x(value - minus)}" x2="{x(value + plus)}" '
            f'y1="{y}" y2="{y}" stroke="{colour}" stroke-width="2"/>'
        )
    if square:
        cx = float(x(value))
        out.append(
            f'<rect class="{who}-mark" x="{cx - 4:.1f}" y="{y - 4}" width="8" height="8" '
            f'fill="{colour}"/>'
        )
    else:
        out.append(f'<circle class="{who}-mark" cx="{x(value)}" cy="{y}" r="4.5" fill="{colour}"/>')
    return out


def _attr(v: float | None) -> str:
    return "" if v is None else repr(v)


def _answered(record: Mapping[str, Any]) -> str:
    """Which models answered; a warning when the figures are not a reproduction."""
    models = escape(str(record.get("models", "unknown")))
    kind = str(record.get("answered_by", ""))
    line = f'<p class="repro-models">models that answered here: {models}</p>'
    if record.get("reproduction") is False and kind != "none":
        why = NOT_REPRODUCTION.get(kind, f"{kind} answered")
        line += (
            f'<p class="warning repro-not">NOT a reproduction: {escape(why)}; a check that '
            "every row plays end to end, not evidence about the paper's method.</p>"
        )
    return line


_CLASSES = ("published", "ours", "n", "diff", "power", "verdict")
"""The class of each figure column after row and column (see ``HEADERS``)."""


def _cell_row(cell: Mapping[str, Any], axis: Axis | None) -> str:
    texts = cell_texts(cell)
    tds = "".join(f"<td>{escape(t)}</td>" for t in texts[:2])
    tds += f"<td>{escape(str(cell.get('metric', '')))}</td>"
    tds += f'<td class="repro-drawing">{cell_svg(cell, axis)}</td>'
    tds += "".join(
        f'<td class="repro-{k}">{escape(t)}</td>' for k, t in zip(_CLASSES, texts[2:], strict=True)
    )
    return f'<tr class="repro-row">{tds}</tr>'


def _mapping(value: Any) -> Mapping[str, Any]:
    """A mapping of a saved record, or an empty one (a file edited by hand)."""
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> str:
    return f"{value:,}" if type(value) is int else "-"


def _rows_table(record: Mapping[str, Any]) -> str:
    """Per row: its run, the tasks it played of those planned, what it spent."""
    rows = record.get("rows")
    if not isinstance(rows, Mapping) or not rows:
        return ""
    head = ["row", "run", "episodes", "errored", "calls", "tokens", "USD", "ran with"]
    body = []
    for row_id, info in rows.items():
        if not isinstance(info, Mapping):
            continue
        prompt, completion = info.get("prompt_tokens"), info.get("completion_tokens")
        tokens = (
            f"{prompt:,} + {completion:,}"
            if type(prompt) is int and type(completion) is int
            else "-"
        )
        usd = number(info.get("usd"))
        unpriced = info.get("unpriced")
        money = (
            f"${usd:,.4f}"
            if usd is not None
            else "unpriced: " + ", ".join(map(str, unpriced))
            if isinstance(unpriced, list) and unpriced
            else "-"
        )
        setup = _mapping(info.get("setup"))
        options = {**_mapping(setup.get("env_options")), **_mapping(setup.get("options"))}
        ran = f"split {setup.get('split', '-')}" + "".join(f", {k}={v}" for k, v in options.items())
        cells = [
            str(info.get("label", row_id)),
            str(info.get("run_id", "-")),
            f"{_count(info.get('episodes'))} of {_count(info.get('planned'))}",
            _count(info.get("errored")),
            _count(info.get("calls")),
            tokens,
            money,
            ran,
        ]
        body.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    return (
        f'<table class="reproduce-rows"><thead><tr>{th}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _tasks_line(record: Mapping[str, Any]) -> str:
    """The tasks covered: all of the experiment's, or a sample drawn across its groups."""
    tasks = record.get("tasks")
    if not isinstance(tasks, Mapping):
        return ""
    played, population = tasks.get("played"), tasks.get("population")
    text = f"tasks: {_count(played)} of the experiment's {_count(population)}"
    text += f" (split {tasks.get('split', '-')})"
    groups = tasks.get("groups")
    if tasks.get("sampled") and isinstance(groups, Mapping):
        shares = ", ".join(
            f"{g} {v[0]} of {v[1]}"
            for g, v in sorted(groups.items())
            if isinstance(v, list) and len(v) == 2
        )
        text += f", drawn across its task groups in proportion (seed {tasks.get('seed')}): {shares}"
    return f'<p class="repro-tasks">{escape(text)}</p>'


def _notes(record: Mapping[str, Any]) -> str:
    """Why the figures are not compared, or not a reproduction, where they are not."""
    out = ""
    differs = record.get("setup_differs")
    if record.get("compared") is False and isinstance(differs, list):
        out += (
            '<p class="warning repro-setup">Not compared with the paper: the setup differs '
            f"from the experiment's: {escape('; '.join(map(str, differs)))}.</p>"
        )
    why = record.get("why_not")
    if record.get("answered_by") == "model" and isinstance(why, list) and why:
        out += (
            '<p class="warning repro-partial">NOT a reproduction: '
            f"{escape('; '.join(map(str, why)))}.</p>"
        )
    rule = record.get("verdict_rule")
    if isinstance(rule, str):
        out += f'<p class="note repro-rule">{escape(rule)}</p>'
    return out


def reproduce_sections(records: Sequence[Mapping[str, Any]]) -> str:
    """One section per saved comparison (none when there is none)."""
    out = []
    for i, record in enumerate(records):
        cells = [c for c in record.get("cells", []) if isinstance(c, Mapping)]
        axes = column_axes(cells)
        rows = [_cell_row(c, axes.get(str(c.get("column", "")))) for c in cells]
        head = [*HEADERS[:2], "metric", "paper ■ vs ours ●", *HEADERS[2:]]
        th = "".join(f"<th>{escape(h)}</th>" for h in head)
        spread = record.get("spread_kind")
        parts = [
            f'<p class="sub">{escape(str(record.get("title") or ""))} '
            f"(experiment {escape(str(record.get('experiment')))}; saved in "
            f"{escape(str(record.get('path', '-')))})</p>",
            _answered(record),
            _tasks_line(record),
            _notes(record),
            f'<table class="reproduce"><thead><tr>{th}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>",
            '<p class="note">■ the paper\'s figure, its bar the spread it reports'
            + (f" ({escape(str(spread))})" if spread else "")
            + "; ● ours, its bar our 95% interval; the cells of a column share one axis.</p>",
            _rows_table(record),
        ]
        title = f"Reproduction: {record.get('paper', '?')}, {record.get('source', '?')}"
        out.append(section(f"reproduce-{i}", title, *parts))
    return "".join(out)
