"""``token_set_ratio``: the fuzzy match WebShop's reward uses (thefuzz), with a stdlib twin.

The reward calls a goal attribute or option matched when its token-set
similarity to the product's exceeds 85. With the ``webshop`` extra installed
this is thefuzz's own function (on rapidfuzz); without it, a pure-Python
version of the same definition (non-ASCII characters dropped, lower-case
alphanumeric tokens, the shared
tokens compared with each side's rest by the Indel ratio, rounded like
thefuzz). A test checks the two agree on random strings, so the core install
scores like the extra does.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_NON_ALNUM = re.compile(r"[^0-9a-zA-Z]+")


def _process(text: str) -> str:
    """thefuzz's preprocessing: drop non-ASCII characters, then everything but letters
    and digits becomes a space; lower case."""
    ascii_only = text.encode("ascii", "ignore").decode("ascii")
    return _NON_ALNUM.sub(" ", ascii_only).lower().strip()


def _lcs(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for ch in a:
        current = [0]
        for j, other in enumerate(b, 1):
            current.append(previous[j - 1] + 1 if ch == other else max(previous[j], current[-1]))
        previous = current
    return previous[-1]


def indel_ratio(a: str, b: str) -> float:
    """100 * (1 - indel distance / total length): 100 for equal strings."""
    total = len(a) + len(b)
    if total == 0:
        return 100.0
    return 100.0 * 2 * _lcs(a, b) / total


def token_set_ratio_stdlib(left: str, right: str) -> int:
    """thefuzz's ``token_set_ratio`` without rapidfuzz (same definition, same rounding)."""
    a = set(_process(left).split())
    b = set(_process(right).split())
    if not a or not b:
        return 0
    shared = a & b
    only_a = a - b
    only_b = b - a
    if shared and (not only_a or not only_b):
        return 100
    sect = " ".join(sorted(shared))
    rest_a = " ".join(sorted(only_a))
    rest_b = " ".join(sorted(only_b))
    full_a = f"{sect} {rest_a}" if sect else rest_a
    full_b = f"{sect} {rest_b}" if sect else rest_b
    best = indel_ratio(full_a, full_b)
    if sect:
        # The shared part versus each side: rapidfuzz scores it from lengths alone.
        for full in (full_a, full_b):
            best = max(best, indel_ratio(sect, full))
    return round(best)


def _pick() -> Callable[[str, str], int]:
    try:
        from thefuzz import fuzz
    except ImportError:
        return token_set_ratio_stdlib
    return fuzz.token_set_ratio  # type: ignore[no-any-return]


token_set_ratio: Callable[[str, str], int] = _pick()
"""The matcher the reward uses: thefuzz's when installed, else the stdlib twin."""
