"""Category labels under a chart's x axis that never overlap, however long the names.

Task groups, roles and Crafter achievements are user data of any length: cut
to a fixed number of characters and centred under their bars, six long group
names ran into each other. Here every label is measured (an estimate of its
width in the page's font, on the wide side) and the layout chosen to fit:

1. horizontal and whole, when every label fits its slot;
2. otherwise slanted at 45 degrees, every ``k``-th label only when the slots are
   too narrow for even slanted lines of text to stay apart, each cut (with an
   ellipsis; the whole name in its tooltip and in the table beside the chart)
   so that it stays inside the figure on the left and below.

The tests check the result from the SVG itself, and in Chromium.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

#: Font size of tick labels (px; ``svg.plot text`` in report_html.css).
FONT_PX = 11.0
#: Height of a line of tick text and the least gap between two slanted labels (px).
LINE_PX = 14.0
ANGLE = 45.0
#: Longest slanted label (px along its baseline): the figure grows by about 0.7 of it.
MAX_SLANT_PX = 170.0
_NARROW = frozenset("ijlI.,:;'|!")
_MEDIUM = frozenset('frt-()[]{} /\\"`')
_WIDE = frozenset("mwMW@%")


def text_width(text: str, font_px: float = FONT_PX) -> float:
    """Width of ``text`` in DejaVu Sans (the widest common sans; system-ui elsewhere is
    narrower), by character class, rounded up: an estimate that errs on the wide side."""
    em = 0.0
    for ch in text:
        if ch in _NARROW:
            em += 0.30
        elif ch in _MEDIUM:
            em += 0.42
        elif ch in _WIDE or ord(ch) > 0x2E7F:  # wide letters, CJK and the like
            em += 1.0
        elif ch.isupper():
            em += 0.80
        else:
            em += 0.64
    return em * font_px


def fit(text: str, max_px: float) -> str:
    """``text`` cut with an ellipsis so that it is at most ``max_px`` wide."""
    if text_width(text) <= max_px:
        return text
    out = text
    while out and text_width(out + "…") > max_px:
        out = out[:-1]
    return out + "…"


@dataclass(frozen=True, slots=True)
class Layout:
    """The labels of one axis, as SVG, and how much taller the figure must be for them."""

    svg: list[str]
    extra_height: float
    slanted: bool
    every: int


def category_labels(
    categories: Sequence[str], x0: float, slot: float, baseline: float, every: int = 1
) -> Layout:
    """Labels for categories centred at ``x0 + slot * (i + 0.5)``, below ``baseline``;
    at least every ``every``-th one is drawn."""
    every = max(1, every)
    widths = [text_width(c) for c in categories]
    if not categories or max(widths) <= slot * every - 6:
        svg = [
            f'<text x="{_num(x0 + slot * (i + 0.5))}" y="{_num(baseline + 16)}" class="tick" '
            f'text-anchor="middle">{escape(c)}</text>'
            for i, c in enumerate(categories)
            if i % every == 0
        ]
        return Layout(svg, 0.0, False, every)
    sin = math.sin(math.radians(ANGLE))
    every = max(every, math.ceil(LINE_PX / (slot * sin)))
    svg, longest = [], 0.0
    for i, c in enumerate(categories):
        if i % every:
            continue
        cx = x0 + slot * (i + 0.5)
        short = fit(c, min(MAX_SLANT_PX, (cx - 2) / math.cos(math.radians(ANGLE))))
        longest = max(longest, text_width(short))
        tip = f"<title>{escape(c)}</title>" if short != c else ""
        svg.append(
            f'<text transform="translate({_num(cx)} {_num(baseline + 8)}) rotate(-{ANGLE:g})" '
            f'class="tick slanted" text-anchor="end">{tip}{escape(short)}</text>'
        )
    return Layout(svg, math.ceil(longest * sin + LINE_PX), True, every)


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")
