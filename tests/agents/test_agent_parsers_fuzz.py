"""Every parser of model output in the agents: any text gives a result or the
parser's own error (the "malformed answer, ask again" path), quickly.

The named cases are the red team's (issue 25): a line of spaces made ADaPT's
step pattern run for a minute inside the event loop; 5,000 brackets or digits
raised RecursionError / ValueError out of the parsers. Each runs well under a
second now; the bounds below are wide so a loaded machine does not fail them.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorekit.agents.adapt.baselines import _REFLECTION
from lorekit.agents.adapt.bridge import parse_goal
from lorekit.agents.adapt.order import OrderError, parse_execution_order
from lorekit.agents.adapt.planner import PlanError, parse_plan
from lorekit.agents.automanual import planner_parse
from lorekit.agents.automanual.builder import parse_diagnosis
from lorekit.agents.automanual.formulator import parse_manual
from lorekit.agents.automanual.rulediff import rule_number
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.agents.automanual.toolcalls import ToolCallError, ToolSpec, parse_tool_calls
from lorekit.agents.react_grammar import parse_react
from lorekit.agents.spring.hooks import parse_action
from lorekit.agents.teams.answers import AnswerError, parse_json
from lorekit.graph import AfterQueryError

BOUND_S = 2.0
"""The floor of a parser's time bound (the named inputs took 10 s to minutes before and
take milliseconds now); on a busy machine it grows with a linear pass's time."""
TOOLS = {
    "write_rule": ToolSpec("write_rule", ("rule", "type", "example", "validation_record")),
    "stop_generating": ToolSpec("stop_generating", ()),
}

PARSERS: dict[str, tuple[Callable[[str], Any], tuple[type[BaseException], ...]]] = {
    "adapt plan": (lambda s: parse_plan(s, 6), (PlanError,)),
    "adapt order": (lambda s: parse_execution_order(s, 6), (OrderError,)),
    "adapt goal": (parse_goal, ()),
    "adapt reflection": (_REFLECTION.search, ()),
    "react": (parse_react, ()),
    "teams json": (lambda s: parse_json(s, {"status": str}), (AnswerError,)),
    "automanual tool calls": (lambda s: parse_tool_calls(s, TOOLS), (ToolCallError,)),
    "automanual planner answer": (planner_parse.parse_answer, (planner_parse.AnswerFormatError,)),
    "automanual conclusion": (
        lambda s: planner_parse.parse_conclusion(s, succeeded=True),
        (planner_parse.AnswerFormatError,),
    ),
    "automanual skill definitions": (planner_parse.defined_functions, ()),
    "automanual manual": (lambda s: parse_manual(s, ["rule_1", "rule_2"]), ()),
    "automanual diagnosis": (parse_diagnosis, ()),
    "automanual rule id": (rule_number, ()),
    "spring action": (lambda s: parse_action(s, ["noop", "move_left"]), (AfterQueryError,)),
}


def _outcome(name: str, text: str) -> None:
    parse, own = PARSERS[name]
    with contextlib.suppress(own):
        parse(text)


def _linear_s(text: str) -> float:
    """How long this machine, now, takes for a few linear passes over ``text``: the
    yardstick a parser's time is measured against, so a busy machine slows both."""
    start = time.perf_counter()
    for _ in range(20):
        re.findall(r"\w+", text)
        text.splitlines()
    return time.perf_counter() - start


def _fast(name: str, text: str) -> None:
    start = time.perf_counter()
    _outcome(name, text)
    took = time.perf_counter() - start
    bound = max(BOUND_S, 100 * _linear_s(text))
    assert took < bound, f"{name} took {took:.1f}s on {len(text)} characters (bound {bound:.1f}s)"


# -- the named cases ---------------------------------------------------------------------


def test_a_line_of_spaces_does_not_stall_the_plan_parser() -> None:
    # 2,000 spaces took 65 s (cubic); these took far longer
    for text in (" " * 20_000, " " * 20_000 + "x", "Step 1" + " " * 20_000 + "x"):
        start = time.perf_counter()
        with pytest.raises(PlanError):
            parse_plan(text)
        assert time.perf_counter() - start < BOUND_S
    _fast("adapt plan", "Step 1: a\nExecution order: Step" + " " * 20_000 + "x")
    # and the usual forms still read
    plan = parse_plan(
        "- **Step 1:** get wood\n  * Step 2) craft planks  \n"
        "**Execution order:**\n(Step 1 AND Step 2)"
    )
    assert plan.steps == ("get wood", "craft planks")
    assert plan.to_dict()["order"] == "(Step 1 AND Step 2)"


@pytest.mark.parametrize(
    "text",
    [
        "Step " + "9" * 5_000 + ": x\nExecution order: Step 1",
        "Step 1: x\nExecution order: Step " + "1" * 5_000,
        "Step 1: x\nExecution order: " + "(" * 5_000 + "Step 1" + ")" * 5_000,
    ],
)
def test_huge_numbers_and_deep_brackets_are_plan_errors(text: str) -> None:
    with pytest.raises(PlanError):
        parse_plan(text)


