"""The rewarder loops with scripted models: the paper's Algorithm 1 (refined
without feedback, the last kept), and our checked loop (a right answer, a
wrong one improved after feedback, malformed and unsafe answers rejected)."""

from __future__ import annotations

from typing import Any

import pytest
from test_rewards import STONE, record

from lorekit.laws.experience import oracle_experience
from lorekit.laws.rewarder import extract_function, law_text, write_predicate, write_predicates
from lorekit.laws.state_api import LawState
from lorekit.llm import Message, ScriptedLLM
from lorekit.sandbox import compile_predicate

ORACLE = oracle_experience()
STONE_LAW = ORACLE.laws["collect_stone"]


def fenced(code: str) -> str:
    return f"Here it is:\n```python\n{code.strip()}\n```\n"


RIGHT = fenced(
    """
def valid(state, target):
    return target == "stone" and state.inventory.get("wood_pickaxe", 0) >= 1
"""
)
WRONG = fenced(
    """
def valid(state, target):
    return target == "stone"
"""
)
UNSAFE = fenced(
    """
def valid(state, target):
    import os
    return os.system("true") == 0
"""
)
DUNDER = fenced(
    """
def valid(state, target):
    return state.__class__ is not None
"""
)
ONE_ARG = fenced("def valid(state):\n    return True")


async def test_right_answer_first_time() -> None:
    llm = ScriptedLLM([RIGHT])
    entry, attempts = await write_predicate(llm, STONE_LAW, STONE, refinements=3, loop="checked")
    assert entry is not None and entry.accuracy == 1.0 and entry.checked == 4
    assert entry.origin == "llm:scripted" and entry.attempts == 1 and len(llm.calls) == 1
    assert [a.accuracy for a in attempts] == [1.0]
    assert entry.penalty_source and "wood_pickaxe" in entry.penalty_source
    prompt = llm.calls[0].prompt
    assert "collect_stone" in prompt and "state.inventory" in prompt  # law and state API
    assert law_text(STONE_LAW) in prompt


async def test_wrong_answer_is_improved_after_feedback() -> None:
    llm = ScriptedLLM([WRONG, RIGHT])
    entry, attempts = await write_predicate(llm, STONE_LAW, STONE, refinements=3, loop="checked")
    assert [a.accuracy for a in attempts] == [0.75, 1.0]
    feedback = llm.calls[1].last
    assert "right on\n3" in feedback or "right on 3" in feedback
    assert "False expected, True returned" in feedback  # the failure without a pickaxe
    assert llm.calls[1].messages[-2] == Message("assistant", WRONG)
    assert entry is not None and entry.source == extract_function(RIGHT)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("I would check for stone.", "found no Python function"),
        (fenced("def valid(state, target)\n    return True"), "syntax error"),
        (UNSAFE, "Import"),
        (fenced("import os\ndef valid(state, target):\n    return True"), "exactly one 'def'"),
        (DUNDER, "__class__"),
        (fenced("def valid(state, target):\n    while True:\n        pass"), "While"),
        (ONE_ARG, "it must take (state, target)"),
    ],
)
async def test_malformed_or_unsafe_answers_are_rejected_with_the_reason(
    bad: str, reason: str
) -> None:
    llm = ScriptedLLM([bad, RIGHT])
    entry, attempts = await write_predicate(llm, STONE_LAW, STONE, refinements=2, loop="checked")
    assert attempts[0].accuracy is None and reason in attempts[0].feedback
    assert reason in llm.calls[1].last  # the model is told why
    assert entry is not None and entry.source == extract_function(RIGHT)


async def test_refinements_are_bounded_and_the_best_answer_is_kept() -> None:
    worse = fenced("def valid(state, target):\n    return False")  # 2 of 4 right
    llm = ScriptedLLM([WRONG, worse, UNSAFE, worse])
    entry, attempts = await write_predicate(llm, STONE_LAW, STONE, refinements=3, loop="checked")
    assert len(llm.calls) == 4 and len(attempts) == 4
    assert entry is not None and entry.accuracy == 0.75
    assert entry.source == extract_function(WRONG) and entry.attempts == 4


