"""The executor: the one ReAct loop of LoreKit, run on one (sub-)task to a verdict.

Each turn the model sees the environment's manual and rules, worked examples
(``shots`` of them), the task as its goal, the state and the last successful
action, then its own turns so far; it answers ``Thought: ... / Action: ...``
until it answers ``completed`` or ``failed``. ADaPT, its baselines and the
``react`` agent all run this loop, with these prompts and these limits:
``max_turns`` model turns (an unusable answer costs one) and ``patience``
invalid actions in a row.

What the model says is recorded, but so is what the environment shows
(through the bridge's ``check_subtask``), and by default the environment's
view decides: a model that claims success it did not reach is caught, and
the record shows how often that happened.

Only a successful run passes its last action on to the next sub-task
(``ctx.last_success_action``); a failed one leaves it as it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from lorekit.agents.adapt.common import AdaptContext, BudgetExhausted
from lorekit.agents.examples import DEFAULT_SHOTS, Demo, check_shots
from lorekit.agents.prompts import PromptError, load_prompts, render
from lorekit.agents.react_grammar import parse_react
from lorekit.llm.base import Message

Trust = Literal["env", "self"]
_WORD = re.compile(r"[^a-z ]+")
COMPLETED = frozenset({"completed", "complete", "done", "task completed", "finished", "finish"})
FAILED = frozenset({"failed", "fail", "give up", "task failed", "i give up"})
TEMPLATES = frozenset(
    {"system", "task", "rules", "examples", "example", "memory", "observation", "format_error"}
)
EXECUTOR_TURNS = 20
"""Model turns per executor run (the paper's TextCraft setting)."""


def verdict_of(action: str) -> bool | None:
    """True for a ``completed`` answer, False for ``failed``, None for a real action."""
    word = _WORD.sub("", action.lower()).strip()
    if word in COMPLETED:
        return True
    if word in FAILED:
        return False
    return None


@dataclass(frozen=True, slots=True)
class ReActTurn:
    """One model turn: what the model said and what came of it."""

    answer: str
    thought: str | None
    action: str | None
    observation: str | None
    problem: str | None


@dataclass(slots=True)
class SubtaskResult:
    """How one executor run went.

    ``claimed`` is the model's verdict (None if it never gave one),
    ``verified`` the environment's (None if it cannot tell), ``success`` the
    one the controller acts on. ``stop`` is one of ``completed``, ``failed``,
    ``patience``, ``turns``, ``env_done`` or ``budget``.
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
    log: list[ReActTurn] = field(default_factory=list)

    @property
    def overclaimed(self) -> bool:
        """The model said completed and the environment disagrees."""
        return self.claimed is True and self.verified is False

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("transcript")
        d.pop("log")
        d["overclaimed"] = self.overclaimed
        return d


class Executor:
    """Runs one task to a verdict; see the module docstring.

    ``patience=None`` lets invalid actions go on until ``max_turns``;
    ``shots`` is how many worked examples of the environment the prompt
    shows (0: none); ``prompts`` names the template set in
    ``lorekit/agents/prompts/`` (default ``react``).
    """

    def __init__(
        self,
        *,
        role: str = "executor",
        max_turns: int = EXECUTOR_TURNS,
        patience: int | None = 3,
        trust: Trust = "env",
        temperature: float = 0.0,
        max_tokens: int | None = 256,
        history_turns: int | None = None,
        shots: int = DEFAULT_SHOTS,
        prompts: str = "react",
    ) -> None:
        if max_turns < 1 or (patience is not None and patience < 1):
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
        self.shots = check_shots(shots)
        self.templates = load_prompts(prompts)
        missing = sorted(TEMPLATES - self.templates.keys())
        if missing:
            raise PromptError(f"prompts/{prompts}.yaml lacks template(s): {', '.join(missing)}")
        self.prompts = prompts

    def _fill(self, name: str, **values: Any) -> str:
        return render(self.templates[name], f"{self.prompts}.{name}", **values)

    def _demo(self, number: int, demo: Demo) -> str:
        lines: list[str] = []
        for turn in demo.turns:
            lines += [f"Thought: {turn.thought}", f"Action: {turn.action}"]
            if turn.observation is not None:
                lines.append(self._fill("observation", observation=turn.observation))
        return self._fill(
            "example",
            number=number,
            setting=demo.setting,
            task=demo.task,
            state=demo.state,
            turns="\n".join(lines),
        )

    async def system_prompt(self, ctx: AdaptContext) -> str:
        """Manual, rules, action forms, answer form and worked examples."""
        known = ctx.examples
        demos = known.executor[: self.shots]
        examples = "\n\n".join(self._demo(i, d) for i, d in enumerate(demos, 1))
        return self._fill(
            "system",
            **await ctx.manual_values(),
            rules=f"\n{self._fill('rules', rules=known.rules)}\n" if known.rules else "",
            examples="\n" + self._fill("examples", examples=examples) if demos else "",
        )

    async def _first_messages(
        self, ctx: AdaptContext, task: str, memory: Sequence[str]
    ) -> tuple[Message, Message]:
        lessons = "\n".join(f"- {m}" for m in memory)
        user = self._fill(
            "task",
            setting=ctx.setting,
            task=task,
            state=await ctx.state(),
            last_action=ctx.last_success_action or "none yet",
            memory=self._fill("memory", lessons=lessons) if memory else "",
        )
        return Message("system", await self.system_prompt(ctx)), Message("user", user)

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
            thought, action, problem = parse_react(text)
            history.append(Message("assistant", text.strip() or "(empty)"))
            if action is None:
                result.format_errors += 1
                result.log.append(ReActTurn(text, thought, None, None, problem))
                history.append(Message("user", self._fill("format_error", problem=problem)))
                continue
            said = verdict_of(action)
            if said is not None:
                result.log.append(ReActTurn(text, thought, action, None, None))
                result.claimed = said
                result.stop = "completed" if said else "failed"
                return
            step = await ctx.ep.act(action)
            result.log.append(ReActTurn(text, thought, action, step.observation, None))
            result.actions.append(action)
            result.transcript.append((action, step.observation))
            if step.info.get("valid", True):
                streak = 0
                result.last_success_action = action
            else:
                streak += 1
                result.invalid += 1
            if step.done:
                result.stop = "env_done"
                return
            if self.patience is not None and streak >= self.patience:
                result.stop = "patience"
                return
            history.append(Message("user", self._fill("observation", observation=step.observation)))
        result.stop = result.stop or "turns"

    async def _settle(self, ctx: AdaptContext, result: SubtaskResult) -> None:
        """Decide success (the episode's end, else the env's check, else the claim),
        and pass information on only from a success."""
        if ctx.ep.done:
            result.verified = ctx.ep.trajectory.success
            result.success = ctx.ep.trajectory.success
        else:
            result.verified = await ctx.check(result.task)
            if self.trust == "env" and result.verified is not None:
                result.success = result.verified
            else:
                result.success = result.claimed is True
        if result.success and result.last_success_action is not None:
            ctx.last_success_action = result.last_success_action