@pytest.mark.parametrize("text", ["(" * 5_000 + "1" + ")" * 5_000, "1" * 5_000, "1 AND " * 20_000])
def test_execution_orders_fail_with_their_own_error(text: str) -> None:
    start = time.perf_counter()
    with pytest.raises(OrderError):
        parse_execution_order(text, 6)
    assert time.perf_counter() - start < BOUND_S


@pytest.mark.parametrize(
    "text", ["[" * 5_000, "{" * 5_000, '{"a": ' + "1" * 5_000 + "}", "[1," * 50_000]
)
def test_teams_json_deep_or_huge_is_an_answer_error(text: str) -> None:
    with pytest.raises(AnswerError):
        parse_json(text, {"status": str})


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("react", "action" + " " * 30_000 + "x"),
        ("react", " \n" * 30_000 + "Action: look"),
        ("automanual tool calls", "```" + " " * 60_000 + "`"),
        ("automanual planner answer", "# " + " " * 30_000 + "#x"),
        ("automanual diagnosis", "diagnosis:" + " " * 30_000),
        ("automanual manual", "```markdown\n## a" + " " * 30_000 + "#x\n```"),
        ("automanual manual", "```markdown\n## g\n" + " " * 30_000 + "!\n**rule_1**\n```"),
        ("adapt goal", "craft a" + " " * 30_000 + "b"),
        ("adapt reflection", " \n" * 30_000),
    ],
)
def test_runs_of_spaces_take_linear_time(name: str, text: str) -> None:
    _fast(name, text)


def test_huge_numbers_in_names_are_not_ints() -> None:
    assert rule_number("rule_" + "1" * 5_000) == -1
    assert parse_goal("craft " + "4" * 5_000 + " sticks") is None
    manual = parse_manual("```markdown\n## g\n**rule_" + "7" * 5_000 + "**\n```", ["rule_1"])
    assert manual.problems  # an unknown rule is reported, not a crash


def test_skill_definitions_of_deep_code_are_none() -> None:
    assert planner_parse.defined_functions("[1," * 50_000) == {}


# -- lone surrogates: a rule that cannot be stored is refused, the model asked again -------


def test_a_rule_with_a_lone_surrogate_is_refused_as_a_malformed_answer() -> None:
    call = 'rule_system.write_rule(rule="On a \\ud83d table", type="Special Mechanism")'
    escaped = f"```python\n{call}\n```"
    with pytest.raises(ToolCallError, match="surrogate"):
        parse_tool_calls(escaped, TOOLS)
    raw = escaped.replace("\\ud83d", "\ud83d")  # the character itself, from a JSON escape
    with pytest.raises(ToolCallError, match="surrogate"):
        parse_tool_calls(raw, TOOLS)
    fine = escaped.replace("\\ud83d", "\\U0001f600")
    assert parse_tool_calls(fine, TOOLS)[0].kwargs["rule"] == "On a \U0001f600 table"


def test_the_rule_store_keeps_any_text_it_is_given(tmp_path: Path) -> None:
    # A rule reaching the store by another path is stored (as U+FFFD), not a crash.
    path = str(tmp_path / "rules.sqlite3")
    system = RuleSystem(open_db(path), "b")
    system.begin("ep1", succeeded=True, actor="builder")
    system.write_rule("On a \ud83d table: craft", "Special Mechanism")
    assert RuleSystem(open_db(path), "b").rules()[0].content == "On a \ufffd table: craft"


# -- fuzz --------------------------------------------------------------------------------

NASTY = st.one_of(
    st.text(max_size=300),  # includes lone surrogates
    st.builds(
        lambda piece, n, tail: piece * n + tail,
        st.sampled_from(
            [" ", "\n", "{", "[", "(", "*", "#", "`", "9", "Step ", "Action: ", "**", "\\", '"']
        ),
        st.integers(0, 3_000),
        st.text(max_size=20),
    ),
    st.lists(
        st.sampled_from(
            [
                "Step 1:",
                "Execution order:",
                "Action:",
                "Thought:",
                "```python",
                "```markdown",
                "```",
                "## Plan",
                "**Code**",
                "Diagnosis:",
                "rule_system.write_rule(",
                "(",
                ")",
                "{",
                "}",
                '"',
                " AND ",
                "\n",
                "  ",
                "\ud83d",
                "99999",
            ]
        ),
        max_size=60,
    ).map("".join),
)


@pytest.mark.parametrize("name", sorted(PARSERS))
@settings(
    max_examples=60,
    deadline=2_000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(text=NASTY)
def test_any_text_gives_a_result_or_the_parsers_own_error(name: str, text: str) -> None:
    _outcome(name, text)
