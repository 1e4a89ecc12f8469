"""The dry run's scripted models answer each ADaPT prompt in its own form."""

from __future__ import annotations

import pytest

from lorekit.agents.adapt.planner import parse_plan
from lorekit.agents.react_grammar import parse_react
from lorekit.agents.shape_models import replay_answer, shape_roles
from lorekit.llm.base import Message

SYSTEM = """You act in a text environment.
Answer in this form and nothing else:
Thought: <your reasoning>
Action: <one action, or completed, or failed>

Example 1
Goal: find a mug
Thought: Mugs are on counters.
Action: go to countertop 1
Observation: You arrive at countertop 1.
Thought: Here it is.
Action: completed

Example 2
Goal: other
Thought: never replayed
Action: look
"""


def test_the_executor_replays_the_first_worked_example_turn_by_turn() -> None:
    history = [Message("system", SYSTEM), Message("user", "Goal: put a cup in the sink")]
    said = []
    for _ in range(3):
        text = replay_answer(tuple(history))
        said.append(parse_react(text)[1])
        history += [Message("assistant", text), Message("user", "Observation: Nothing happens.")]
    assert said == ["go to countertop 1", "completed", "completed"]
    bare = (Message("system", "no examples"), Message("user", "Goal: x"))
    assert parse_react(replay_answer(bare))[1] == "failed"


def test_the_planner_and_the_reflection_answer_in_their_forms() -> None:
    planner = (
        Message("system", "Step 1: <sub-task>\nExecution order: <e.g. (Step 1 AND Step 2)>"),
        Message("user", "Goal: heat a cup\nCurrent state: nothing"),
    )
    plan = parse_plan(replay_answer(planner), 3)
    assert len(plan.steps) == 2 and "heat a cup" in replay_answer(planner)
    reflect = (
        Message("system", "Answer in this form:\nReflection: <lesson>"),
        Message("user", "x"),
    )
    assert replay_answer(reflect).startswith("Reflection: ")


def test_only_agents_with_scripted_models_get_them() -> None:
    assert shape_roles("webshop", "react")["executor"].model == "simulated"
    with pytest.raises(LookupError, match="no scripted models answer agent 'automanual'"):
        shape_roles("alfworld", "automanual")
