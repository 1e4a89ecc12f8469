"""ADaPT's controller as the published code ran it (profiles ``code`` and ``paper``).

The recursion of the authors' ``plan_and_run``, step for step:

- a (sub-)task is first given to the executor (:class:`TranscriptExecutor`);
  if the executor claims success, or the depth is ``d_max``, that is its
  outcome;
- otherwise the planner is asked once (no retries, no step limit) and its
  answer read by the original parser (:mod:`code_plan`); the steps run one
  level deeper, a nested group at the same level; AND stops at the first
  failure, OR at the first success; nothing stops the plan when the episode's
  goal is reached (the env plays on: TextCraft's ``after_goal=continue``);
- after every success the next executor is told the carried state: on
  TextCraft the inventory as it is then (a failed run passes nothing on, so
  the text can be stale), on ALFWorld the last action and observation of the
  successful run; the planner is told only the setting and the goal;
- ALFWorld's code reset the env before every sub-task and replayed the
  actions of the successful runs, so a failed run leaves no trace there;
- the episode's figure is the reward of the last executor run
  (``notes["code_reward"]``): the published results are that number. The
  trajectory's success stays the environment's (on TextCraft a goal crafted
  before the last run still counts there; see docs/adapt.md).

``notes["plan_log"]`` lists the runs and plans in the original's order and
form, ``notes["trace"]`` the transcripts the original kept (those of
successful runs outside failed sub-tasks), so a run can be compared with a
published result file line for line (:mod:`lorekit.agents.adapt.replay`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lorekit.agents.adapt.code_executor import TranscriptExecutor, act, code_prompts
from lorekit.agents.adapt.code_plan import StepGroup, describe, read_plan, unwrap
from lorekit.agents.adapt.common import AdaptContext, finish, start
from lorekit.agents.adapt.profiles import CodeSettings, settings_for
from lorekit.agents.base import Recorder, Trajectory
from lorekit.agents.examples import Demo
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task, TextEnv
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles

_TASK_LINE = "Your task is to: "


@dataclass(slots=True)
class _State:
    """What the original threaded through its recursion."""

    setting: str
    examples: list[str]
    info: str = ""
    checkpoint: list[str] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    steps_at_reset: int = 0


def split_opening(env_name: str, opening: str, fallback: str) -> tuple[str, str]:
    """(setting, root task) as the original cut its first observation."""
    if env_name == "textcraft" and "Goal: " in opening:
        setting, _, task = opening.partition("Goal: ")
        return setting, task
    if env_name == "alfworld" and _TASK_LINE in opening:
        lines = opening.split("\n")
        room = next((ln for ln in lines if ln.startswith("You are in the middle")), "")
        task = next(ln for ln in lines if ln.startswith(_TASK_LINE))[len(_TASK_LINE) :]
        return room, task
    return opening, fallback


def salient(completion: str) -> str:
    """ALFWorld's carried state: the last action and observation of a completed run."""
    completion = completion.rstrip("\n>")
    if "Task completed!" not in completion:
        return ""
    lines = completion.split("\n")[:-2]
    while len(lines) >= 2 and "think:" in lines[-2]:
        lines = lines[:-2]
    if len(lines) < 2:
        return ""
    return "\n".join([lines[-2].replace("Task completed!", ""), lines[-1]])


def _inventory_text(env: TextEnv) -> str:
    show = getattr(env, "inventory_text", None)
    return str(show()) if callable(show) else ""


def demo_transcript(demo: Demo, thought_prefix: str, reply: str) -> str:
    """A LoreKit worked example in the code's transcript form: each thought on a
    thought line answered ``reply``, each action with its observation, the verdict last."""
    lines = [demo.setting.strip(), f"{_TASK_LINE}{demo.task}", ""]
    for turn in demo.turns:
        lines += [f"> {thought_prefix} {turn.thought}", reply]
        if turn.observation is not None:
            lines += [f"> {turn.action}", turn.observation]
        else:
            verdict = (
                "Task completed!" if turn.action.strip().lower() == "completed" else "Task failed!"
            )
            lines += [f"> {thought_prefix} {verdict}", reply]
    return "\n".join(lines)


