"""The baselines ADaPT is compared with, on the same executor.

- ReAct is the executor alone (the ``react`` agent, the same loop and prompt
  as :class:`AdaptAgent` with ``d_max=1``).
- :class:`PlanExecuteAgent`: one plan up front, each step run once by the
  executor under the plan's AND/OR order; no adaptation when a step fails.
- :class:`TryAgainAgent`: up to ``d_max`` executor trials on the whole task
  (the budget ADaPT gets), stopping at the first success; the best trial
  counts. As in the paper, the first trial is drawn at the agent's
  temperature and each further one is a fresh sample at ``retry_temperature``
  (0.7), with its own ``sample`` index so a cache cannot replay the first.
- :class:`ReflexionAgent`: like Try-Again, but after each failed trial the
  model writes a lesson that the next trials see in their prompt.

Each trial restarts the task from its beginning (``reset_per_trial=True``,
as in the paper and in Reflexion): the environment is reset to the same task
and seed. ``reset_per_trial=False`` keeps the older behaviour, where trials
play on in the same episode and share its step limit.
"""

from __future__ import annotations

import re
from typing import Any

from lorekit.agents.adapt.common import AdaptContext, BudgetExhausted, fill, finish, start
from lorekit.agents.adapt.controller import new_node
from lorekit.agents.adapt.executor import Executor, SubtaskResult, Trust
from lorekit.agents.adapt.order import evaluate_async
from lorekit.agents.adapt.planner import Planner
from lorekit.agents.base import Recorder, Trajectory, model_roles
from lorekit.agents.examples import DEFAULT_SHOTS
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles

# Linear: horizontal spaces only, possessive; group 1 (stripped by the caller) runs to the end.
_REFLECTION = re.compile(
    r"^[^\S\n]*+\**+[^\S\n]*+reflection[^\S\n]*+\**+[^\S\n]*+[:：](.*)", re.I | re.M | re.S
)


def _executor(
    role: str, turns: int, patience: int, trust: Trust, temperature: float, shots: int
) -> Executor:
    return Executor(
        role=role,
        max_turns=turns,
        patience=patience,
        trust=trust,
        temperature=temperature,
        shots=shots,
    )


class PlanExecuteAgent:
    """Plan first, then execute every step once; see the module docstring."""

    name = "plan-execute"

    def __init__(
        self,
        *,
        max_calls: int | None = 150,
        executor_turns: int = 20,
        patience: int = 3,
        plan_steps: int = 10,
        plan_retries: int = 2,
        trust: Trust = "env",
        executor_role: str = "executor",
        planner_role: str = "planner",
        temperature: float = 0.0,
        shots: int = DEFAULT_SHOTS,
    ) -> None:
        self.max_calls = max_calls
        self.trust = trust
        self.model_roles = model_roles(executor_role, planner_role)
        self.executor = _executor(
            executor_role, executor_turns, patience, trust, temperature, shots
        )
        self.planner = Planner(
            role=planner_role,
            max_steps=plan_steps,
            retries=plan_retries,
            style="detailed",
            temperature=temperature,
            shots=shots,
        )

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ctx = await start(env, task, roles, recorder, seed, self.max_calls)
        root = new_node(task.goal, 1)
        ctx.ep.trajectory.notes["tree"] = root  # live: kept even if an exception ends the episode
        budget_hit = False
        try:
            await self._play(ctx, root)
        except BudgetExhausted:
            budget_hit = True
        return finish(ctx, self.name, budget_hit, tree=root)

    async def _play(self, ctx: AdaptContext, root: dict[str, Any]) -> None:
        ctx.deepest = 1
        attempt = await self.planner.plan(ctx, root["task"])
        root["plan"] = attempt.to_dict()
        plan = attempt.plan
        if plan is None:
            root["success"] = False
            return

        async def run_step(index: int) -> bool:
            child = new_node(plan.steps[index - 1], 2)
            root["children"].append(child)
            result = await self.executor.run(ctx, child["task"], depth=2)
            child.update(executor=result.to_dict(), verified=result.verified)
            child["success"] = result.success
            return result.success

        def episode_over() -> bool | None:
            return ctx.ep.trajectory.success if ctx.ep.done else None

        root["plan_outcome"] = await evaluate_async(plan.order, run_step, episode_over)
        root["success"] = ctx.ep.trajectory.success


