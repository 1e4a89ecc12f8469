"""The scripted study models follow the contract of the prompt they get: ADaPT's
planner prompt gets a one-level AND/OR plan, Plan-and-Execute's a complete one."""

from __future__ import annotations

from pathlib import Path

from lorekit.agents import NullRecorder
from lorekit.agents.adapt import Executor, PlanExecuteAgent, Planner
from lorekit.agents.adapt.common import start
from lorekit.agents.adapt.testing.textcraft import (
    SimulatedLLM,
    textcraft_executor,
    textcraft_planner,
)
from lorekit.envs.textcraft import TextCraftEnv, solver
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Message, Roles, ScriptedLLM
from lorekit.llm.base import RequestParams


async def plan_for(env: TextCraftEnv, item: str, planner: Planner) -> list[str]:
    """The steps the simulated planner answers to ``planner``'s real prompt."""
    llm = ScriptedLLM(fn=textcraft_planner(env.book))
    target = next(t for t in env.tasks("all") if t.id == item)
    ctx = await start(env, target, Roles({"planner": llm}), NullRecorder(), 0, None)
    attempt = await planner.plan(ctx, target.goal)
    assert attempt.plan is not None and attempt.errors == []
    return list(attempt.plan.steps)


async def test_a_complete_plan_is_asked_for_and_given(env: TextCraftEnv) -> None:
    deep = next(t for t in env.tasks("test") if t.group == "depth-4")
    item = str(deep.data["item"])
    steps = await plan_for(env, item, Planner(style="detailed", max_steps=10))
    crafts = [a for a in solver.plan(env.book, {}, item) if a.startswith("craft ")]
    assert steps == crafts  # every craft the goal needs, ingredients first
    # ADaPT's prompt asks for one level: the ingredients, then the one crafting command
    short = await plan_for(env, item, Planner(style="adapt", max_steps=6))
    assert [s for s in short if " using " in s] == [short[-1]]
    assert short[-1].split(" using ")[0] == crafts[-1].split(" using ")[0]


async def test_the_step_limit_in_the_prompt_is_kept(env: TextCraftEnv) -> None:
    # wooden pickaxe: (oak OR spruce planks) AND sticks AND the pickaxe, in one level
    assert len(await plan_for(env, "wooden_pickaxe", Planner(style="adapt"))) == 4
    for style in ("detailed", "adapt"):
        steps = await plan_for(env, "wooden_pickaxe", Planner(style=style, max_steps=2))
        assert 1 <= len(steps) <= 2, (style, steps)


async def test_plan_execute_with_a_complete_plan_solves_deep_recipes(tmp_path: Path) -> None:
    """With a planner that honours "complete plan", a noiseless executor of capability 2
    needs no adaptation: Plan-and-Execute solves every depth-4 task."""
    env = TextCraftEnv(max_steps=None)
    tasks = [t for t in env.tasks("test") if t.group == "depth-4"]
    roles = Roles(
        {
            "executor": ScriptedLLM(fn=textcraft_executor(env.book, capability=2, noise=0.0)),
            "planner": ScriptedLLM(fn=textcraft_planner(env.book)),
        }
    )
    with RunStore(tmp_path / "p.sqlite3") as store:
        result = await run_eval(
            store,
            env_factory=lambda: TextCraftEnv(max_steps=None),
            agent=PlanExecuteAgent(),
            roles=roles,
            episodes=plan_episodes(tasks),
            run_id="pe",
        )
    assert result.successes == len(tasks) > 0


async def test_a_resampled_draw_is_another_draw(env: TextCraftEnv) -> None:
    """At temperature > 0 another ``sample`` index gives another draw of the executor's
    noise (a Try-Again trial after a reset is not a replay); at temperature 0 it does not."""
    model = SimulatedLLM(textcraft_executor(env.book, capability=2, noise=0.5))
    target = next(t for t in env.tasks("all") if t.id == "wooden_pickaxe")
    ctx = await start(env, target, Roles({"executor": model}), NullRecorder(), 0, None)
    prompt = list(await Executor()._first_messages(ctx, target.goal, ()))

    async def answers(temperature: float, sample: int) -> list[str]:
        out = []
        for turn in range(1, 5):  # the noise applies from the second turn on
            history = [Message("assistant", f"Action: get {turn} oak log")] * turn
            history.append(Message("user", "Observation: Got 1 oak log."))
            done = await model.complete(
                [*prompt, *history], RequestParams(temperature=temperature, sample=sample)
            )
            out.append(done.text)
        return out

    assert await answers(0.0, 0) == await answers(0.0, 3)
    assert await answers(0.7, 0) == await answers(0.0, 0)
    draws = [await answers(0.7, s) for s in range(1, 6)]
    assert any(d != draws[0] for d in draws[1:])
