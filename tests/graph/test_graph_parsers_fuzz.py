"""The graph's answer parsers on hostile text: a value or AfterQueryError, quickly.

``json_take: last`` decoded from every ``{``: 200,000 of them took 12.5 s, and
5,000 ``[`` raised RecursionError. :mod:`lorekit.jsonscan` reads each
character a bounded number of times; the step count below checks it without
a clock, the named case with a wide time bound.
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorekit import jsonscan
from lorekit.graph import AfterQueryError
from lorekit.graph.parsers import choice_parser, json_parser, text_parser

PARSERS = {
    "json whole": json_parser(None),
    "json last": json_parser(None, take="last"),
    "json schema": json_parser({"type": "object", "required": ["a"]}),
    "choice": choice_parser(["yes", "no"]),
    "text": text_parser,
}
HOSTILE = [
    "{" * 200_000,
    "[" * 5_000,
    '{"a":' * 5_000,
    "[1," * 50_000,
    '{"a": ' + "1" * 5_000 + "}",
    "1" * 5_000,
    "```json" + " " * 50_000 + "x",
    '["{' * 50_000,
]


class _Counting:
    """A JSONDecoder stand-in that counts the characters it is handed."""

    def __init__(self) -> None:
        self.chars = 0
        self.inner = json.JSONDecoder()

    def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
        self.chars += len(s) - idx
        return self.inner.raw_decode(s, idx)


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "{" * n,
        lambda n: '{"a": [1, {"b": 2}], x ' * (n // 20),
        lambda n: '["{' * (n // 3),
        lambda n: '{"a" ' * (n // 5),
        lambda n: "[" * 500 + "1, " * n,
    ],
)
def test_the_json_scan_reads_each_character_a_bounded_number_of_times(
    make: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in (10_000, 40_000):
        counter = _Counting()
        monkeypatch.setattr(jsonscan, "_DECODER", counter)
        jsonscan.values(make(n))
        assert counter.chars <= 600 * n  # the old scan: about n * n / 2


def test_two_hundred_thousand_braces_take_well_under_a_second_per_scan() -> None:
    parse = json_parser(None, take="last")
    start = time.perf_counter()
    with pytest.raises(AfterQueryError):
        parse("{" * 200_000)
    assert time.perf_counter() - start < 3.0  # 12.5 s before; milliseconds now
    # the last value still wins, and values nested in broken JSON are still found
    assert parse('draft {"a": 1} then {"a": 2} done') == {"a": 2}
    assert parse('{"a": {"b": 1}, oops} and prose') == {"b": 1}
    assert parse('x {"s": "a \\" } {", "t": [1]} y') == {"s": 'a " } {', "t": [1]}
    assert parse('[1, 2] {"k": "v"') == [1, 2]


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("name", sorted(PARSERS))
def test_hostile_answers_are_after_query_errors(name: str, text: str) -> None:
    start = time.perf_counter()
    with contextlib.suppress(AfterQueryError):
        PARSERS[name](text)
    assert time.perf_counter() - start < 3.0


JSONISH = st.one_of(
    st.text(max_size=300),
    st.builds(
        lambda piece, n, tail: piece * n + tail,
        st.sampled_from(["{", "[", '{"a":', "[1,", "9", " "]),
        st.integers(0, 6_000),
        st.sampled_from(["", "}", "]", "1", '"']),
    ),
    st.lists(
        st.sampled_from(
            ["{", "}", "[", "]", '"', "\\", ":", ",", "1", " ", "a", "```", "json", "\ud83d"]
        ),
        max_size=200,
    ).map("".join),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda kids: (
            st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids, max_size=3)
        ),
        max_leaves=20,
    ).map(lambda v: "prose " + json.dumps(v) + " more"),
)


@pytest.mark.parametrize("name", sorted(PARSERS))
@settings(max_examples=100, deadline=2_000, suppress_health_check=[HealthCheck.too_slow])
@given(text=JSONISH)
def test_any_text_gives_a_value_or_an_after_query_error(name: str, text: str) -> None:
    with contextlib.suppress(AfterQueryError):
        PARSERS[name](text)


@settings(max_examples=150, deadline=2_000)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda kids: (
            st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids, max_size=3)
        ),
        max_leaves=20,
    ),
    before=st.text(alphabet="ab {}[]\n", max_size=30),
)
def test_the_last_json_value_after_prose_is_found(value: Any, before: str) -> None:
    if not isinstance(value, dict | list):
        return
    text = before + " " + json.dumps(value)
    assert jsonscan.values(text)[-1][2] == value
