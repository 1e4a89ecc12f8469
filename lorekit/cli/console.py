"""The command line's two consoles: results on stdout, progress and notes on stderr.

Piped output (files, CI logs) gets a wide fixed width so tables never fold.
Every command prints through these two, so a test that captures stdout sees
what a person would. Both escape control characters in what they print
(:mod:`lorekit.textsafe`): model and env text never acts on the terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from lorekit.textsafe import is_safe, safe_text

PIPED_WIDTH = 160


def width(stream: TextIO) -> int | None:
    """A terminal's own width; piped output (files, CI logs) gets $COLUMNS when
    set, else a wide fixed width so tables never fold."""
    columns = os.environ.get("COLUMNS", "")
    wanted = int(columns) if columns.isdigit() else 0
    if stream.isatty():
        return None
    return wanted if wanted > 0 else PIPED_WIDTH


class SafeConsole(Console):
    """A rich console that prints control characters of its text as escapes.

    Strings are escaped before layout (``render_str``: a cell's width is that
    of what is shown); any other renderable (a ``Text`` or ``Syntax`` built
    from model text) is escaped as its segments are written. Styles and rich's
    own control codes are untouched."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(safe_text(text), **kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control or is_safe(seg.text) else Segment(safe_text(seg.text), seg.style)
            for seg in buffer
        )


console = SafeConsole(width=width(sys.stdout))
err_console = SafeConsole(stderr=True, width=width(sys.stderr))


def show_progress(flag: bool | None) -> bool:
    """Whether to report progress: unless ``--no-progress``. A person at a terminal gets
    a bar, a log a line every 30 seconds (:mod:`lorekit.progress`)."""
    return flag is not False
