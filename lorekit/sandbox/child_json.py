"""The worker's JSON wire format, built from ``_json``'s C parts before any code runs.

Loaded by ``child.py`` from this directory (standard library only).
``json.dumps`` and ``json.loads`` look their work up on ``JSONEncoder`` and
``JSONDecoder`` at every call, and those are ordinary classes of a module
the code may import. Had the code changed one (the guard refuses that:
``Rules.writable``), the worker's own frames would pass through the code's
functions: the report of how the run ended, and in a session the parent's
next job with its limits and policy. These functions hold the C encoder and
scanner themselves, so nothing the code can reach is consulted. The output
is what ``json.dumps`` writes with its defaults (ASCII, ``", "`` and
``": "``), which the parent reads with the ordinary ``json``.
"""

from __future__ import annotations

import _json
from typing import Any

_make_encoder = _json.make_encoder
_ascii = _json.encode_basestring_ascii
_join = "".join
_WHITESPACE = " \t\n\r"
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class _ScannerSettings:
    """What the C scanner reads once, when it is made: plain ``json.loads`` defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan = _json.make_scanner(_ScannerSettings())  # type: ignore[arg-type]


def _refuse(value: object) -> None:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encode(value: Any) -> str:
    """``json.dumps(value)``, without a lookup on any class the code could change."""
    # a fresh encoder per call: its circular-reference markers start empty
    encoder = _make_encoder({}, _refuse, _ascii, None, ": ", ", ", False, False, True)
    return _join(encoder(value, 0))


def decode(data: bytes) -> Any:
    """``json.loads(data)`` for one UTF-8 frame; ``ValueError`` when it is not one JSON value."""
    text = data.decode("utf-8")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"malformed JSON at character {stop.value}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"extra data after character {end}")
    return value
