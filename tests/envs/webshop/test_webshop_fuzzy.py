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
            b = "".join(rng.choice(string.ascii_letters + " -") for _ in range(rng.randint(0, 14)))
        assert token_set_ratio_stdlib(a, b) == fuzz.token_set_ratio(a, b), (a, b)
