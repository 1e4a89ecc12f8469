"""Plans as the published ADaPT code read them (profiles ``code`` and ``paper``).

The original's parser differs from :func:`lorekit.agents.adapt.parse_plan` in
ways that change which sub-tasks run, so the profiles that reproduce its
numbers read plans its way:

- a step is any line that *starts* with ``Step``; every ``Step N: `` in it is
  removed, the rest is the sub-task;
- the order is the text after the last ``": "`` of the last line mentioning
  "execution order" (any case); its tokens are ``Step N``, ``AND``, ``OR``
  and brackets (case matters);
- each bracket level keeps the *last* operator written at that level, so a
  mixed level such as ``Step 1 AND Step 2 OR Step 3`` is an OR of three;
- an unclosed bracket leaves the innermost open level as the plan;
- anything it cannot read (no order line, a step number that does not exist,
  a level with no step, a stray ``)``) makes the plan all its steps, AND;
- a plan of one item is unwrapped (a group becomes the plan, a lone step a
  plan of that step); a level without an operator is AND.

There are no retries and no limit on the number of steps.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Logic = Literal["AND", "OR"]
_TOKEN = re.compile(r"Step \d+|AND|OR|\(|\)")
_STEP_LABEL = re.compile(r"Step \d+: ")


@dataclass(frozen=True, slots=True)
class StepGroup:
    """Sub-tasks joined by one operator; ``logic`` None is a level that named none."""

    steps: tuple[str | StepGroup, ...]
    logic: Logic | None = None

    @property
    def operator(self) -> Logic:
        """The operator the controller applies: a level without one is AND."""
        return self.logic or "AND"

    def to_data(self) -> dict[str, Any]:
        """The plan as the original held it: ``{"steps": [...], "logic": ...}``."""
        out: dict[str, Any] = {
            "steps": [s if isinstance(s, str) else s.to_data() for s in self.steps]
        }
        if self.logic is not None:
            out["logic"] = self.logic
        return out

    def labels(self) -> list[str]:
        """Every sub-task text, depth first (what a rendered plan numbers)."""
        out: list[str] = []
        for step in self.steps:
            out.extend([step] if isinstance(step, str) else step.labels())
        return out


class _Unreadable(Exception):
    """The original's parser raised; its caller then took every step, AND."""


class _Level:
    def __init__(self) -> None:
        self.steps: list[int | _Level] = []
        self.logic: Logic | None = None
        self.has_steps = False


def _expression(text: str) -> _Level:
    stack: list[_Level] = []
    current = _Level()
    for token in _TOKEN.findall(text):
        if token.startswith("Step"):
            current.steps.append(int(token.split()[1]))
            current.has_steps = True
        elif token in ("AND", "OR"):
            current.logic = "AND" if token == "AND" else "OR"
        elif token == "(":
            stack.append(current)
            current = _Level()
        else:
            if not stack:
                raise _Unreadable("a ')' closes nothing")
            closed, current = current, stack.pop()
            current.steps.append(closed)
            current.has_steps = True
    return current


def _resolve(level: _Level, steps: Sequence[str]) -> StepGroup:
    if not level.has_steps:
        raise _Unreadable("a level without steps")
    out: list[str | StepGroup] = []
    for item in level.steps:
        if isinstance(item, int):
            if not 1 <= item <= len(steps):
                raise _Unreadable(f"no step {item}")
            out.append(steps[item - 1])
        else:
            out.append(_resolve(item, steps))
    return StepGroup(tuple(out), level.logic)


def read_plan(text: str) -> StepGroup:
    """The plan the original parser made of ``text`` (before unwrapping)."""
    steps: list[str] = []
    order: str | None = None
    for line in text.split("\n"):
        if line.startswith("Step"):
            steps.append(_STEP_LABEL.sub("", line))
        if "execution order" in line.lower():
            order = line.split(": ")[-1]
    try:
        if order is None:
            raise _Unreadable("no execution order")
        return _resolve(_expression(order), steps)
    except _Unreadable:
        return StepGroup(tuple(steps), "AND")


def unwrap(plan: StepGroup) -> StepGroup:
    """A one-item plan becomes that item (a lone step: a plan of it), as the controller did."""
    if len(plan.steps) == 1:
        only = plan.steps[0]
        plan = StepGroup((only,)) if isinstance(only, str) else only
    return plan


def from_data(data: object) -> StepGroup:
    """A plan as a result file records it: a list of steps (strings or ``{"steps", "logic"}``)."""
    if isinstance(data, Mapping):
        logic = data.get("logic")
        if logic not in (None, "AND", "OR"):
            raise ValueError(f"plan logic must be AND or OR, got {logic!r}")
        return StepGroup(_items(data.get("steps")), logic)
    return StepGroup(_items(data))


def _items(data: object) -> tuple[str | StepGroup, ...]:
    if not isinstance(data, list):
        raise ValueError(f"plan steps must be a list, got {type(data).__name__}")
    return tuple(s if isinstance(s, str) else from_data(s) for s in data)


def render(plan: StepGroup, logic: Logic | None = None) -> str:
    """Plan text that :func:`read_plan` reads back as ``plan`` (steps numbered depth first)."""
    counter = iter(range(1, 10_000))
    lines: list[str] = []

    def order(group: StepGroup, top: bool) -> str:
        parts = []
        for step in group.steps:
            if isinstance(step, str):
                number = next(counter)
                lines.append(f"Step {number}: {step}")
                parts.append(f"Step {number}")
            else:
                parts.append(order(step, False))
        joiner = f" {group.logic} " if group.logic else ", "
        return "(" + joiner.join(parts) + ")"

    text = order(StepGroup(plan.steps, logic or plan.logic), True)
    return "\n".join([*lines, f"Execution Order: {text}"])


def describe(data: object) -> str:
    """One line for a plan: the original's own rendering of its steps list."""
    return repr(data)
