"""The planner: a few numbered sub-tasks plus an execution order joining them.

Two contracts (``style``): ``adapt`` asks for a short one-level plan (a hard
step gets its own plan later, if it fails); ``detailed`` asks for a complete
plan whose every step can be done without more planning (Plan-and-Execute).
The prompt shows the environment's rules, the style's own rules and ``shots``
worked plans of that style, then the task being planned as its goal.

An answer that cannot be used (no steps, gaps in the numbering, too many
steps, a malformed order) is sent back with the reason, a bounded number of
times; after that the plan is recorded as failed, never guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from lorekit.agents.adapt.common import AdaptContext, fill
from lorekit.agents.adapt.order import (
    OrderError,
    OrderNode,
    format_order,
    parse_execution_order,
)
from lorekit.agents.examples import DEFAULT_SHOTS, check_shots
from lorekit.llm.ask import ParseError, ask
from lorekit.llm.base import Completion, Message, RequestParams

PlanStyle = Literal["adapt", "detailed"]
# Matched against stripped lines, with possessive quantifiers and no two
# neighbouring quantifiers over the same characters: linear in the line's
# length, whatever the model wrote (a run of spaces once took minutes).
_STEP = re.compile(r"(?:[-*]\s*+)?+(?:\*++\s*+)?+step\s*+(\d++)(?:\s*+\*++)?+\s*+[:.)](.+)", re.I)
_ORDER = re.compile(r"(?:\*++\s*+)?+execution\s++order(?:\s*+\*++)?+\s*+[:：](.*)", re.I)
_MAX_NUMBER_DIGITS = 6  # a step number longer than this is no plan step


class PlanError(ParseError):
    """A planner answer that cannot be used; the message is for the planner."""


@dataclass(frozen=True, slots=True)
class Plan:
    """Parsed plan: ``steps[i - 1]`` is Step i."""

    steps: tuple[str, ...]
    order: OrderNode

    def to_dict(self) -> dict[str, Any]:
        return {"steps": list(self.steps), "order": format_order(self.order)}


def parse_plan(text: str, max_steps: int | None = None) -> Plan:
    """Read ``Step n: ...`` lines and the ``Execution order:`` line.

    Steps must be numbered 1, 2, 3, ... without gaps; the order may only name
    those steps. Raises :class:`PlanError` saying what to fix.
    """
    steps: list[tuple[int, str]] = []
    orders: list[str] = []
    lines = [line.strip() for line in text.splitlines()]
    following = _next_non_blank(lines)
    for i, line in enumerate(lines):
        labelled = _ORDER.match(line)
        if labelled:
            orders.append(_order_text(labelled.group(1), following[i]))
            continue
        match = _STEP.match(line)
        if match:
            number, body = match.group(1), match.group(2).strip().lstrip("*").strip()
            if len(number) > _MAX_NUMBER_DIGITS:
                raise PlanError(f"step number {number[:12]}... is too long; number steps 1, 2, 3")
            if body:
                steps.append((int(number), body))
    if not steps:
        raise PlanError("no lines of the form 'Step 1: <sub-task>' were found")
    numbers = [n for n, _ in steps]
    if numbers != list(range(1, len(steps) + 1)):
        raise PlanError(
            f"steps must be numbered 1, 2, 3, ... in order; found {', '.join(map(str, numbers))}"
        )
    if max_steps is not None and len(steps) > max_steps:
        raise PlanError(f"the plan has {len(steps)} steps; use at most {max_steps}")
    if not orders or not orders[-1].strip():
        raise PlanError("no 'Execution order:' line was found after the steps")
    try:
        order = parse_execution_order(orders[-1], len(steps))
    except OrderError as exc:
        shown = orders[-1].strip()
        shown = shown if len(shown) <= 200 else shown[:200] + "..."
        raise PlanError(f"bad execution order {shown!r}: {exc}") from None
    return Plan(tuple(s for _, s in steps), order)


def _next_non_blank(lines: list[str]) -> list[str]:
    """For each line, the first non-blank line after it ("" if none); one pass."""
    after = [""] * len(lines)
    seen = ""
    for i in range(len(lines) - 1, -1, -1):
        after[i] = seen
        seen = lines[i] or seen
    return after


def _order_text(inline: str, following: str) -> str:
    """The order written after ``Execution order:``: on the same line, or else on
    the next line that is not blank (models put it on a line of its own)."""
    text = inline.strip().strip("*").strip()
    return text or following.strip("*").strip()


@dataclass(slots=True)
class PlanAttempt:
    """What planning produced: the plan (or None) and every rejected answer's reason."""

    plan: Plan | None
    calls: int = 0
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            **(self.plan.to_dict() if self.plan else {"steps": [], "order": None}),
            "calls": self.calls,
            "errors": list(self.errors),
        }


class Planner:
    """Asks the planner role for a plan, retrying with feedback on bad answers."""

    def __init__(
        self,
        *,
        role: str = "planner",
        max_steps: int = 6,
        retries: int = 2,
        style: PlanStyle = "adapt",
        temperature: float = 0.0,
        max_tokens: int | None = 512,
        shots: int = DEFAULT_SHOTS,
    ) -> None:
        if max_steps < 1 or retries < 0:
            raise ValueError(f"need max_steps >= 1 and retries >= 0, got {max_steps}, {retries}")
        if style not in ("adapt", "detailed"):
            raise ValueError(f"style must be 'adapt' or 'detailed', got {style!r}")
        self.shots = check_shots(shots)
        self.role = role
        self.max_steps = max_steps
        self.retries = retries
        self.style = style
        self.temperature = temperature
        self.max_tokens = max_tokens

    def system_prompt_parts(self, ctx: AdaptContext) -> dict[str, str]:
        """The rules (the env's and the style's) and the worked plans of this style."""
        known = ctx.examples
        rules = "\n\n".join(
            r for r in (known.rules, known.planner_rules.get(self.style, "")) if r
        ).strip()
        demos = known.planner.get(self.style, ())[: self.shots]
        shown = "\n\n".join(
            fill(
                "planner_example",
                number=i,
                setting=d.setting,
                task=d.task,
                state=d.state,
                plan=d.plan,
            )
            for i, d in enumerate(demos, 1)
        )
        return {
            "rules": f"\n{rules}\n" if rules else "",
            "examples": "\n" + fill("planner_examples", examples=shown) if demos else "",
        }

    async def plan(self, ctx: AdaptContext, task: str) -> PlanAttempt:
        style = fill(f"style_{self.style}", max_steps=self.max_steps)
        state = await ctx.state()
        system = fill(
            "planner_system", **await ctx.manual_values(), **self.system_prompt_parts(ctx)
        )
        messages = [
            Message("system", system),
            Message(
                "user",
                fill("planner_task", setting=ctx.setting, task=task, state=state, style=style),
            ),
        ]
        answer = await ask(
            ctx.model(self.role),
            messages,
            lambda out: parse_plan(out.text, self.max_steps),
            params=RequestParams(temperature=self.temperature, max_tokens=self.max_tokens),
            attempts=self.retries + 1,
            feedback=lambda error: fill("plan_error", problem=error.feedback),
            answer_as=_as_shown,
        )
        return PlanAttempt(
            answer.parsed if answer.ok else None,
            calls=len(answer.attempts),
            errors=[a.error.feedback for a in answer.attempts if a.error is not None],
        )


def _as_shown(out: Completion) -> str:
    """A refused plan as the planner sees it again: stripped, an empty one named."""
    return out.text.strip() or "(empty)"
