"""The report's reproduction section: a saved ``lorekit reproduce run`` comparison, each
cell drawn with the paper's figure beside ours.

``reproduce run`` saves its comparison as JSON (``reproduce/EXPERIMENT-RUN.json``
beside the run store, or under ``--out``). ``lorekit report`` finds the saved
comparisons whose rows' runs are on the page (or is handed them) and draws one
section per comparison: what was run, which models answered (a run with
scripted models or the bundled small model says in a warning that it is not a
reproduction), and per row and column a small chart: the published figure with
its spread where the paper gives one, ours with its 95% interval, the
difference and the verdict. Only the saved record is read, so this module
knows nothing of any paper, agent or env.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from lorekit import jsonscan
from lorekit.eval.report_html_runs import section
from lorekit.eval.report_html_svg import PALETTE, fmt
from lorekit.eval.store_rows import json_depth

MAX_COMPARISON_DEPTH = 20
"""A saved comparison nests a few levels (rows, cells, figures); a deeper file is no
comparison, and drawing one would walk it recursively."""
CELL_W, CELL_H = 240, 46
_PAD, _LABEL = 6, 40
VERDICT = {True: "compatible", False: "differs", None: "-"}
#: the dot of ours: the palette's green when compatible, its vermilion when not
VERDICT_COLOUR = {True: PALETTE[2], False: PALETTE[5], None: "#888888"}
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


def _number(value: Any) -> float | None:
    if type(value) not in (int, float) or value != value or abs(value) == float("inf"):
        return None
    return float(value)


def _verdict(cell: Mapping[str, Any]) -> bool | None:
    """The cell's verdict: True, False, or None for none (or anything else, a file
    edited by hand)."""
    compatible = cell.get("compatible")
    return compatible if isinstance(compatible, bool) else None


def cell_svg(cell: Mapping[str, Any]) -> str:
    """One cell drawn on its own axis: the paper's figure (a square, with its spread as a
    bar) above ours (a dot coloured by the verdict, with its interval as a bar)."""
    published, spread = _number(cell.get("published")), _number(cell.get("published_spread"))
    ours, low, high = (_number(cell.get(k)) for k in ("ours", "low", "high"))
    compatible = _verdict(cell)
    ends = [v for v in (published, ours, low, high) if v is not None]
    if published is not None and spread is not None:
        ends += [published - spread, published + spread]
    first, last = (min(ends), max(ends)) if ends else (0.0, 1.0)
    pad = (last - first) * 0.08 or max(abs(last), 1.0) * 0.1
    lo, hi = first - pad, last + pad
    width = CELL_W - _LABEL - 2 * _PAD

    def x(v: float) -> str:
        return f"{_LABEL + _PAD + (v - lo) / (hi - lo) * width:.1f}"

    body = [
        f'<line x1="{_LABEL + _PAD}" x2="{CELL_W - _PAD}" y1="37" y2="37" stroke="#bbbbbb"/>',
    ]
    marks = [(first, "start"), (last, "end")] if first < last else [(first, "middle")]
    for v, anchor in marks if ends else []:
        body.append(
            f'<text x="{x(v)}" y="46" font-size="8" fill="#777777" text-anchor="{anchor}">'
            f"{escape(fmt(v))}</text>"
        )
    body += _mark("paper", 12, published, spread, spread, x, PAPER_COLOUR, square=True)
    colour = VERDICT_COLOUR.get(compatible, VERDICT_COLOUR[None])
    if ours is not None and low is not None and high is not None:
        body += _mark("ours", 28, ours, ours - low, high - ours, x, colour, square=False)
    else:
        body += _mark("ours", 28, None, None, None, x, colour, square=False)
    title = (
        f"{cell.get('label')} / {cell.get('column')}: paper {_text(published, spread)}, "
        f"ours {_text(ours)}"
        + (f" [{fmt(low)}, {fmt(high)}]" if low is not None and high is not None else "")
    )
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
            ("verdict", VERDICT.get(compatible, "-")),
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


def _text(v: float | None, spread: float | None = None) -> str:
    if v is None:
        return "-"
    return fmt(v) + (f" ± {fmt(spread)}" if spread is not None else "")


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


def reproduce_sections(records: Sequence[Mapping[str, Any]]) -> str:
    """One section per saved comparison (none when there is none)."""
    out = []
    for i, record in enumerate(records):
        rows = []
        for cell in record.get("cells", []):
            if not isinstance(cell, Mapping):
                continue
            diff = _number(cell.get("difference"))
            n = f"{cell.get('n', 0)}" + (
                f" (+{cell['errored']} errored)" if cell.get("errored") else ""
            )
            ours, low, high = (_number(cell.get(k)) for k in ("ours", "low", "high"))
            interval = (
                f" [{fmt(low)}, {fmt(high)}]"
                if ours is not None and low is not None and high is not None
                else ""
            )
            texts = [
                str(cell.get("label", cell.get("row", ""))),
                str(cell.get("column", "")),
                str(cell.get("metric", "")),
            ]
            figures = [
                _text(_number(cell.get("published")), _number(cell.get("published_spread"))),
                _text(ours) + interval,
                "-" if diff is None else f"{diff:+.1f}",
                VERDICT.get(_verdict(cell), "-"),
                n,
            ]
            tds = "".join(f"<td>{escape(t)}</td>" for t in texts)
            tds += f'<td class="repro-drawing">{cell_svg(cell)}</td>'
            tds += "".join(
                f'<td class="repro-{k}">{escape(t)}</td>'
                for k, t in zip(("published", "ours", "diff", "verdict", "n"), figures, strict=True)
            )
            rows.append(f'<tr class="repro-row">{tds}</tr>')
        head = ["row", "column", "metric", "paper ■ vs ours ●", "published", "ours [95% CI]"]
        head += ["diff", "verdict", "episodes"]
        th = "".join(f"<th>{escape(h)}</th>" for h in head)
        spread = record.get("spread_kind")
        parts = [
            f'<p class="sub">{escape(str(record.get("title") or ""))} '
            f"(experiment {escape(str(record.get('experiment')))}; saved in "
            f"{escape(str(record.get('path', '-')))})</p>",
            _answered(record),
            f'<table class="reproduce"><thead><tr>{th}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>",
            '<p class="note">■ the paper\'s figure, its bar the spread it reports'
            + (f" ({escape(str(spread))})" if spread else "")
            + "; ● ours, its bar our 95% interval; compatible when they meet.</p>",
        ]
        title = f"Reproduction: {record.get('paper', '?')}, {record.get('source', '?')}"
        out.append(section(f"reproduce-{i}", title, *parts))
    return "".join(out)
