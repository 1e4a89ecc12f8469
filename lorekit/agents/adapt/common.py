"""Shared pieces of ADaPT and its baselines: prompts, the call budget, the episode context.

Every method here acts in one environment episode through one
:class:`AdaptContext`, which owns the episode, the bridge to the environment,
the per-episode model-call budget and the information that flows from one
sub-task to the next. Keeping that in one place is what lets the baselines
share the executor with ADaPT and differ only in how they call it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from lorekit import yamlio
from lorekit.agents.adapt.bridge import EnvBridge, bridge_for, without_goal
from lorekit.agents.base import Episode, Recorder, Trajectory
from lorekit.agents.examples import EnvExamples, examples_for
from lorekit.agents.prompts import PromptError, render
from lorekit.envs.asyncenv import AsyncEnv, EnvLike, as_async
from lorekit.envs.base import Task
from lorekit.llm.base import LLM, Message, RequestParams
from lorekit.llm.roles import Roles


@functools.cache
def prompts() -> dict[str, str]:
    """The templates in ``lorekit/agents/adapt/prompts.yaml``."""
    text = resources.files("lorekit.agents.adapt").joinpath("prompts.yaml").read_text()
    data = yamlio.safe_load(text, source="adapt/prompts.yaml")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise PromptError("adapt/prompts.yaml must map template names to strings")
    return data


def fill(name: str, **values: Any) -> str:
    """Render template ``name``; a missing value names the template and the field."""
    return render(prompts()[name], f"adapt.{name}", **values)


class BudgetExhausted(Exception):
    """The episode's model-call budget is spent; the method must stop."""


@dataclass(slots=True)
class CallBudget:
    """A cap on model calls per episode, across every role.

    ADaPT's recursion can multiply calls quickly (each level may retry a
    plan, run an executor for a while, then recurse); a hard cap keeps one
    unlucky episode from costing as much as a whole run.
    """

    limit: int | None
    used: int = 0

    def take(self) -> None:
        if self.limit is not None and self.used >= self.limit:
            raise BudgetExhausted(f"model-call budget of {self.limit} spent")
        self.used += 1


@dataclass(slots=True)
class AdaptContext:
    """One episode as the ADaPT family sees it.

    ``last_success_action`` is the information passed from one sub-task to
    the next: the last action of the latest sub-task that *succeeded*, as
    in the paper. A failed sub-task passes nothing on, so the second branch
    of an OR sees what the first one saw.
    """

    ep: Episode
    roles: Roles
    bridge: EnvBridge
    budget: CallBudget
    last_success_action: str | None = None
    subtasks: list[dict[str, Any]] = field(default_factory=list)
    deepest: int = 0
    examples: EnvExamples = field(default_factory=EnvExamples)
    """This environment's worked examples and rules (empty when it has none), in
    the text this env instance shows (see :func:`env_examples`)."""

    @property
    def opening(self) -> str:
        return self.ep.trajectory.initial_observation

    @property
    def setting(self) -> str:
        """The opening without the root goal: the world a (sub-)task is played in.

        Every executor and planner prompt shows this plus its own ``Goal:``,
        so a sub-task is never presented next to the root goal as if both
        were to be done.
        """
        describe = getattr(self.bridge, "describe_setting", None)
        goal = self.ep.trajectory.task.goal
        text = describe(self.opening, goal) if describe else without_goal(self.opening, goal)
        return str(text).strip() or "(nothing more to tell)"

    async def state(self) -> str:
        """The bridge's state text, read where the env lives (it may be a thread or a process)."""
        return await self.ep.env.call(self.bridge.describe_state) or "(not available)"

    async def check(self, subtask: str) -> bool | None:
        return await self.ep.env.call(self.bridge.check_subtask, subtask)

    async def ask(
        self,
        role: str,
        messages: Sequence[Message],
        *,
        temperature: float,
        max_tokens: int | None,
        stop: Sequence[str] | None = None,
        sample: int = 0,
    ) -> str:
        """One model call, charged to the budget before it is made.

        ``sample`` tells repeated draws of the same request apart (a cache
        keys on it), so a resampled trial is a new answer, not a cache hit.
        """
        out = await self.model(role)(0).complete(
            list(messages),
            RequestParams(temperature=temperature, max_tokens=max_tokens, stop=stop, sample=sample),
        )
        return out.text

    def model(self, role: str) -> Callable[[int], LLM]:
        """The model of ``role`` for each attempt of an :func:`~lorekit.llm.ask.ask`,
        every call charged to the episode's budget before it is made."""

        def charged(_attempt: int) -> LLM:
            self.budget.take()
            return self.roles[role]

        return charged

    async def manual_values(self) -> dict[str, str]:
        env = self.ep.env
        return {
            "manual": (await env.manual()).strip(),
            "action_forms": "\n".join(f"- {f}" for f in await env.action_forms()),
        }


async def env_examples(env: AsyncEnv, bridge: EnvBridge) -> EnvExamples:
    """The env's worked examples, rewritten by the bridge's optional ``adapt_examples``
    (run where the env lives) to the env's text options, e.g. ALFWorld's place syntax."""
    examples = examples_for(env.name)
    adapt = getattr(bridge, "adapt_examples", None)
    if adapt is None or examples == EnvExamples():
        return examples
    adapted: EnvExamples = await env.call(adapt, examples)
    return adapted


async def start(
    env: EnvLike,
    task: Task,
    roles: Roles,
    recorder: Recorder,
    seed: int | None,
    max_calls: int | None,
) -> AdaptContext:
    """Reset the environment and wrap the episode for the ADaPT family."""
    handle = as_async(env)
    episode = await Episode.start(handle, task, recorder, seed)
    bridge = bridge_for(handle.name)
    examples = await env_examples(handle, bridge)
    ctx = AdaptContext(episode, roles, bridge, CallBudget(max_calls), examples=examples)
    # Live references: if an exception ends the episode, what was built so far
    # is still in the notes the harness stores (finish() fills in the rest).
    episode.trajectory.notes["subtasks"] = ctx.subtasks
    return ctx


def finish(ctx: AdaptContext, method: str, budget_hit: bool, **notes: Any) -> Trajectory:
    """Record the common notes (sub-tasks, calls, depth, over-claims) and stop.

    Without the environment ending the episode, the stop reason is ``budget``
    when the call budget ran out and ``gave_up`` otherwise.
    """
    traj = ctx.ep.trajectory
    traj.notes.update(
        method=method,
        subtasks=ctx.subtasks,
        llm_calls=ctx.budget.used,
        call_budget=ctx.budget.limit,
        budget_exhausted=budget_hit,
        depth_reached=ctx.deepest,
        overclaims=sum(1 for s in ctx.subtasks if s.get("overclaimed")),
        **notes,
    )
    return ctx.ep.stop("budget" if budget_hit else "gave_up")
