"""The action check: what the model may say at node ``action``, and what is refused."""

from __future__ import annotations

import pytest

from lorekit.agents.spring.hooks import allowed_actions, parse_action
from lorekit.graph import AfterQueryError

ALLOWED = allowed_actions("noop, move_west, do, make_wood_pickaxe")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Action: move_west", "move_west"),
        ("I think so.\nAction: do\n", "do"),
        ("**Action:** `Make Wood Pickaxe`.", "make_wood_pickaxe"),
        ("action = move-west", "move_west"),
        ("Action: noop\nOn second thought...\nAction: do", "do"),  # the last line counts
        ("  DO  ", "do"),  # a bare name, alone
    ],
)
def test_accepted_answers(answer: str, expected: str) -> None:
    assert parse_action(answer, ALLOWED) == expected


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ("Action: move_west 3", "without a count: 'Action: move_west'"),
        ("Action: chop tree", "'chop tree' is not an allowed action"),
        ("Action: move_left", "Choose exactly one of: noop, move_west, do, make_wood_pickaxe"),
        ("I will walk west.\nThen chop.", "No line 'Action: <name>'"),
        ("Action:", "(nothing)"),
    ],
)
def test_refused_answers_say_what_to_fix(answer: str, says: str) -> None:
    with pytest.raises(AfterQueryError) as info:
        parse_action(answer, ALLOWED)
    assert says in str(info.value)


def test_allowed_actions_splits_the_database_text() -> None:
    assert allowed_actions(" noop,do ,, sleep") == ["noop", "do", "sleep"]