class TryAgainAgent:
    """Up to ``d_max`` independent executor trials on the whole task."""

    name = "try-again"

    def __init__(
        self,
        *,
        d_max: int = 4,
        max_calls: int | None = 150,
        executor_turns: int = 20,
        patience: int = 3,
        trust: Trust = "env",
        executor_role: str = "executor",
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        reset_per_trial: bool = True,
        shots: int = DEFAULT_SHOTS,
    ) -> None:
        if d_max < 1:
            raise ValueError(f"d_max must be >= 1, got {d_max}")
        if retry_temperature < 0:
            raise ValueError(f"retry_temperature must be >= 0, got {retry_temperature}")
        self.d_max = d_max
        self.max_calls = max_calls
        self.retry_temperature = retry_temperature
        self.reset_per_trial = reset_per_trial
        self.model_roles = model_roles(executor_role)
        self.executor = _executor(
            executor_role, executor_turns, patience, trust, temperature, shots
        )

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ctx = await start(env, task, roles, recorder, seed, self.max_calls)
        trials: list[dict[str, Any]] = []
        memory: list[str] = []
        ctx.ep.trajectory.notes.update(trials=trials, memory=memory)  # live, see start()
        outcomes: list[tuple[bool, float]] = []
        budget_hit = False
        try:
            for number in range(1, self.d_max + 1):
                if number > 1 and self.reset_per_trial:
                    await ctx.ep.restart()
                    ctx.last_success_action = None  # nothing carries over from a failed trial
                first_step = len(ctx.ep.trajectory.steps)
                result = await self.executor.run(
                    ctx,
                    task.goal,
                    depth=1,
                    memory=memory,
                    temperature=None if number == 1 else self.retry_temperature,
                    sample=number - 1,
                )
                traj = ctx.ep.trajectory
                trials.append({"trial": number, "first_step": first_step, **result.to_dict()})
                outcomes.append((traj.success, traj.reward))
                if result.success or traj.success:
                    break
                if traj.done and not self.reset_per_trial:
                    break  # the shared episode is over: no room for another trial
                if number < self.d_max:
                    lesson = await self.reflect(ctx, task, result)
                    if lesson:
                        memory.append(lesson)
                        trials[-1]["reflection"] = lesson
        except BudgetExhausted:
            budget_hit = True
        if self.reset_per_trial and outcomes:
            # The best trial is the task's result (the paper keeps the best one).
            best_success, best_reward = max(outcomes)
            traj = ctx.ep.trajectory
            traj.success = traj.success or best_success
            traj.reward = max(traj.reward, best_reward)
        return finish(
            ctx,
            self.name,
            budget_hit,
            trials=trials,
            memory=memory,
            d_max=self.d_max,
            reset_per_trial=self.reset_per_trial,
        )

    async def reflect(self, ctx: AdaptContext, task: Task, result: SubtaskResult) -> str | None:
        """Try-Again keeps no memory between trials."""
        return None


class ReflexionAgent(TryAgainAgent):
    """Try-Again with a lesson written after each failed trial and kept for the next.

    The lesson comes from ``reflector_role`` (the executor's model by
    default: in Reflexion the actor reflects on its own attempt).
    """

    name = "reflexion"

    def __init__(
        self,
        *,
        d_max: int = 4,
        max_calls: int | None = 150,
        executor_turns: int = 20,
        patience: int = 3,
        trust: Trust = "env",
        executor_role: str = "executor",
        reflector_role: str = "executor",
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        reset_per_trial: bool = True,
        max_tokens: int | None = 256,
        shots: int = DEFAULT_SHOTS,
    ) -> None:
        super().__init__(
            d_max=d_max,
            max_calls=max_calls,
            executor_turns=executor_turns,
            patience=patience,
            trust=trust,
            executor_role=executor_role,
            temperature=temperature,
            retry_temperature=retry_temperature,
            reset_per_trial=reset_per_trial,
            shots=shots,
        )
        self.reflector_role = reflector_role
        self.model_roles = model_roles(executor_role, reflector_role)
        self.temperature = temperature
        self.max_tokens = max_tokens

    async def reflect(self, ctx: AdaptContext, task: Task, result: SubtaskResult) -> str | None:
        transcript = "\n".join(f"Action: {a}\nObservation: {o}" for a, o in result.transcript)
        if result.claimed is not None:
            transcript += f"\nYou said: {'completed' if result.claimed else 'failed'}"
        outcome = (
            "you said the task was completed, but it was not"
            if result.overclaimed
            else f"the task was not completed (stopped: {result.stop})"
        )
        messages = [
            Message("system", fill("reflect_system")),
            Message(
                "user",
                fill(
                    "reflect_task",
                    opening=ctx.opening,
                    task=task.goal,
                    transcript=transcript or "(no actions)",
                    outcome=outcome,
                ),
            ),
        ]
        text = await ctx.ask(
            self.reflector_role, messages, temperature=self.temperature, max_tokens=self.max_tokens
        )
        match = _REFLECTION.search(text)
        lesson = (match.group(1) if match else text).strip()
        return " ".join(lesson.split()) or None
