"""Small SVG charts for the HTML report, written by hand.

Why not matplotlib: the report needs four kinds of chart (grouped bars with
error bars, dots or lines over x, a histogram), which take a page of code
here; matplotlib would add a large optional dependency (and numpy's import
time) for them, writes SVG with every glyph as a path (large, unsearchable,
fixed fonts), and needs a backend set up per process. These charts are a few
kilobytes, use the page's font and colours (CSS classes), keep their text
selectable, and come out the same on every machine.

Every piece of text is escaped here: labels come from run ids, task groups
and roles, which are user data.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from lorekit.eval.report_html_axis import category_labels

#: Okabe & Ito's colour-blind-safe palette.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
W, H = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 14, 48


@dataclass(frozen=True, slots=True)
class Series:
    """One named set of values: bar heights (with errors) or (x, y) points."""

    label: str
    values: Sequence[float] = ()
    errors: Sequence[float] = ()
    points: Sequence[tuple[float, float]] = ()
    #: the series' own colour (a run keeps one colour in every chart); "" takes the palette's
    colour: str = ""
    #: an SVG stroke-dasharray, to tell apart lines of one colour (the seeds of a run)
    dash: str = ""


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


_HEX = re.compile(r"#[0-9A-Fa-f]{6}")


def series_colour(s: Series, i: int) -> str:
    """The colour of series ``s``, ``i``-th in its chart: its own, else the palette's."""
    return s.colour if _HEX.fullmatch(s.colour) else colour(i)


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    ticks, t = [], first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    return ticks


def fmt(v: float, percent: bool = False) -> str:
    if percent:
        return f"{v * 100:.0f}%"
    if abs(v) >= 1e6:
        return f"{v / 1e6:g}M"
    if abs(v) >= 10_000:
        return f"{v / 1e3:g}k"
    if v != 0 and abs(v) < 0.01:
        return f"{v:.2g}"
    return f"{v:,.2f}".rstrip("0").rstrip(".")


def _frame(
    name: str, title: str, body: list[str], series: Sequence[Series], height: int = H
) -> str:
    """The figure: caption, a legend (HTML, so long run names wrap instead of running off
    the chart) when there is more than one series, and the SVG."""
    keys = [
        f'<span class="key"><i style="background:{series_colour(s, i)}"></i>{escape(s.label)}'
        "</span>"
        for i, s in enumerate(series if len(series) > 1 else ())
    ]
    legend = f'<div class="legend">{"".join(keys)}</div>' if keys else ""
    return (
        f'<figure class="chart"><figcaption>{escape(title)}</figcaption>{legend}'
        f'<svg class="plot" data-plot="{escape(name)}" viewBox="0 0 {W} {height}" '
        f'width="{W}" height="{height}" role="img" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg></figure>"
    )


