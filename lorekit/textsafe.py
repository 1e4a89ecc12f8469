"""Model text into SQLite: a lone surrogate must not fail the insert.

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
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["REPLACEMENT", "has_lone_surrogate", "storable", "storable_row"]

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
