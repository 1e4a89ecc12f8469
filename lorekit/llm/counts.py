"""Token counts a call may report, and how a count that cannot be one is described.

A server's usage block is data from outside: a proxy or a buggy server can send
``prompt_tokens: 10**19`` (which no SQLite integer holds, so the insert of the
call failed and took the whole episode with it), ``-5``, ``12.5`` or ``"12"``.
Such a count is *refused*: the call counts the local estimate instead (marked
``~`` like every estimate) and keeps a note of what was refused, so the record
says what happened instead of silently billing nonsense. Kept apart (and free
of imports) so that :mod:`lorekit.llm.base` and the wire parser share one rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeGuard

MAX_CALL_TOKENS = 1_000_000_000
"""The most tokens one call may count on either side: no model reads or writes a
billion tokens in one request; a larger number is a broken counter, not a bill."""

COUNT_FIELDS = ("prompt_tokens", "completion_tokens")


def is_token_count(value: object) -> TypeGuard[int]:
    """Whether ``value`` can be a token count of one call: an int in 0..MAX_CALL_TOKENS."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_CALL_TOKENS


def describe(name: str, value: object) -> str:
    """``name=value`` for a refused count, short even for a number of 5,000 digits
    (whose ``repr`` would raise: Python refuses to print ints of over 4,300 digits)."""
    if isinstance(value, int) and value.bit_length() > 128:
        shown = f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    else:
        text = repr(value)
        shown = text if len(text) <= 40 else text[:37] + "..."
    return f"{name}={shown}"


def refused_counts(raw: object) -> str | None:
    """What a usage mapping (a server's ``usage`` block) holds that is not a token count:
    ``"prompt_tokens=-5; completion_tokens='12'"``, or None when it holds none."""
    if not isinstance(raw, Mapping):
        return None
    bad = [
        describe(name, raw[name])
        for name in (*COUNT_FIELDS, "total_tokens")
        if raw.get(name) is not None and not is_token_count(raw[name])
    ]
    return "; ".join(bad) or None
