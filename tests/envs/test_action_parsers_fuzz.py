"""Actions are model output too: the MiniWoB++ action parser and Crafter's skill
calls give an action or their own error on any text (5,000 nested brackets
raised MemoryError out of the MiniWoB++ parser)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorekit.agents.teams.world.skills import parse_skill_call
from lorekit.agents.teams.world.skills_base import SkillError
from lorekit.envs.miniwob.actions import ActionSyntaxError, parse_action


@pytest.mark.parametrize(
    "text",
    [
        "click_xpath(" + "[1," * 20_000 + ")",
        "type(" + "-" * 300_000 + "1)",
        'type "' + "(" * 5_000 + '"',
    ],
)
def test_deeply_nested_miniwob_arguments_are_not_a_crash(text: str) -> None:
    with contextlib.suppress(ActionSyntaxError):
        parse_action(text)


ACTIONS = st.one_of(
    st.text(max_size=200),
    st.builds(
        lambda verb, piece, n: f"{verb}({piece * n})",
        st.sampled_from(["click_xpath", "type", "press_key", "collect", "place"]),
        st.sampled_from(["(", "[", "[1,", "-", "1", " ", '"', "\ud83d"]),
        st.integers(0, 30_000),
    ),
)


@settings(max_examples=150, deadline=2_000, suppress_health_check=[HealthCheck.too_slow])
@given(text=ACTIONS)
def test_any_miniwob_action_text_gives_an_action_or_a_syntax_error(text: str) -> None:
    with contextlib.suppress(ActionSyntaxError):
        parse_action(text)


@settings(max_examples=150, deadline=2_000, suppress_health_check=[HealthCheck.too_slow])
@given(text=ACTIONS)
def test_any_skill_call_text_gives_a_call_or_a_skill_error(text: str) -> None:
    with contextlib.suppress(SkillError):
        parse_skill_call(text)
