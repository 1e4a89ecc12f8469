"""Text from models and environments, made safe to print on a terminal.

A model's answer is recorded as it came, and ``lorekit show`` prints it. Raw,
an answer can hold terminal escape sequences: OSC 52 writes the clipboard, OSC
0 sets the window title, CSI 2J clears the screen, and bidi overrides make a
line read differently from what it holds. Printed through these helpers every
such character shows as its escape (``\\x1b``, ``\\u202e``) instead of acting.

C0 and C1 control characters, DEL and the bidi controls are escaped; newline
and tab are kept by :func:`safe_text` (a multi-line answer keeps its layout)
and escaped too by :func:`safe_line` (a run id, a table cell, an error line).
This module is at the bottom of the layers: the CLI, the harness's views and
the agents' own views all print model text.

SQLite and requests to a model are the other places model text must survive:

A Python ``str`` may hold a lone UTF-16 surrogate (``'\\ud83d'``, half of an
emoji), e.g. from a JSON ``\\ud83d`` escape or a Python string literal in a
model's answer. SQLite stores UTF-8, which cannot encode it, so the insert
raises ``UnicodeEncodeError`` and the episode, build or run dies. Every place
that stores model text passes it through :func:`storable`, which keeps the
text and writes each lone surrogate as U+FFFD (the replacement character);
text without one is returned unchanged. Parsers that accept *structured*
model output (AutoManual's tool calls) refuse a lone surrogate as a malformed
answer instead, so the model is asked again; what is stored is then only
raw text kept for the record (answers, observations, manuals).

A request is JSON sent as UTF-8, so the same surrogate quoted back to a model
(an answer in the next prompt, an observation echoing it) would fail the call
and end the episode. ``lorekit.llm.base.Message`` and ``Completion`` pass their
text through :func:`storable` when built, which every request and every answer
does; the HTML report does the same for its whole page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029\ufeff"
"""Bidi marks, embeddings, overrides and isolates; line/paragraph separators
(a terminal may break a line there); the byte-order mark."""

_UNSAFE = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *map(ord, _BIDI), *range(0xD800, 0xE000)]
"""Also every surrogate: in a ``str`` one is always alone (half of a pair), and a
terminal's UTF-8 stream cannot carry it (printing it raises ``UnicodeEncodeError``)."""


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_LINE = {code: _escape(code) for code in _UNSAFE}
_TEXT = {code: esc for code, esc in _LINE.items() if code not in (0x0A, 0x09)}
_JSON = {code: f"\\u{code:04x}" for code in _UNSAFE if code >= 0x7F}


def safe_text(text: str) -> str:
    """``text`` with control characters escaped; newlines and tabs kept."""
    return text.translate(_TEXT)


def safe_line(text: str) -> str:
    """``text`` with every control character escaped, newlines and tabs too."""
    return text.translate(_LINE)


def safe_json(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with DEL, C1 and bidi characters written as
    ``\\uXXXX`` escapes: the same JSON value, nothing that acts on a terminal.
    (``json.dumps`` already escapes C0 controls.) Outside strings JSON has none
    of these characters, so the replacement only ever touches string contents."""
    return text.translate(_JSON)


def is_safe(text: str) -> bool:
    """Whether ``text`` prints as itself (no character :func:`safe_text` escapes)."""
    return safe_text(text) == text


REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """True when ``text`` cannot be encoded as UTF-8 (it holds a lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def storable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (unchanged if it has none)."""
    return _SURROGATE.sub(REPLACEMENT, text) if has_lone_surrogate(text) else text


def storable_row(row: Iterable[Any]) -> tuple[Any, ...]:
    """A row of SQL parameters with every string made :func:`storable`."""
    return tuple(storable(v) if isinstance(v, str) else v for v in row)
