"""The executor: ReAct-style turns on one (sub-)task, ended by the model's own verdict.

The model acts until it answers ``completed`` or ``failed``. What it says is
recorded, but so is what the environment shows (through the bridge's
``check_subtask``), and by default the environment's view decides: a model
that claims success it did not reach is caught, and the record shows how
often that happened. Two limits keep a lost executor from burning the
episode: ``max_turns`` model turns, and ``patience`` invalid actions in a row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from lorekit.agents.adapt.common import AdaptContext, BudgetExhausted, fill
from lorekit.agents.react import parse_react
from lorekit.llm.base import Message

Trust = Literal["env", "self"]
_WORD = re.compile(r"[^a-z ]+")
COMPLETED = frozenset({"completed", "complete", "done", "task completed", "finished", "finish"})
FAILED = frozenset({"failed", "fail", "give up", "task failed", "i give up"})


def verdict_of(action: str) -> bool | None:
    """True for a ``completed`` answer, False for ``failed``, None for a real action."""
    word = _WORD.sub("", action.lower()).strip()
    if word in COMPLETED:
        return True
    if word in FAILED:
        return False
    return None


@dataclass(slots=True)
class SubtaskResult:
    """How one executor run went.

    ``claimed`` is the model's verdict (None if it never gave one),
    ``verified`` the environment's (None if it cannot tell), ``success`` the
    one the controller acts on. ``stop`` is one of ``completed``, ``failed``,
    ``patience``, ``turns`` or ``env_done``.
    """

    task: str
    depth: int
    claimed: bool | None = None
    verified: bool | None = None
    success: bool = False
    stop: str = ""
    turns: int = 0
    actions: list[str] = field(default_factory=list)
    invalid: int = 0
    format_errors: int = 0
    last_success_action: str | None = None
    transcript: list[tuple[str, str]] = field(default_factory=list)

    @property
    def overclaimed(self) -> bool:
        """The model said completed and the environment disagrees."""
        return self.claimed is True and self.verified is False

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("transcript")
        d["overclaimed"] = self.overclaimed
        return d


class Executor:
    """Runs one task to a verdict; see the module docstring."""

    def __init__(
        self,
        *,
        role: str = "executor",
        max_turns: int = 20,
        patience: int = 3,
        trust: Trust = "env",
        temperature: float = 0.0,
        max_tokens: int | None = 256,
        history_turns: int | None = None,
    ) -> None:
        if max_turns < 1 or patience < 1:
            raise ValueError(f"max_turns and patience must be >= 1, got {max_turns}, {patience}")
        if trust not in ("env", "self"):
            raise ValueError(f"trust must be 'env' or 'self', got {trust!r}")
        self.role = role
        self.max_turns = max_turns
        self.patience = patience
        self.trust: Trust = trust
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.history_turns = history_turns

    async def _first_messages(
        self, ctx: AdaptContext, task: str, memory: Sequence[str]
    ) -> tuple[Message, Message]:
        lessons = "\n".join(f"- {m}" for m in memory)
        system = fill("executor_system", **await ctx.manual_values())
        user = fill(
            "executor_task",
            opening=ctx.opening,
            task=task,
            state=await ctx.state(),
            last_action=ctx.last_success_action or "none yet",
            memory=fill("memory", lessons=lessons) if memory else "",
        )
        return Message("system", system), Message("user", user)

    async def run(
        self,
        ctx: AdaptContext,
        task: str,
        *,
        depth: int = 1,
        memory: Sequence[str] = (),
        temperature: float | None = None,
        sample: int = 0,
    ) -> SubtaskResult:
        """Play ``task`` in the shared episode until a verdict or a limit.

        ``temperature`` and ``sample`` override the executor's own for this
        run (a resampled trial). Budget exhaustion propagates as
        :class:`BudgetExhausted`; the partial result is still recorded in
        ``ctx.subtasks``.
        """
        result = SubtaskResult(task, depth)
        ctx.subtasks.append(result.to_dict())
        slot = len(ctx.subtasks) - 1
        ctx.deepest = max(ctx.deepest, depth)
        draw = (self.temperature if temperature is None else temperature, sample)
        try:
            await self._turns(ctx, task, memory, result, draw)
        except BudgetExhausted:
            result.stop = "budget"
            await self._settle(ctx, result)
            raise
        else:
            await self._settle(ctx, result)
        finally:
            ctx.subtasks[slot] = result.to_dict()
        return result

    async def _turns(
        self,
        ctx: AdaptContext,
        task: str,
        memory: Sequence[str],
        result: SubtaskResult,
        draw: tuple[float, int] = (0.0, 0),
    ) -> None:
        system, first = await self._first_messages(ctx, task, memory)
        history: list[Message] = []
        streak = 0
        while result.turns < self.max_turns:
            if ctx.ep.done:
                result.stop = "env_done"
                return
            shown = history
            if self.history_turns is not None and len(history) > 2 * self.history_turns:
                shown = history[-2 * self.history_turns :]
            text = await ctx.ask(
                self.role,
                [system, first, *shown],
                temperature=draw[0],
                max_tokens=self.max_tokens,
                stop=["\nObservation:"],
                sample=draw[1],
            )
            result.turns += 1
            _, action, problem = parse_react(text)
            history.append(Message("assistant", text.strip() or "(empty)"))
            if action is None:
                result.format_errors += 1
                history.append(Message("user", fill("format_error", problem=problem)))
                continue
            said = verdict_of(action)
            if said is not None:
                result.claimed = said
                result.stop = "completed" if said else "failed"
                return
            step = await ctx.ep.act(action)
            result.actions.append(action)
            result.transcript.append((action, step.observation))
            valid = bool(step.info.get("valid", True))
            if valid:
                streak = 0
                result.last_success_action = action
                ctx.last_success_action = action
            else:
                streak += 1
                result.invalid += 1
            if step.done:
                result.stop = "env_done"
                return
            if streak >= self.patience:
                result.stop = "patience"
                return
            history.append(Message("user", fill("observation", observation=step.observation)))
        result.stop = result.stop or "turns"

    async def _settle(self, ctx: AdaptContext, result: SubtaskResult) -> None:
        """Decide success: the episode's end, else the env's check, else the claim."""
        if ctx.ep.done:
            result.verified = ctx.ep.trajectory.success
            result.success = ctx.ep.trajectory.success
            return
        result.verified = await ctx.check(result.task)
        if self.trust == "env" and result.verified is not None:
            result.success = result.verified
        else:
            result.success = result.claimed is True
