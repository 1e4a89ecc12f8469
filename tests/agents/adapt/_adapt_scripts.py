"""Scripted models for the ADaPT tests: answers keyed by the task in the prompt."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from lorekit.envs.base import Task
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.llm import Message, ScriptedLLM

_TASK = re.compile(r"^(?:Goal|Task): (.+)$", re.M)

ROOT = "craft wooden pickaxe"
PLANKS = "craft 3 oak planks"
STICKS = "craft 2 stick"
FINAL = "craft 1 wooden pickaxe using 3 oak planks, 2 stick"
PLAN = (
    f"Step 1: {PLANKS}\nStep 2: {STICKS}\nStep 3: {FINAL}\n"
    "Execution order: Step 1 AND Step 2 AND Step 3"
)
DO_PLANKS = [
    "Action: get 1 oak log",
    "Action: craft 4 oak planks using 1 oak log",
    "Action: completed",
]
DO_STICKS = ["Action: get 4 bamboo", "Action: craft 2 stick using 4 bamboo", "Action: completed"]
DO_FINAL = ["Action: craft 1 wooden pickaxe using 3 oak planks, 2 stick"]


def task_of(messages: Sequence[Message]) -> str:
    """The task a prompt asks for: its (last) ``Goal:`` line."""
    found = _TASK.findall(messages[1].content)
    assert found, messages[1].content
    return str(found[-1]).strip()


def by_task(script: Mapping[str, Sequence[str]], default: str = "Action: failed") -> ScriptedLLM:
    """An executor whose n-th turn on a task gives ``script[task][n]`` (the last one repeats)."""

    def answer(messages: tuple[Message, ...]) -> str:
        answers = script.get(task_of(messages))
        if not answers:
            return default
        turn = sum(1 for m in messages[2:] if m.role == "assistant")
        return answers[min(turn, len(answers) - 1)]

    return ScriptedLLM(fn=answer)


def planner_by_task(plans: Mapping[str, str | Sequence[str]]) -> ScriptedLLM:
    """A planner answering ``plans[task]`` (a list: one answer per retry)."""

    def answer(messages: tuple[Message, ...]) -> str:
        got = plans.get(task_of(messages), "I have no plan.")
        if isinstance(got, str):
            return got
        retry = sum(1 for m in messages[2:] if m.role == "assistant")
        return got[min(retry, len(got) - 1)]

    return ScriptedLLM(fn=answer)


def task(env: TextCraftEnv, item: str) -> Task:
    return next(t for t in env.tasks("all") if t.id == item)
