"""ADaPT: decompose only when the executor fails (Prasad et al. 2024).

``solve(task, depth)``: run the executor on the task; if it succeeds, done.
If it fails and ``depth < d_max``, ask the planner for a few steps and an
execution order, and solve each step the same way at ``depth + 1``: AND stops
at the first failing step, OR at the first success. All sub-tasks play in the
same environment episode, so what one leaves behind (the TextCraft inventory)
is there for the next; the bridge's state text and the last action of the
latest *successful* sub-task are put in the next prompt (a failed sub-task
passes nothing on, as in the paper). The environment's reward decides the
episode; the bridge's check decides sub-tasks where it can.

Unlike the published code, mixed AND/OR orders keep their meaning, sub-task
success does not rest on the executor's word alone, and a per-episode budget
caps model calls. The whole tree is kept in ``Trajectory.notes["tree"]``.
"""

from __future__ import annotations

from typing import Any

from lorekit.agents.adapt.code_controller import CodeAdapt
from lorekit.agents.adapt.common import AdaptContext, BudgetExhausted, finish, start
from lorekit.agents.adapt.executor import EXECUTOR_TURNS, Executor, Trust
from lorekit.agents.adapt.order import evaluate_async
from lorekit.agents.adapt.planner import Planner
from lorekit.agents.adapt.profiles import check_examples, check_profile, profile_env_defaults
from lorekit.agents.base import Recorder, Trajectory, model_roles
from lorekit.agents.examples import DEFAULT_SHOTS
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.llm.roles import Roles


def new_node(task: str, depth: int) -> dict[str, Any]:
    """One decomposition-tree node, as plain data for the run store."""
    return {
        "task": task,
        "depth": depth,
        "executor": None,
        "plan": None,
        "children": [],
        "plan_outcome": None,
        "verified": None,
        "success": None,
    }


class AdaptAgent:
    """As-needed decomposition; ``d_max=1`` is the executor alone, the same
    ReAct loop and prompt as the ``react`` agent.

    ``max_calls`` caps model calls per episode over all roles; ``trust="self"``
    reproduces the published behaviour of believing the executor; ``shots``
    is the number of worked examples in the executor's and the planner's
    prompts. These budgets are the agent's: run TextCraft without its own
    step cap (``max_steps=None``) to compare methods as the paper does.

    ``profile`` picks whose ADaPT this is: ``lorekit`` (these improvements),
    ``code`` (the published code's controller, executor, parser and budgets:
    :mod:`lorekit.agents.adapt.code_controller`) or ``paper`` (the code with
    the paper's stated budgets). Under ``code``/``paper``, ``d_max``,
    ``executor_turns`` and ``patience`` default to the profile's values for
    the env (``profiles.yaml``) and override them when given, as does
    ``executor_examples`` (``task_type`` or ``atomic``, ALFWorld); the options of
    LoreKit's own controller (``max_calls``, ``plan_steps``, ``plan_retries``,
    ``trust``) do not apply.
    """

    name = "adapt"

    def __init__(
        self,
        *,
        d_max: int | None = None,
        max_calls: int | None = 150,
        executor_turns: int | None = None,
        patience: int | None = None,
        plan_steps: int = 6,
        plan_retries: int = 2,
        trust: Trust = "env",
        executor_role: str = "executor",
        planner_role: str = "planner",
        temperature: float = 0.0,
        shots: int = DEFAULT_SHOTS,
        profile: str = "lorekit",
        executor_examples: str | None = None,
    ) -> None:
        self.profile = check_profile(profile)
        given: dict[str, object] = {
            "d_max": d_max,
            "executor_turns": executor_turns,
            "patience": patience,
            "examples": executor_examples,
        }
        for key, value in given.items():
            if isinstance(value, int) and value < 1:
                raise ValueError(f"{key} must be >= 1, got {value}")
        check_examples(executor_examples, profile)
        self.code: CodeAdapt | None = None
        if profile != "lorekit":
            self.code = CodeAdapt(
                profile,
                overrides={k: v for k, v in given.items() if v is not None},
                executor_role=executor_role,
                planner_role=planner_role,
                temperature=temperature,
                shots=shots,
            )
        d_max = 4 if d_max is None else d_max
        executor_turns = EXECUTOR_TURNS if executor_turns is None else executor_turns
        patience = 3 if patience is None else patience
        self.d_max = d_max
        self.max_calls = max_calls
        self.model_roles = model_roles(executor_role, planner_role)
        self.executor = Executor(
            role=executor_role,
            max_turns=executor_turns,
            patience=patience,
            trust=trust,
            temperature=temperature,
            shots=shots,
        )
        self.planner = Planner(
            role=planner_role,
            max_steps=plan_steps,
            retries=plan_retries,
            style="adapt",
            temperature=temperature,
            shots=shots,
        )
        self.trust = trust

    def env_defaults(self, env_name: str) -> dict[str, object]:
        """Env options the profile needs: the original TextCraft played on after the goal."""
        if self.code is None:
            return {}
        return dict(profile_env_defaults(env_name, self.profile))

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        if self.code is not None:
            return await self.code.run(env, task, roles, recorder, seed=seed)
        ctx = await start(env, task, roles, recorder, seed, self.max_calls)
        root = new_node(task.goal, 1)
        ctx.ep.trajectory.notes["tree"] = root  # live: kept even if an exception ends the episode
        budget_hit = False
        try:
            await self.solve(ctx, root)
        except BudgetExhausted:
            budget_hit = True
        return finish(ctx, self.name, budget_hit, tree=root, d_max=self.d_max)

    async def solve(self, ctx: AdaptContext, node: dict[str, Any]) -> bool:
        """Solve ``node["task"]`` at ``node["depth"]``, filling the node as it goes."""
        task, depth = node["task"], node["depth"]
        result = await self.executor.run(ctx, task, depth=depth)
        node["executor"] = result.to_dict()
        node["verified"] = result.verified
        if result.success or ctx.ep.done or depth >= self.d_max:
            node["success"] = result.success
            return result.success
        attempt = await self.planner.plan(ctx, task)
        node["plan"] = attempt.to_dict()
        plan = attempt.plan
        if plan is None:
            node["success"] = False
            return False

        async def run_step(index: int) -> bool:
            child = new_node(plan.steps[index - 1], depth + 1)
            node["children"].append(child)
            return await self.solve(ctx, child)

        def episode_over() -> bool | None:
            return ctx.ep.trajectory.success if ctx.ep.done else None

        outcome = await evaluate_async(plan.order, run_step, episode_over)
        node["plan_outcome"] = outcome
        node["success"] = await self._judge(ctx, task, outcome, node)
        return bool(node["success"])

    async def _judge(
        self, ctx: AdaptContext, task: str, outcome: bool, node: dict[str, Any]
    ) -> bool:
        """After a plan: the episode's end, else the env's check, else the plan's logic."""
        if ctx.ep.done:
            return ctx.ep.trajectory.success
        verified = await ctx.check(task)
        node["verified"] = verified
        if self.trust == "env" and verified is not None:
            return verified
        return outcome
