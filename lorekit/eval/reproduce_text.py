"""How a comparison's cell is written, the same in the terminal, the saved page and the report.

Cells are read as the saved JSON holds them (a mapping), so that the HTML report
writes a saved comparison with the very texts ``reproduce run`` printed, and a
comparison saved before a field existed still reads (its text is "-").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

HEADERS = [
    "row",
    "column",
    "published",
    "ours [95% CI]",
    "episodes",
    "diff [95% CI]",
    "power",
    "verdict",
]
"""The printed columns of a cell (:func:`cell_texts`)."""


def number(value: Any) -> float | None:
    """A finite number, else None (a hand-edited file may hold anything)."""
    if type(value) not in (int, float) or not math.isfinite(value):
        return None
    return float(value)


def figure(value: float | None, spread: float | None = None) -> str:
    """A figure to one decimal, as the papers print theirs; ``± spread`` where given."""
    if value is None:
        return "-"
    return f"{value:.1f}" + (f" ± {spread:.1f}" if spread is not None else "")


def with_interval(
    value: float | None, low: float | None, high: float | None, sign: str = ""
) -> str:
    """``12.3 [4.5, 20.1]``; ``sign="+"`` writes a difference (``+3.0 [-5.2, 11.2]``)."""
    if value is None:
        return "-"
    text = f"{value:{sign}.1f}"
    if low is None or high is None:
        return text
    return f"{text} [{low:{sign}.1f}, {high:{sign}.1f}]"


def episodes_text(cell: Mapping[str, Any]) -> str:
    """The episodes behind the figure: all of the column's finished ones, and, for a
    figure over successful episodes only (k_max), how many of them it counts."""
    n = cell.get("n", 0)
    played = cell.get("episodes")
    text = str(played if isinstance(played, int) else n)
    if cell.get("over") == "successes":
        text += f" ({n} successes)"
    if cell.get("errored"):
        text += f" (+{cell['errored']} errored)"
    return text


def power_text(cell: Mapping[str, Any]) -> str:
    """The chance of finding a real difference of the cell's ``detect``; where it is
    too low, the episodes that would be enough, or that none would."""
    power = number(cell.get("power"))
    if power is None:
        return "-"
    text = f"{100 * power:.0f}%"
    if cell.get("verdict") == "too few episodes":
        needed = cell.get("needed")
        text += f", {needed} needed" if isinstance(needed, int) else ", out of reach"
    return text


def verdict_text(cell: Mapping[str, Any]) -> str:
    """The saved verdict; a comparison saved before verdicts were words gives its boolean."""
    verdict = cell.get("verdict")
    if isinstance(verdict, str) and verdict:
        return verdict
    compatible = cell.get("compatible")
    return "compatible" if compatible is True else "differs" if compatible is False else "-"


def cell_texts(cell: Mapping[str, Any]) -> list[str]:
    """The printed columns of one cell (see :data:`HEADERS`)."""
    low, high = number(cell.get("diff_low")), number(cell.get("diff_high"))
    return [
        str(cell.get("label", cell.get("row", ""))),
        str(cell.get("column", "")),
        figure(number(cell.get("published")), number(cell.get("published_spread"))),
        with_interval(number(cell.get("ours")), number(cell.get("low")), number(cell.get("high"))),
        episodes_text(cell),
        with_interval(number(cell.get("difference")), low, high, sign="+"),
        power_text(cell),
        verdict_text(cell),
    ]
