"""ReAct: reason, then act, one environment action per model turn.

There is one ReAct loop in LoreKit: ADaPT's executor
(:class:`lorekit.agents.adapt.Executor`). The ``react`` agent is that
executor run once on the whole task, with no planner: the same prompt (the
manual, the environment's rules and worked examples, the goal, the state),
the same answer grammar (``Thought: ... / Action: ...``, or ``completed`` /
``failed`` to stop) and the same limits (``max_turns`` model turns, where an
unusable answer costs one, and ``patience`` invalid actions in a row). So
``react`` and ``AdaptAgent(d_max=1)`` differ only in their default turn
budget: the paper gives ReAct ``d_max`` times the executor's turns, because
ADaPT may call the executor up to that many times as often.
"""

from __future__ import annotations

from dataclasses import asdict

from lorekit.agents.adapt.code_controller import CodeAdapt
from lorekit.agents.adapt.common import finish, start
from lorekit.agents.adapt.executor import EXECUTOR_TURNS, Executor, ReActTurn
from lorekit.agents.adapt.profiles import check_examples, check_profile, profile_env_defaults
from lorekit.agents.base import Recorder, Trajectory
from lorekit.agents.examples import DEFAULT_SHOTS
from lorekit.agents.react_grammar import parse_react
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.llm.roles import Roles

__all__ = ["REACT_TURNS", "ReActAgent", "ReActTurn", "parse_react"]

REACT_TURNS = 4 * EXECUTOR_TURNS
"""ReAct's default turn budget: ADaPT's default ``d_max`` (4) times its executor's turns."""


class ReActAgent:
    """The executor alone on the whole task; see the module docstring.

    ``max_turns`` bounds model calls; the environment's own step limit, if
    it has one, bounds actions. ``patience=None`` lets invalid actions go on
    until the turn budget. ``history_turns`` keeps the prompt short on long
    episodes by sending only the latest turns. ``shots`` is how many worked
    examples the prompt shows; ``prompts`` names the template set in
    ``lorekit/agents/prompts/``.

    ``profile="code"`` or ``"paper"`` plays the published code's executor loop
    alone (:class:`~lorekit.agents.adapt.code_controller.CodeAdapt` with
    ``d_max=1``): its transcript prompt, thought lines, patience and, by
    default, the profile's ReAct turns for the env (``max_turns`` overrides;
    ``patience`` is the profile's there), and ``executor_examples``
    (``task_type`` or ``atomic`` on ALFWorld) picks its worked examples as for
    ADaPT's executor, so a table's ReAct row shows what that table's executor showed.
    """

    name = "react"

    def __init__(
        self,
        *,
        role: str = "executor",
        max_turns: int | None = None,
        patience: int | None = 3,
        history_turns: int | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = 256,
        shots: int = DEFAULT_SHOTS,
        prompts: str = "react",
        profile: str = "lorekit",
        executor_examples: str | None = None,
    ) -> None:
        if max_turns is not None and max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        self.profile = check_profile(profile)
        check_examples(executor_examples, profile)
        self.code: CodeAdapt | None = None
        if profile != "lorekit":
            given: dict[str, object] = {"executor_turns": max_turns} if max_turns else {}
            if executor_examples is not None:
                given["examples"] = executor_examples
            self.code = CodeAdapt(
                profile, react=True, overrides=given, executor_role=role, shots=shots,
                temperature=temperature,
            )  # fmt: skip
        max_turns = REACT_TURNS if max_turns is None else max_turns
        self.role = role
        self.model_roles: tuple[str, ...] = (role,)
        self.max_turns = max_turns
        self.executor = Executor(
            role=role,
            max_turns=max_turns,
            patience=patience,
            temperature=temperature,
            max_tokens=max_tokens,
            history_turns=history_turns,
            shots=shots,
            prompts=prompts,
        )

    def env_defaults(self, env_name: str) -> dict[str, object]:
        """Env options the profile needs (the code's TextCraft played on after the goal)."""
        if self.code is None:
            return {}
        return dict(profile_env_defaults(env_name, self.profile))

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        if self.code is not None:
            return await self.code.run(env, task, roles, recorder, seed=seed)
        ctx = await start(env, task, roles, recorder, seed, max_calls=None)
        result = await self.executor.run(ctx, task.goal, depth=1)
        if result.stop == "turns":
            ctx.ep.stop("budget")
        return finish(
            ctx,
            self.name,
            False,
            turns=[asdict(t) for t in result.log],
            format_errors=result.format_errors,
            stop=result.stop,
        )
