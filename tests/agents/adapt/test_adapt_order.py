"""parse_execution_order against an independent reference on random expressions."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorekit.agents.adapt import (
    AllOf,
    AnyOf,
    OrderError,
    StepRef,
    evaluate,
    format_order,
    parse_execution_order,
    step_indices,
)

# A random expression: a list of step numbers joined by random AND/OR, with random brackets.
Tree = int | tuple[str, list["Tree"]]


@st.composite
def expressions(draw: st.DrawFn) -> tuple[str, int]:
    """(text, number of steps): every step used once, operators mixed, brackets random."""
    n = draw(st.integers(1, 7))
    order = draw(st.permutations(list(range(1, n + 1))))

    def build(items: list[int]) -> str:
        if len(items) == 1:
            word = draw(st.sampled_from(["Step {}", "step {}", "{}", "Step #{}", "STEP{}"]))
            return word.format(items[0])
        cut = draw(st.integers(1, len(items) - 1))
        op = draw(st.sampled_from(["AND", "OR", "and", "or", "&&", "||"]))
        left, right = build(items[:cut]), build(items[cut:])
        text = f"{left} {op} {right}"
        return f"({text})" if draw(st.booleans()) else text

    return build(list(order)), n


def reference(text: str, outcome: dict[int, bool]) -> tuple[bool, list[int]]:
    """Python's own grammar (``and`` binds tighter than ``or``) as the reference:
    the text is parsed by ``ast`` (never executed) and walked with short-circuits."""
    py = text.replace("&&", " and ").replace("||", " or ").replace("AND", "and").replace("OR", "or")
    py = py.replace("Step #", "s").replace("STEP", "s").replace("Step ", "s").replace("step ", "s")
    py = " ".join(
        f"s{tok}" if tok.isdigit() else tok
        for tok in py.replace("(", " ( ").replace(")", " ) ").split()
    )
    tree = ast.parse(py, mode="eval").body
    ran: list[int] = []

    def walk(node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            i = int(node.id[1:])
            ran.append(i)
            return outcome[i]
        assert isinstance(node, ast.BoolOp)
        if isinstance(node.op, ast.And):
            return all(walk(v) for v in node.values)
        return any(walk(v) for v in node.values)

    return walk(tree), ran


@settings(max_examples=300, deadline=None)
@given(expressions(), st.lists(st.booleans(), min_size=7, max_size=7))
def test_parser_matches_reference(expr: tuple[str, int], bits: list[bool]) -> None:
    text, n = expr
    outcome = {i + 1: b for i, b in enumerate(bits)}
    node = parse_execution_order(text, n)
    ran: list[int] = []

    def run(i: int) -> bool:
        ran.append(i)
        return outcome[i]

    want, want_ran = reference(text, outcome)
    assert evaluate(node, run) == want
    assert ran == want_ran  # same steps, same order: the short-circuits agree
    assert sorted(step_indices(node)) == list(range(1, n + 1))
    # the canonical form parses back to the same tree
    assert parse_execution_order(format_order(node), n) == node


def test_and_binds_tighter_than_or() -> None:
    assert parse_execution_order("Step 1 OR Step 2 AND Step 3") == AnyOf(
        (StepRef(1), AllOf((StepRef(2), StepRef(3))))
    )
    assert parse_execution_order("(Step 1 OR Step 2) AND Step 3") == AllOf(
        (AnyOf((StepRef(1), StepRef(2))), StepRef(3))
    )
    assert parse_execution_order("`((Step 1 OR Step 2) AND Step 3).`") == AllOf(
        (AnyOf((StepRef(1), StepRef(2))), StepRef(3))
    )


@pytest.mark.parametrize(
    ("text", "n", "message"),
    [
        ("", None, "empty"),
        ("Step 1 AND", None, "found the end"),
        ("(Step 1 AND Step 2", None, "brackets must balance"),
        ("Step 1 AND Step 2)", None, "unmatched ')'"),
        ("Step 1 Step 2", None, "missing AND or OR"),
        ("Step 1 THEN Step 2", None, "unexpected 'THEN'"),
        ("Step 1, Step 2", None, "unexpected ','"),
        ("Step 4 AND Step 1", 3, "the plan has 3 steps"),
        ("Step 0", None, "numbered from 1"),
        ("Step 1 OR Step 1", None, "more than once"),
        ("AND Step 1", None, "expected 'Step <n>'"),
        ("()", None, "expected 'Step <n>'"),
    ],
)
def test_malformed_orders_say_why(text: str, n: int | None, message: str) -> None:
    with pytest.raises(OrderError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_execution_order(text, n)


def test_short_circuits() -> None:
    node = parse_execution_order("(Step 1 OR Step 2) AND Step 3 AND Step 4")
    ran: list[int] = []

    def run(results: dict[int, bool]):  # type: ignore[no-untyped-def]
        def go(i: int) -> bool:
            ran.append(i)
            return results[i]

        return go

    assert evaluate(node, run({1: True, 2: True, 3: False, 4: True})) is False
    assert ran == [1, 3]  # OR stopped at step 1, AND stopped at step 3
    ran.clear()
    assert evaluate(node, run({1: False, 2: True, 3: True, 4: True})) is True
    assert ran == [1, 2, 3, 4]