def _y_axis(ticks: list[float], y: object, percent: bool, height: int, label: str) -> list[str]:
    out = []
    for t in ticks:
        py = y(t)  # type: ignore[operator]
        out.append(
            f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{_num(py)}" y2="{_num(py)}" class="grid"/>'
            f'<text x="{LEFT - 6}" y="{_num(py + 4)}" class="tick" text-anchor="end">'
            f"{escape(fmt(t, percent))}</text>"
        )
    if label:
        mid = (TOP + height - BOTTOM) / 2
        out.append(
            f'<text transform="translate(12 {_num(mid)}) rotate(-90)" class="axis" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    return out


def bar_chart(
    name: str,
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    *,
    percent: bool = False,
    y_label: str = "",
    x_label: str = "",
    label_every: int = 1,
) -> str:
    """Grouped bars, one group per category and one bar per series, with ±error whiskers.
    The category labels lie flat or slant, whichever keeps them apart
    (:func:`~lorekit.eval.report_html_axis.category_labels`); the figure grows to hold them."""
    bottom = H - BOTTOM
    n_cat, n_ser = max(len(categories), 1), max(len(series), 1)
    slot = (W - LEFT - RIGHT) / n_cat
    labels = category_labels(categories, LEFT, slot, bottom, label_every)
    height = int(H + labels.extra_height)
    top_value = (
        max(
            (v + (s.errors[i] if i < len(s.errors) else 0.0))
            for s in series
            for i, v in enumerate(s.values)
        )
        if any(s.values for s in series)
        else 1.0
    )
    hi = 1.0 if percent else max(top_value, 1e-9) * 1.1
    ticks = nice_ticks(0.0, hi)
    hi = max(hi, ticks[-1])

    def y(v: float) -> float:
        return bottom - (bottom - TOP) * v / hi

    body = _y_axis(ticks, y, percent, H, y_label)
    bar = min(slot * 0.8 / n_ser, 48)
    for c, cat in enumerate(categories):
        x0 = LEFT + slot * c + (slot - bar * n_ser) / 2
        for s_i, s in enumerate(series):
            if c >= len(s.values):
                continue
            v = s.values[c]
            x = x0 + bar * s_i
            tip = f"{s.label} · {cat}: {fmt(v, percent)}"
            err = s.errors[c] if c < len(s.errors) else 0.0
            if err:
                tip += f" ± {fmt(err, percent)}"
            body.append(
                f'<rect class="bar" x="{_num(x)}" y="{_num(y(v))}" width="{_num(bar - 1)}" '
                f'height="{_num(max(bottom - y(v), 0))}" fill="{series_colour(s, s_i)}">'
                f"<title>{escape(tip)}</title></rect>"
            )
            if err:
                cx, lo, up = x + (bar - 1) / 2, y(max(v - err, 0)), y(min(v + err, hi))
                body.append(
                    f'<path class="whisker" d="M{_num(cx)} {_num(lo)}V{_num(up)}'
                    f'M{_num(cx - 4)} {_num(lo)}h8M{_num(cx - 4)} {_num(up)}h8"/>'
                )
    body += labels.svg
    if x_label:
        body.append(
            f'<text x="{(LEFT + W - RIGHT) // 2}" y="{height - 8}" class="axis" '
            f'text-anchor="middle">{escape(x_label)}</text>'
        )
    body.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{bottom}" y2="{bottom}" class="axis"/>')
    return _frame(name, title, body, series, height)


def xy_chart(
    name: str,
    title: str,
    series: Sequence[Series],
    *,
    x_label: str = "",
    y_label: str = "",
    lines: bool = True,
    dots: bool = True,
) -> str:
    """Points over a numeric x axis, one colour per series, joined by lines or not."""
    pts = [p for s in series for p in s.points]
    if not pts:
        pts = [(0.0, 0.0)]
    x_lo, x_hi = min(p[0] for p in pts), max(p[0] for p in pts)
    y_lo, y_hi = min(0.0, min(p[1] for p in pts)), max(p[1] for p in pts)
    x_ticks, y_ticks = nice_ticks(x_lo, x_hi), nice_ticks(y_lo, y_hi * 1.05 or 1.0)
    x_lo, x_hi = min(x_lo, x_ticks[0]), max(x_hi, x_ticks[-1])
    y_lo, y_hi = min(y_lo, y_ticks[0]), max(y_hi, y_ticks[-1])
    bottom = H - BOTTOM

    def x(v: float) -> float:
        return LEFT + (W - LEFT - RIGHT) * (v - x_lo) / ((x_hi - x_lo) or 1.0)

    def y(v: float) -> float:
        return bottom - (bottom - TOP) * (v - y_lo) / ((y_hi - y_lo) or 1.0)

    body = _y_axis(y_ticks, y, False, H, y_label)
    for t in x_ticks:
        body.append(
            f'<text x="{_num(x(t))}" y="{bottom + 16}" class="tick" text-anchor="middle">'
            f"{escape(fmt(t))}</text>"
        )
    if x_label:
        body.append(
            f'<text x="{(LEFT + W - RIGHT) // 2}" y="{H - 8}" class="axis" '
            f'text-anchor="middle">{escape(x_label)}</text>'
        )
    body.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{bottom}" y2="{bottom}" class="axis"/>')
    for i, s in enumerate(series):
        if lines and len(s.points) > 1:
            d = " ".join(
                f"{'M' if j == 0 else 'L'}{_num(x(a))} {_num(y(b))}"
                for j, (a, b) in enumerate(s.points)
            )
            dash = f' stroke-dasharray="{escape(s.dash)}"' if s.dash else ""
            body.append(f'<path class="line" d="{d}" stroke="{series_colour(s, i)}"{dash}/>')
        if dots:
            fill = series_colour(s, i)
            for a, b in s.points:
                body.append(
                    f'<circle class="dot" cx="{_num(x(a))}" cy="{_num(y(b))}" r="3" '
                    f'fill="{fill}"><title>{escape(f"{s.label}: {fmt(a)}, {fmt(b)}")}'
                    "</title></circle>"
                )
    return _frame(name, title, body, series)


def histogram(
    name: str, title: str, series: Sequence[Series], *, bins: int = 20, x_label: str = ""
) -> str:
    """Counts of each series' values in equal bins from 0 to the 99th percentile
    (larger values go in the last bin, so one slow call does not flatten the rest)."""
    from lorekit.eval.report_html_data import percentile

    every = [v for s in series for v in s.values]
    top = percentile(every, 0.99) or max(every, default=1.0) or 1.0
    edges = nice_ticks(0.0, top, bins)
    width = edges[1] - edges[0]
    n = max(1, math.ceil(top / width - 1e-9))
    unit, scale = ("ms", 1e3) if top < 1 else ("s", 1.0)
    cats = [f"{fmt(width * (i + 0.5) * scale)} {unit}" for i in range(n)]  # bin centres
    counted = []
    for s in series:
        counts = [0.0] * n
        for v in s.values:
            counts[min(int(v / width), n - 1)] += 1
        counted.append(Series(s.label, counts, colour=s.colour))
    return bar_chart(
        name,
        title,
        cats,
        counted,
        y_label="calls",
        x_label=x_label,
        label_every=math.ceil(n / 8),
    )
