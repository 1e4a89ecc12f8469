"""Reading planner answers and conclusions; carrying safe definitions between runs."""

from __future__ import annotations

import ast

import pytest

from lorekit.agents.automanual.core import Outcome, PlannerTurn, Rule, RuleType
from lorekit.agents.automanual.planner import classify, helper_examples
from lorekit.agents.automanual.planner_parse import (
    AnswerFormatError,
    code_blocks,
    defined_functions,
    definitions,
    parse_answer,
    parse_conclusion,
)

ANSWER = """### Analysis
I see a fridge.
# [Step 1] is not a heading here
### Related rules
rule_0, rule_12 and Rule 3 (twice: rule_0)
### Plan
Open it.
### Code
```python
# [Step 1] open the fridge
obs = agent.open('fridge_1')
```
"""


def test_the_four_parts() -> None:
    parsed = parse_answer(ANSWER)
    assert parsed.analysis == "I see a fridge.\n# [Step 1] is not a heading here"
    assert parsed.related_rules == ["rule_0", "rule_12", "rule_3"]
    assert parsed.plan == "Open it."
    assert parsed.code == "# [Step 1] open the fridge\nobs = agent.open('fridge_1')"


@pytest.mark.parametrize(
    "text",
    [
        ANSWER.replace("### ", "## "),
        ANSWER.replace("### Analysis", "**Analysis:**").replace("### Plan", "# PLAN"),
        ANSWER.replace("### Related rules", "### Rules to consider").replace(
            "### Plan", "### Overall plan"
        ),
        ANSWER.replace("```python", "```"),
        ANSWER.replace("### Plan\nOpen it.", "**Plan for the task:** Open it.").replace(
            "### Related rules\n", "### Rules to consider: "
        ),
    ],
    ids=["h2", "bold-and-caps", "other-words", "untagged-block", "inline"],
)
def test_format_drift_is_tolerated(text: str) -> None:
    parsed = parse_answer(text)
    assert parsed.code.endswith("agent.open('fridge_1')")
    assert parsed.related_rules == ["rule_0", "rule_12", "rule_3"]
    assert parsed.plan == "Open it."


def test_comments_inside_code_are_not_headings() -> None:
    text = "### Code\n```python\n# Plan\nx = 1\n## Analysis\ny = 2\n```"
    assert parse_answer(text).code == "# Plan\nx = 1\n## Analysis\ny = 2"
    assert parse_answer(text).plan == ""


def test_no_rules_and_blocks_outside_a_code_section() -> None:
    parsed = parse_answer("Thinking.\n### Related rules\nnone\n```python\nx = 1\n```")
    assert parsed.related_rules == [] and parsed.code == "x = 1"


@pytest.mark.parametrize(
    "text", ["", "### Code\nagent.look()", "```json\n{}\n```", "```python\n```"]
)
def test_an_answer_without_python_code_is_refused(text: str) -> None:
    with pytest.raises(AnswerFormatError, match="no ```python code block"):
        parse_answer(text)


def test_other_languages_are_skipped() -> None:
    assert code_blocks("```json\n{}\n```\n```py\nx = 1\n```") == ["x = 1"]


def test_conclusions() -> None:
    won = parse_conclusion(
        "### Mistakes\nWrong drawer.\n### Code\n```python\nf()\n```", succeeded=True
    )
    assert won.skill_code == "f()" and won.mistakes == "Wrong drawer."
    with pytest.raises(AnswerFormatError):
        parse_conclusion("### Mistakes\nnone", succeeded=True)
    lost = parse_conclusion(
        "### Reflection\nStep 2 took the wrong mug.\n```python\nx\n```", succeeded=False
    )
    assert lost.reflection.startswith("Step 2 took the wrong mug.") and lost.skill_code == ""
    assert parse_conclusion("It failed at step 2.", succeeded=False).reflection == (
        "It failed at step 2."
    )


def test_definitions_keep_only_defs_that_run_nothing() -> None:
    source = """
import re
agent.go_to('cabinet_1')
x = agent.look()

def keep(agent, name: str = 'mug', n=(1, 2), *rest, flag: bool = False, **kw) -> list:
    '''Doc.'''
    return agent.go_to(name)

@decorator
def decorated():
    pass

def default_acts(x=agent.look()):
    pass

class Kept:
    pass

def stub(observation, name):
    '''Only a docstring and dots: would shadow a real helper.'''
    ...

def passes():
    pass

async def coroutine():
    pass

for i in range(3):
    def in_loop():
        pass
"""
    kept = definitions(source)
    tree = ast.parse(kept)
    assert [type(n).__name__ for n in tree.body] == ["FunctionDef"]
    assert "def keep(agent, name='mug', n=(1, 2), *rest, flag=False, **kw):" in kept
    assert "go_to('cabinet_1')" not in kept and "look()" not in kept
    assert definitions("def broken(:\n    pass") == ""


def test_classify() -> None:
    ok, bad = PlannerTurn("a"), PlannerTurn("b", error="AssertionFailed")
    assert classify(True, [ok]) is Outcome.DIRECT_SUCCESS
    assert classify(True, [bad, ok]) is Outcome.INDIRECT_SUCCESS
    assert classify(False, [ok]) is Outcome.FAILURE
    # A clean first turn that left the task undone, finished in turn 2: indirect.
    assert classify(True, [ok, ok]) is Outcome.INDIRECT_SUCCESS


def test_helper_examples_come_from_every_rule_with_an_example() -> None:
    """As the authors' code: the functions of any rule's example are defined, whatever
    its type (their MiniWoB++ forward_email is a Success Process rule's); an example
    that does not parse (their ALFWorld ones are fenced) defines nothing."""
    fenced = "```python\ndef h():\n    return 3\n```"
    rules = [
        Rule("rule_0", RuleType.USEFUL_HELPER_METHOD, "use f", "def f():\n    return 1"),
        Rule("rule_1", RuleType.SUCCESS_PROCESS, "steps", "def g():\n    return 2"),
        Rule("rule_2", RuleType.USEFUL_HELPER_METHOD, "no code yet", ""),
        Rule("rule_3", RuleType.CORRECTED_ERROR, "fenced", fenced),
    ]
    examples = helper_examples(rules)
    assert examples == ["def f():\n    return 1", "def g():\n    return 2", fenced]
    assert [list(defined_functions(e)) for e in examples] == [["f"], ["g"], []]


def test_a_later_definition_of_a_name_wins() -> None:
    found = defined_functions(
        "def f():\n    return 1\n\ndef g():\n    return 0\n\ndef f():\n    return 2"
    )
    assert list(found) == ["g", "f"] and "return 2" in found["f"]
