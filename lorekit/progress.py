"""Progress of long work on stderr: a live bar with an ETA for a person watching, a
plain line now and then for a log.

One implementation for everything that takes long: the harness's episodes, law
records, generated games, fetched data. :class:`ProgressReport` draws a bar
(done/total, elapsed, time left) on a terminal; on a pipe or a file it writes
one line every ``every_s`` seconds (``engine steps 1,200/20,000 (6%), 0:01:30
elapsed, about 0:22:30 left``), and a last one at the end if it wrote any, so a
short job leaves a log clean and a long one is never silent. Library functions
take a plain callback ``progress(done, total)``; :func:`stderr_progress` gives
the command line's.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Literal

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

ProgressCallback = Callable[[int, int], None]
"""``progress(done, total)``: called as work advances; ``total`` may grow."""

Mode = Literal["auto", "bar", "lines", "off"]

EVERY_S = 30.0
"""How often a log gets a progress line."""


def clock_text(seconds: float) -> str:
    """``H:MM:SS``."""
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class ProgressReport:
    """Progress of one job named ``label``; see the module docstring.

    ``mode`` ``auto`` draws a bar when ``console`` (stderr by default) is a
    terminal and writes lines otherwise; ``stats`` (a short text, e.g. a success
    rate) rides along in both. ``clock`` is for tests."""

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        console: Console | None = None,
        mode: Mode = "auto",
        every_s: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self.stats = ""
        self.console = console or Console(stderr=True)
        if mode == "auto":
            mode = "bar" if self.console.is_terminal else "lines"
        self.mode = mode
        self.every_s = every_s
        self._clock = clock
        self._start = clock()
        self._last_line = self._start
        self.lines_written = 0
        self._bar: Progress | None = None
        if mode == "bar":
            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[stats]}"),
                TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self._task = self._bar.add_task(label, total=total, stats="")

    def __enter__(self) -> ProgressReport:
        self._start = self._last_line = self._clock()
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self.mode == "lines" and self.lines_written:
            self._write_line()

    def update(self, done: int, total: int | None = None, stats: str | None = None) -> None:
        """``done`` of ``total`` (None keeps the last total) are finished."""
        self.done = done
        if total is not None:
            self.total = total
        if stats is not None:
            self.stats = stats
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=self.total, stats=self.stats)
        elif self.mode == "lines" and self._clock() - self._last_line >= self.every_s:
            self._write_line()

    def advance(self, by: int = 1, stats: str | None = None) -> None:
        self.update(self.done + by, stats=stats)

    def callback(self) -> ProgressCallback:
        """This report as a ``progress(done, total)`` callback."""
        return lambda done, total: self.update(done, total)

    def line(self) -> str:
        """The line a log gets now."""
        elapsed = self._clock() - self._start
        parts = [f"{self.label} {self.done:,}"]
        if self.total:
            parts[0] += f"/{self.total:,} ({self.done / self.total:.0%})"
        parts.append(f"{clock_text(elapsed)} elapsed")
        if self.total and 0 < self.done < self.total:
            left = elapsed / self.done * (self.total - self.done)
            parts.append(f"about {clock_text(left)} left")
        if self.stats:
            parts.append(self.stats)
        return ", ".join(parts)

    def _write_line(self) -> None:
        self._last_line = self._clock()
        self.lines_written += 1
        print(self.line(), file=self.console.file, flush=True)


@contextlib.contextmanager
def stderr_progress(label: str, *, enabled: bool | None = None) -> Iterator[ProgressCallback]:
    """A ``progress(done, total)`` callback reporting on stderr as ``label``.

    ``enabled`` None: a bar on a terminal, a line every 30 seconds otherwise;
    True: a bar; False: nothing."""
    mode: Mode = "auto" if enabled is None else ("bar" if enabled else "off")
    if mode == "off":
        yield _quiet
        return
    console = Console(stderr=True, file=sys.stderr)
    with ProgressReport(label, console=console, mode=mode) as report:
        yield report.callback()


def _quiet(done: int, total: int) -> None:
    """No report: asked for none."""
