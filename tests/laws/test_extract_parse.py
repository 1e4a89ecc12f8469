"""The extractor's answer reader and its small JSON Schema validator."""

from __future__ import annotations

import pytest

from lorekit.laws.extract_parse import (
    FormError,
    effects_schema,
    parse_answer,
    preconditions_schema,
    validate,
)

PRE = preconditions_schema(["wood", "stone"], ["table", "tree"])


def test_a_conforming_form_has_no_problems() -> None:
    form = {"requires": {"wood": 1}, "nearby": ["table"], "faced": []}
    assert validate(form, PRE) == []


@pytest.mark.parametrize(
    ("form", "problem"),
    [
        ([], "the form must be of type object"),
        ({"requires": {}, "nearby": []}, "lacks the field 'faced'"),
        ({"requires": {"gold": 1}, "nearby": [], "faced": []}, "requires: 'gold' is not a known"),
        ({"requires": {"wood": -1}, "nearby": [], "faced": []}, "at least 1, got -1"),
        ({"requires": {"wood": 1.5}, "nearby": [], "faced": []}, "of type integer, got 1.5"),
        ({"requires": {}, "nearby": "table", "faced": []}, "nearby must be of type array"),
        ({"requires": {}, "nearby": ["table", "table"], "faced": []}, "more than once"),
        ({"requires": {}, "nearby": [], "faced": ["lava"]}, 'faced[0]: "lava" is not one of'),
    ],
)
def test_each_violation_is_named_with_where_it_is(form: object, problem: str) -> None:
    problems = validate(form, PRE)
    assert any(problem in p for p in problems), problems


def test_every_violation_is_reported_at_once() -> None:
    form = {"requires": {"gold": 0}, "nearby": ["cave"], "faced": [], "note": 1}
    assert len(validate(form, PRE)) == 4


def test_the_last_fenced_block_is_the_form_and_the_rest_the_text() -> None:
    answer = (
        'First I thought ```json\n{"costs": {}}\n``` but no.\n'
        'It uses one wood.\n```json\n{"costs": {"wood": 1}, "gains": {}}\n```\n'
    )
    got = parse_answer(answer, effects_schema(["wood"]))
    assert got.form == {"costs": {"wood": 1}, "gains": {}}
    assert got.text.endswith("It uses one wood.")


def test_a_bad_later_block_is_not_rescued_by_an_earlier_good_one() -> None:
    answer = (
        '```json\n{"costs": {}, "gains": {}}\n```\n```json\n{"costs": {"x": 1}, "gains": {}}\n```'
    )
    with pytest.raises(FormError, match="'x' is not a known name"):
        parse_answer(answer, effects_schema(["wood"]))


def test_an_unparsable_block_says_where() -> None:
    with pytest.raises(FormError, match=r"does not parse: .* line 1 column"):
        parse_answer('```json\n{"costs": {"wood": 1}, "gains": }\n```', effects_schema(["wood"]))
