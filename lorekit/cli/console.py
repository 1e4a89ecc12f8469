"""The command line's two consoles: results on stdout, progress and notes on stderr.

Piped output (files, CI logs) gets a wide fixed width so tables never fold.
Every command prints through these two, so a test that captures stdout sees
what a person would.
"""

from __future__ import annotations

import sys

from rich.console import Console

PIPED_WIDTH = 160

console = Console(width=None if sys.stdout.isatty() else PIPED_WIDTH)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else PIPED_WIDTH)


def show_progress(flag: bool | None) -> bool:
    """A bar in a log file is one stale line; show it only to a person watching."""
    return flag if flag is not None else sys.stderr.isatty()