async def test_nothing_usable_falls_back_to_the_laws_code() -> None:
    llm = ScriptedLLM([UNSAFE, "no idea"])
    entry, _ = await write_predicate(llm, STONE_LAW, STONE, refinements=1, loop="checked")
    assert entry is not None and entry.origin == "law-fallback" and entry.accuracy == 1.0
    assert entry.notes and "no usable answer" in entry.notes[0]
    llm = ScriptedLLM([UNSAFE])
    none, attempts = await write_predicate(
        llm, STONE_LAW, STONE, refinements=0, fallback=False, loop="checked"
    )
    assert none is None and len(attempts) == 1


async def test_without_records_the_first_compiled_answer_is_kept() -> None:
    llm = ScriptedLLM([WRONG, RIGHT])
    entry, attempts = await write_predicate(llm, STONE_LAW, [], refinements=3, loop="checked")
    assert entry is not None and entry.accuracy is None and len(attempts) == 1


async def test_write_predicates_over_an_experience() -> None:
    def answer(messages: tuple[Message, ...]) -> str:
        text = messages[-1].content
        if "`collect_stone`" in text:
            return RIGHT
        return fenced("def valid(state, target):\n    return target == 'tree'")

    records = [*STONE, record("collect_wood", True, face="tree")]
    llm = ScriptedLLM(fn=answer)
    pset = await write_predicates(
        llm,
        ORACLE,
        records,
        achievements=["collect_stone", "collect_wood"],
        refinements=1,
        loop="checked",
    )
    assert set(pset.entries) == {"collect_stone", "collect_wood"}
    assert pset.entries["collect_wood"].accuracy == 1.0
    assert pset.meta["model"] == "scripted" and pset.meta["refinements"] == 1
    valid = compile_predicate(pset.entries["collect_wood"].source)
    state: Any = LawState({}, "tree", frozenset())
    assert valid(state, "tree")
    with pytest.raises(ValueError, match="no law for"):
        await write_predicates(llm, ORACLE, records, achievements=["fly"])


async def test_paper_loop_refines_without_feedback_and_keeps_the_last() -> None:
    # Algorithm 1 as published: each round sees the previous code, no accuracy
    llm = ScriptedLLM([RIGHT, WRONG])
    entry, _ = await write_predicate(llm, STONE_LAW, STONE, refinements=1)
    assert len(llm.calls) == 2 and llm.calls[1].messages[-2] == Message("assistant", RIGHT)
    shown = llm.calls[1].last
    assert "Look at your function again" in shown and "right on" not in shown
    assert entry is not None and entry.source == extract_function(WRONG)
    assert entry.accuracy == 0.75  # measured on the records, never shown


async def test_paper_loop_refines_without_records() -> None:
    llm = ScriptedLLM([WRONG, WRONG, RIGHT])
    entry, attempts = await write_predicate(llm, STONE_LAW, [], refinements=2)
    assert len(attempts) == 3 and entry is not None and entry.source == extract_function(RIGHT)
    pset = await write_predicates(
        ScriptedLLM(fn=lambda _m: RIGHT), ORACLE, [], achievements=["collect_stone"]
    )
    assert pset.meta["loop"] == "paper"
    with pytest.raises(ValueError, match="loop must be"):
        await write_predicate(llm, STONE_LAW, [], loop="best")


def test_extract_function_finds_the_code() -> None:
    assert (
        extract_function("```\ndef f(a, b):\n    return 1\n```") == "def f(a, b):\n    return 1\n"
    )
    assert extract_function("def f(a, b):\n    return 1") == "def f(a, b):\n    return 1\n"
    assert extract_function("```text\nno code\n```") is None


async def test_each_paper_round_sees_only_the_previous_version() -> None:
    # Algorithm 1: r_i comes from the objective, its experience and r_(i-1) alone;
    # older versions are not part of a round's input
    first = fenced('def valid(state, target):\n    return target == "stone"  # first')
    second = fenced('def valid(state, target):\n    return target == "stone"  # second')
    llm = ScriptedLLM([first, second, RIGHT])
    entry, attempts = await write_predicate(llm, STONE_LAW, STONE, refinements=2)
    assert len(attempts) == 3 and entry is not None and entry.source == extract_function(RIGHT)
    third = " ".join(m.content for m in llm.calls[2].messages)
    assert "# second" in third and "# first" not in third
    assert len(llm.calls[2].messages) == len(llm.calls[1].messages)  # no growing history
