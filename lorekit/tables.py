"""Tables that fit the terminal: key columns whole, the rest folded or left out.

Rich shrinks every column evenly when a table is wider than the console, so in
an 80-column terminal a success rate became ``42.…`` and a group ``dept…``.
:func:`fit_table` decides the widths itself instead: columns named in ``keep``
(and every column of numbers or short names that cannot wrap) stay whole,
columns with words fold onto more lines, and when even that is too wide the
columns in ``drop`` go, in that order, so the caller can say which are missing.
A table that fits is left exactly as it was built.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rich import box
from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.table import Column, Table

_HUGE = 100_000
"""A width no table reaches: measuring at it gives each column's natural width."""


def fit_table(
    console: Console,
    table: Table,
    *,
    keep: Collection[str] = (),
    drop: Sequence[str] = (),
    width: int | None = None,
) -> list[str]:
    """Make ``table`` fit ``width`` (default: the console's) without cutting
    a cell short; returns the headers of the columns it had to leave out.

    ``keep`` and ``drop`` name columns by header text. Kept columns never
    shrink; other columns shrink only down to their longest word, widest
    first; columns in ``drop`` are removed in order until the rest fits.
    """
    limit = console.width if width is None else width
    wide = console.options.update_width(_HUGE)
    if _total(console, table, wide) <= limit:
        return []
    # Narrow: two spaces between columns (blank dividers, one of padding), no edges.
    table.box = box.SIMPLE_HEAD if table.box is not None else None
    table.pad_edge = False
    table.collapse_padding = True
    table.show_edge = False
    dropped: list[str] = []
    pending = [h for h in drop if h in _headers(table)]
    while True:
        spans = [_span(console, wide, c, _header(c) in keep) for c in table.columns]
        overhead = _total(console, table, wide) - sum(hi for _, hi in spans)
        room = limit - overhead
        if sum(lo for lo, _ in spans) <= room or not pending:
            break
        name = pending.pop(0)
        table.columns = [c for c in table.columns if _header(c) != name]
        _reindex(table)
        dropped.append(name)
    _assign(table, spans, room)
    return dropped


def say_left_out(console: Console, headers: Sequence[str]) -> None:
    """One line under a table naming the columns :func:`fit_table` left out."""
    if headers:
        console.print(
            f"(left out at this width: {', '.join(headers)}; a wider terminal shows them)",
            highlight=False,
            markup=False,
        )


def _headers(table: Table) -> list[str]:
    return [_header(c) for c in table.columns]


def _header(column: Column) -> str:
    header = column.header
    return header if isinstance(header, str) else str(getattr(header, "plain", header))


def _span(console: Console, options: ConsoleOptions, column: Column, keep: bool) -> tuple[int, int]:
    """(narrowest, natural) content width of a column: a kept column's cells
    stay whole, a fixed-width column has only its own width."""
    if column.width is not None:
        return column.width, column.width
    head = Measurement.get(console, options, column.header)
    body = [Measurement.get(console, options, cell) for cell in column.cells]
    natural = max(m.maximum for m in [head, *body])
    if column.max_width is not None:
        natural = min(natural, column.max_width)
    if keep or column.no_wrap:  # every cell whole; a header of several words may wrap
        narrowest = max([head.minimum, *(m.maximum for m in body)])
    else:
        narrowest = max(m.minimum for m in [head, *body])
    if column.min_width is not None:
        narrowest = max(narrowest, min(column.min_width, natural))
    return min(narrowest, natural), natural


def _total(console: Console, table: Table, options: ConsoleOptions) -> int:
    """The table's natural width: every column at its widest, plus borders and padding."""
    return Measurement.get(console, options, table).maximum


def _reindex(table: Table) -> None:
    # Rich finds a column's edge padding by its position; keep it true after a removal.
    for index, column in enumerate(table.columns):
        column._index = index


def _assign(table: Table, spans: list[tuple[int, int]], room: int) -> None:
    """Fixed widths from natural ones: the widest shrinkable column gives up a
    character at a time until the table fits or nothing can shrink further."""
    widths = [hi for _, hi in spans]
    excess = sum(widths) - room
    while excess > 0:
        slack = [(w, i) for i, (w, (lo, _)) in enumerate(zip(widths, spans, strict=True)) if w > lo]
        if not slack:
            break
        _, i = max(slack)
        widths[i] -= 1
        excess -= 1
    for column, w, (lo, hi) in zip(table.columns, widths, spans, strict=True):
        column.width = w
        if lo == hi:  # a column that may not shrink may not wrap either
            column.no_wrap = True
