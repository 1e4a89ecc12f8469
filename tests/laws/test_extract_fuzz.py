"""The laws extractor's answer parsing and the rewarder's code extraction on
hostile text: an Answer or FormError (a string or None), quickly.

The bare-object scan decoded from every ``{`` (quadratic: 12.5 s on 200,000),
and a 5,000-digit number or 5,000 nested objects escaped as ValueError or
RecursionError instead of the FormError the extractor answers with a retry.
"""

from __future__ import annotations

import contextlib
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorekit.laws.extract_parse import FormError, counts_schema, effects_schema, parse_answer
from lorekit.laws.rewarder import extract_function

SCHEMA = effects_schema(["wood", "stone"])


@pytest.mark.parametrize(
    "text",
    [
        "{" * 200_000,
        '{"a":' * 5_000,
        '{"wood": ' + "1" * 5_000 + "}",
        '```json\n{"wood": ' + "1" * 5_000 + "}\n```",
        "```json\n" + "[" * 5_000 + "\n```",
        '{"a" ' * 50_000,
        "```" + " " * 50_000 + "x",
    ],
)
def test_hostile_answers_are_form_errors_quickly(text: str) -> None:
    start = time.perf_counter()
    with pytest.raises(FormError):
        parse_answer(text, counts_schema(["wood"]))
    assert time.perf_counter() - start < 3.0


def test_a_deep_value_in_a_problem_message_is_cut_short() -> None:
    deep = json.dumps({"costs": [[[[["x" * 500]]]]], "gains": {}})
    with pytest.raises(FormError) as err:
        parse_answer(deep, SCHEMA)
    assert len(str(err.value)) < 400
    # a bare object after prose with braces is still found
    answer = 'Use {braces} freely. {"costs": {"wood": 1}, "gains": {"stone": 2}}'
    parsed = parse_answer(answer, SCHEMA)
    assert parsed.form == {"costs": {"wood": 1}, "gains": {"stone": 2}}
    assert parsed.text == "Use {braces} freely."


@pytest.mark.parametrize("text", ["```py" + " " * 50_000 + "x", "```\n" + " \n" * 50_000 + "```"])
def test_the_rewarders_code_extraction_is_linear(text: str) -> None:
    start = time.perf_counter()
    assert extract_function(text) is None
    assert time.perf_counter() - start < 3.0


TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(
        st.sampled_from(
            [
                "{",
                "}",
                "[",
                "]",
                '"',
                "\\",
                ":",
                ",",
                "1",
                " ",
                "wood",
                "```",
                "```json\n",
                "\n",
                "\ud83d",
            ]
        ),
        max_size=200,
    ).map("".join),
    st.builds(
        lambda piece, n: piece * n,
        st.sampled_from(["{", "[", '{"a":', " ", "9"]),
        st.integers(0, 6_000),
    ),
)


@settings(max_examples=150, deadline=2_000, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_any_answer_gives_an_answer_or_a_form_error(text: str) -> None:
    with contextlib.suppress(FormError):
        parse_answer(text, SCHEMA)


@settings(max_examples=100, deadline=2_000, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_any_answer_gives_code_or_none(text: str) -> None:
    code = extract_function(text)
    assert code is None or code.endswith("\n")
