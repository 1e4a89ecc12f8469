"""Scripted models for ADaPT's ``code``/``paper`` profiles, for offline runs (``--simulate``).

Those profiles speak the published code's form: one transcript, one line per
turn, plans as ``Step N:`` lines. These models answer it the way a weak but
well-formed model would, so every row of an ADaPT table plays end to end
without a model service. They are plumbing, not players.

- TextCraft executor: reads the task's crafting commands and goal from the
  prompt and can do one level of crafting: it fetches the ingredients of the
  goal's command when nothing produces them, crafts the batches it needs and
  says ``think: task completed``; an ingredient that a listed command makes is
  beyond it (``think: task failed``), which is what ADaPT decomposes.
- TextCraft planner: one step per ingredient of the goal's command (``fetch N
  item``), then that command, joined by AND.
- ALFWorld: LoreKit's scripted ALFWorld executor (:mod:`simulation_envs`),
  shown the transcript as its own turns; its verdicts become thought lines.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from lorekit.agents.adapt.code_executor import code_prompts
from lorekit.llm.base import Message

ModelFn = Callable[[tuple[Message, ...]], str]
_COMMAND = re.compile(r"^craft (\d+) (.+?) using (.+)$")
_GOAL = re.compile(r"^(?:craft|fetch|get)\s+(?:(\d+)\s+)?(.+?)(?:\s+using .*)?\.?$")
_FIRST = "think: I check what I carry first."


def is_code_prompt(messages: tuple[Message, ...], env: str) -> bool:
    """Whether these messages come from a ``code``-profile executor or planner."""
    prompts = code_prompts(env)
    first = messages[0].content if messages else ""
    return first in (prompts["executor_system"], prompts["planner_system"])


def _task_block(text: str) -> tuple[list[str], str, list[str]]:
    """(crafting command lines, goal, answered lines) of the task at the end of a prompt."""
    lines = text.split("\n")
    goal_at = max(i for i, line in enumerate(lines) if line.startswith("Goal: "))
    start = max((i for i in range(goal_at) if lines[i] == "Crafting commands:"), default=goal_at)
    commands = [ln for ln in lines[start + 1 : goal_at] if ln.startswith("craft ")]
    answered = [ln[2:] for ln in lines[goal_at + 1 :] if ln.startswith("> ")]
    answered = answered[answered.index(_FIRST) :] if _FIRST in answered else []
    return commands, lines[goal_at][len("Goal: ") :].strip(), answered


def _wanted(goal: str) -> tuple[int, str]:
    found = _GOAL.match(goal.strip())
    if found is None:
        return 1, goal
    return int(found.group(1) or 1), found.group(2).strip()


def _one_level(commands: list[str], goal: str) -> list[str] | None:
    """The lines that make the goal with one command, or None if that is beyond it."""
    count, item = _wanted(goal)
    made = {m.group(2): m for m in map(_COMMAND.match, commands) if m}
    command = made.get(item)
    if command is None:
        return [f"get {count} {item}"]
    batches = math.ceil(count / int(command.group(1)))
    lines = []
    for part in command.group(3).split(", "):
        need, _, name = part.partition(" ")
        if name in made:
            return None
        lines.append(f"get {int(need) * batches} {name}")
    return lines + [command.group(0)] * batches


def textcraft_code_executor() -> ModelFn:
    def act(messages: tuple[Message, ...]) -> str:
        commands, goal, answered = _task_block(messages[-1].content)
        plan = _one_level(commands, goal)
        script = [_FIRST, "inventory"]
        script += [*plan, "think: task completed"] if plan is not None else ["think: task failed"]
        return script[len(answered)] if len(answered) < len(script) else "think: task failed"

    return act


def textcraft_code_planner() -> ModelFn:
    def plan(messages: tuple[Message, ...]) -> str:
        commands, goal, _ = _task_block(messages[-1].content)
        count, item = _wanted(goal)
        made = {m.group(2): m for m in map(_COMMAND.match, commands) if m}
        command = made.get(item)
        if command is None:
            return f"Step 1: fetch {count} {item}\nExecution Order: (Step 1)"
        batches = math.ceil(count / int(command.group(1)))
        steps = [
            f"fetch {int(p.partition(' ')[0]) * batches} {p.partition(' ')[2]}"
            for p in command.group(3).split(", ")
        ]
        steps += [command.group(0)] * batches
        lines = [f"Step {i}: {s}" for i, s in enumerate(steps, 1)]
        order = " AND ".join(f"Step {i}" for i in range(1, len(steps) + 1))
        return "\n".join([*lines, f"Execution Order: ({order})"])

    return plan


def alfworld_code_executor(base: ModelFn) -> ModelFn:
    """``base`` (a Thought/Action ALFWorld model) answering the transcript form."""
    action_line = re.compile(r"^Action: (.+)$", re.M)

    def act(messages: tuple[Message, ...]) -> str:
        text = messages[-1].content
        lines = text.split("\n")
        at = max(i for i, ln in enumerate(lines) if ln.startswith("Your task is to: "))
        room = next((ln for ln in reversed(lines[:at]) if ln.startswith("You are in")), "")
        opening = f"{room}\nGoal: {lines[at][len('Your task is to: ') :]}"
        shown: list[Message] = [
            Message("system", "put <object> in/on <receptacle>"),
            Message("user", opening),
        ]
        body = lines[at + 1 :]
        for i, line in enumerate(body):
            if line.startswith("> ") and not line.startswith("> think:") and i + 1 < len(body):
                shown += [
                    Message("assistant", f"Action: {line[2:]}"),
                    Message("user", f"Observation: {body[i + 1]}"),
                ]
        found = action_line.search(base(tuple(shown)))
        action = found.group(1).strip() if found else "failed"
        if action == "completed":
            return "think: Task completed!"
        return "think: Task failed!" if action == "failed" else action

    return act


def alfworld_code_planner() -> ModelFn:
    def plan(messages: tuple[Message, ...]) -> str:
        goal = next(
            (
                ln[6:]
                for ln in reversed(messages[-1].content.split("\n"))
                if ln.startswith("Goal: ")
            ),
            "",
        )
        return f"Step 1: {goal.rstrip('.')}\nExecution Order: (Step 1)"

    return plan
