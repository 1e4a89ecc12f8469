"""Plans read as the published ADaPT code read them (profiles code and paper)."""

from __future__ import annotations

import pytest

from lorekit.agents.adapt.code_plan import StepGroup, from_data, read_plan, render, unwrap


def plan(order: str, *steps: str) -> str:
    lines = [f"Step {i}: {s}" for i, s in enumerate(steps, 1)]
    return "\n".join([*lines, f"Execution Order: {order}"])


def test_a_bracketed_and_is_unwrapped_to_its_steps() -> None:
    got = unwrap(read_plan(plan("(Step 1 AND Step 2)", "fetch 1 a", "craft 1 b using 1 a")))
    assert got == StepGroup(("fetch 1 a", "craft 1 b using 1 a"), "AND")


def test_each_level_keeps_the_last_operator_written() -> None:
    # LoreKit's own parser reads this as Step 1 OR (Step 2 AND Step 3); the code did not.
    got = read_plan(plan("Step 1 AND Step 2 OR Step 3", "a", "b", "c"))
    assert got == StepGroup(("a", "b", "c"), "OR")


def test_nested_groups_keep_their_own_operator() -> None:
    got = unwrap(read_plan(plan("((Step 1 OR Step 2) AND Step 3)", "a", "b", "c")))
    assert got == StepGroup((StepGroup(("a", "b"), "OR"), "c"), "AND")


def test_an_unclosed_bracket_leaves_the_innermost_open_level() -> None:
    got = read_plan(plan("(Step 1 AND (Step 2 OR Step 3)", "a", "b", "c"))
    assert got == StepGroup(("a", StepGroup(("b", "c"), "OR")), "AND")
    assert read_plan(plan("(Step 1 OR (Step 2", "a", "b")) == StepGroup(("b",))


@pytest.mark.parametrize(
    "text",
    [
        "Step 1: a\nStep 2: b",  # no order line
        plan("(Step 1 AND Step 4)", "a", "b"),  # a step that does not exist
        plan("Step 1 AND Step 2)", "a", "b"),  # a ')' that closes nothing
        plan("()", "a", "b"),  # a level without steps
        plan("(step 1 and step 2)", "a", "b"),  # lower case: no tokens at all
    ],
)
def test_what_the_code_could_not_read_becomes_all_steps_and(text: str) -> None:
    assert read_plan(text) == StepGroup(("a", "b"), "AND")


def test_steps_are_lines_starting_with_step_and_every_label_is_removed() -> None:
    text = "  Step 1: indented is no step\nStep 1: fetch 2 x Step 2: y\nSteps: a stray line\n"
    text += "Execution order: (Step 1 AND Step 2)"
    assert read_plan(text).labels() == ["fetch 2 x y", "Steps: a stray line"]


def test_the_last_line_mentioning_the_order_wins() -> None:
    text = plan("(Step 1 AND Step 2)", "a", "b") + "\n# the execution order was: (Step 1 OR Step 2)"
    assert unwrap(read_plan(text)) == StepGroup(("a", "b"), "OR")


def test_a_lone_step_is_a_plan_of_that_step_and_a_level_without_operator_is_and() -> None:
    one = unwrap(read_plan(plan("Step 1", "fetch 1 a")))
    assert one == StepGroup(("fetch 1 a",)) and one.operator == "AND"


@pytest.mark.parametrize(
    "data",
    [
        ["fetch 6 a", "craft 4 b using 6 a"],
        [{"steps": ["a", "b"], "logic": "OR"}, "c"],
        [{"steps": [{"steps": ["a", "b"], "logic": "AND"}, "c"], "logic": "OR"}, "d", "d"],
    ],
)
def test_rendered_plans_read_back_as_the_recorded_plan(data: list[object]) -> None:
    recorded = from_data({"steps": data, "logic": "AND"})
    back = unwrap(read_plan(render(recorded)))
    assert back.to_data()["steps"] == recorded.to_data()["steps"]
    assert back.operator == recorded.operator
