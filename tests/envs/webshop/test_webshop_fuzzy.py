"""The stdlib fuzzy matcher scores like thefuzz, so the core install rewards the same."""

from __future__ import annotations

import random
import string

import pytest

from lorekit.envs.webshop.fuzzy import indel_ratio, token_set_ratio_stdlib

fuzz = pytest.importorskip("thefuzz.fuzz")

WORDS = [
    "red",
    "navy",
    "dark",
    "wash",
    "16",
    "fl",
    "oz.",
    "ounce",
    "pack",
    "of",
    "2",
    "x-large",
    "gluten-free",
    "Sugar",
    "free",
]


def test_indel_ratio_bounds() -> None:
    assert indel_ratio("abc", "abc") == 100.0
    assert indel_ratio("abc", "xyz") == 0.0
    assert indel_ratio("", "") == 100.0


def test_matches_thefuzz_on_random_strings() -> None:
    rng = random.Random(1)
    for _ in range(3000):
        a = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5)))
        b = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5)))
        if rng.random() < 0.3:
            letters = string.ascii_letters + " -_/ïéÜ²ß"
            b = "".join(rng.choice(letters) for _ in range(rng.randint(0, 14)))
        assert token_set_ratio_stdlib(a, b) == fuzz.token_set_ratio(a, b), (a, b)


def test_without_thefuzz_the_stdlib_twin_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from lorekit.envs.webshop import fuzzy

    monkeypatch.setitem(sys.modules, "thefuzz", None)  # as if not installed
    assert fuzzy._pick() is token_set_ratio_stdlib


def test_a_missing_backend_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from lorekit.envs.webshop import build_index
    from lorekit.extras import MissingExtraError

    monkeypatch.setitem(sys.modules, "bm25s", None)
    with pytest.raises(MissingExtraError, match=r"lorekit\[webshop\]"):
        build_index(["a document"], "bm25s")
    with pytest.raises(ValueError, match="choose one of fts5, bm25s, tantivy"):
        build_index(["a document"], "lucene")
