"""The command line's two consoles: results on stdout, progress and notes on stderr.

Piped output (files, CI logs) gets a wide fixed width so tables never fold.
Every command prints through these two, so a test that captures stdout sees
what a person would.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich.console import Console

PIPED_WIDTH = 160


def width(stream: TextIO) -> int | None:
    """A terminal's own width; piped output (files, CI logs) gets $COLUMNS when
    set, else a wide fixed width so tables never fold."""
    columns = os.environ.get("COLUMNS", "")
    wanted = int(columns) if columns.isdigit() else 0
    if stream.isatty():
        return None
    return wanted if wanted > 0 else PIPED_WIDTH


console = Console(width=width(sys.stdout))
err_console = Console(stderr=True, width=width(sys.stderr))


def show_progress(flag: bool | None) -> bool:
    """A bar in a log file is one stale line; show it only to a person watching."""
    return flag if flag is not None else sys.stderr.isatty()
