"""Progress of long work on stderr: a bar for a person watching, nothing in a log.

Library functions that take long (collecting law records, generating games,
fetching data) accept a plain callback ``progress(done, total)``; the command
line passes the one :func:`stderr_progress` gives, which draws a bar only when
stderr is a terminal, so pipes, files and CI logs stay clean.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

ProgressCallback = Callable[[int, int], None]
"""``progress(done, total)``: called as work advances; ``total`` may grow."""


@contextlib.contextmanager
def stderr_progress(label: str, *, enabled: bool | None = None) -> Iterator[ProgressCallback]:
    """A callback that moves a bar named ``label`` on stderr.

    ``enabled`` None: only when stderr is a terminal. The bar disappears when
    the work ends; what the command prints after it stays.
    """
    show = sys.stderr.isatty() if enabled is None else enabled
    if not show:
        yield _quiet
        return
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(label, total=None)

    def advance(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield advance


def _quiet(done: int, total: int) -> None:
    """No bar: the work is being logged, not watched."""