class CodeAdapt:
    """The published controller (see the module docstring); settings per env."""

    name = "adapt"

    def __init__(
        self,
        profile: str,
        *,
        react: bool = False,
        overrides: dict[str, Any] | None = None,
        executor_role: str = "executor",
        planner_role: str = "planner",
        temperature: float = 0.0,
        shots: int = 2,
    ) -> None:
        self.profile = profile
        self.react = react
        """The ReAct baseline: the executor alone (d_max 1) with the profile's ReAct turns."""
        self.name = "react" if react else "adapt"
        self.overrides = dict(overrides or {})
        self.executor_role = executor_role
        self.planner_role = planner_role
        self.temperature = temperature
        self.shots = shots

    def settings(self, env_name: str) -> CodeSettings:
        base = settings_for(env_name, self.profile)
        if self.react:
            base = base.with_overrides(d_max=1, executor_turns=base.react_turns)
        return base.with_overrides(**self.overrides)

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None
    ) -> Trajectory:
        ctx = await start(env, task, roles, recorder, seed, max_calls=None)
        settings = self.settings(ctx.ep.env.name)
        executor = TranscriptExecutor(
            settings, role=self.executor_role, temperature=self.temperature, shots=self.shots
        )
        setting, root_task = split_opening(settings.env, ctx.opening, task.goal)
        state = _State(setting, self._examples(ctx, settings, root_task))
        notes = ctx.ep.trajectory.notes
        notes.update(profile=settings.profile, plan_log=state.log)
        reward, success, trace, tree = await self._solve(
            ctx, settings, executor, state, root_task, 1
        )
        return finish(
            ctx,
            self.name,
            False,
            tree=tree,
            d_max=settings.d_max,
            code_reward=reward,
            code_success=success,
            trace=trace,
            profile_settings={"profile": settings.profile, "source": settings.source},
        )

    def _examples(self, ctx: AdaptContext, s: CodeSettings, root_task: str) -> list[str]:
        listed = code_prompts(s.env).get("examples")
        if isinstance(listed, list):
            return [str(e) for e in listed]
        # Task-specific examples, as the code chose them: the worked trajectories
        # whose task shares the most words with this episode's task first.
        words = set(root_task.lower().split())
        demos = sorted(
            ctx.examples.executor, key=lambda d: -len(words & set(d.task.lower().split()))
        )
        return [demo_transcript(d, s.thought_prefix, s.thought_reply) for d in demos]

    def _observation(self, s: CodeSettings, state: _State, task: str) -> str:
        if s.env == "alfworld":
            text = f"{state.setting}\n{_TASK_LINE}{task}"
        else:
            text = f"{state.setting}\nGoal: {task}\n"
        return f"{text}\n{state.info}" if state.info else text

    async def _carried(self, ctx: AdaptContext, s: CodeSettings, completion: str) -> str:
        if s.state == "inventory":
            return f"> inventory\n{await ctx.ep.env.call(_inventory_text)}\n"
        if s.state == "last_action":
            return salient(completion)
        return ""

    async def _reset(self, ctx: AdaptContext, state: _State) -> None:
        """ALFWorld's code: reset the env, replay the successful runs' actions."""
        if len(ctx.ep.trajectory.steps) == state.steps_at_reset:
            return  # nothing happened since the last reset: the state is the same
        await ctx.ep.restart()
        for action in state.checkpoint:
            await act(ctx.ep, action)
        state.steps_at_reset = len(ctx.ep.trajectory.steps)

    async def _plan(self, ctx: AdaptContext, s: CodeSettings, state: _State, task: str) -> str:
        prompts = code_prompts(s.env)
        if s.env == "alfworld":
            shown = f"{state.setting}\nGoal: {task}."
        else:
            shown = f"{state.setting}\nGoal: {task}\n"
        examples = "\n\n".join(str(e).strip("\n") for e in prompts.get("plan_examples") or [])
        user = str(prompts["planner"]).format(examples=examples, observation=shown)
        messages = [Message("system", str(prompts["planner_system"])), Message("user", user)]
        return await ctx.ask(
            self.planner_role,
            messages,
            temperature=self.temperature,
            max_tokens=s.planner_tokens,
            stop=list(s.planner_stop) or None,
        )

    async def _solve(
        self,
        ctx: AdaptContext,
        s: CodeSettings,
        executor: TranscriptExecutor,
        state: _State,
        task: str | StepGroup,
        depth: int,
    ) -> tuple[float, bool, str, dict[str, Any]]:
        if s.reset_between:
            await self._reset(ctx, state)
        running = ""
        reward, success = 0.0, False
        if isinstance(task, str):
            node = _node(task, depth)
            run = await executor.run(
                ctx, task, self._observation(s, state, task), state.examples, depth=depth
            )
            ctx.subtasks.append(run.to_dict())
            ctx.deepest = max(ctx.deepest, depth)
            node["executor"] = run.to_dict()
            state.log.append({"run": task, "depth": depth, "success": run.success})
            reward, success = run.reward, run.success
            if success or depth >= s.d_max:
                if success:
                    state.checkpoint.extend(run.actions)
                running += run.transcript + "\n"
                if success:
                    state.info = await self._carried(ctx, s, running)
                node["success"] = success
                return reward, success, running, node
            answer = await self._plan(ctx, s, state, task)
            group = unwrap(read_plan(answer))
            depth += 1
            node["plan"] = {
                "steps": group.labels(),
                "order": describe(group.to_data()),
                "raw": answer,
            }
        else:
            group = task
            node = _node(f"({group.operator} of {len(group.steps)} steps)", depth)
        data = group.to_data()
        state.log.append({"plan": data["steps"], "depth": depth, "logic": group.operator})
        for sub in group.steps:
            reward, success, text, child = await self._solve(ctx, s, executor, state, sub, depth)
            node["children"].append(child)
            if success:
                running += text + "\n"
                state.info = await self._carried(ctx, s, running)
            if group.operator == "OR" and success:
                break
            if group.operator == "AND" and not success:
                break
        node["plan_outcome"] = node["success"] = success
        return reward, success, running, node


def _whole_task(task: str) -> bool:
    """An ALFWorld game's own task sentence (put/heat/cool/clean ... and put, examine)."""
    words = task.lower().split()
    return bool(words) and (words[0] == "examine" or ("and" in words and "put" in words))


def _node(task: str, depth: int) -> dict[str, Any]:
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
