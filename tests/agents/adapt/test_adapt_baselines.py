"""The baselines on ADaPT's executor: Try-Again trials, Reflexion's memory,
Plan-and-Execute's single plan."""

from __future__ import annotations

from pathlib import Path

from _adapt_scripts import (
    DO_FINAL,
    DO_PLANKS,
    DO_STICKS,
    FINAL,
    PLAN,
    PLANKS,
    ROOT,
    STICKS,
    by_task,
    planner_by_task,
    task,
)

from lorekit.agents import NullRecorder, make_agent
from lorekit.agents.adapt import PlanExecuteAgent, ReflexionAgent, TryAgainAgent
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.llm import CachedLLM, Message, Roles, ScriptedLLM


async def test_try_again_trials_play_on_in_one_episode_when_asked(env: TextCraftEnv) -> None:
    ex = by_task({ROOT: [DO_PLANKS[0], "Action: failed"]})
    agent = TryAgainAgent(d_max=3, reset_per_trial=False)
    traj = await agent.run(env, task(env, "wooden_pickaxe"), Roles(ex), NullRecorder())
    assert not traj.success and [t["trial"] for t in traj.notes["trials"]] == [1, 2, 3]
    assert traj.actions == ["get 1 oak log"] * 3  # same episode: the logs pile up
    first_prompts = [c.messages[1].content for c in ex.calls if len(c.messages) == 2]
    assert "Inventory: 2 oak log" in first_prompts[2]
    assert "Lessons" not in first_prompts[2]  # no memory between trials


async def test_try_again_restarts_the_task_and_resamples_each_trial(env: TextCraftEnv) -> None:
    ex = by_task({ROOT: [DO_PLANKS[0], "Action: failed"]})
    traj = await TryAgainAgent(d_max=3).run(
        env, task(env, "wooden_pickaxe"), Roles(ex), NullRecorder()
    )
    assert not traj.success and [t["trial"] for t in traj.notes["trials"]] == [1, 2, 3]
    assert traj.notes["reset_per_trial"] is True
    assert [t["first_step"] for t in traj.notes["trials"]] == [0, 1, 2]
    first_prompts = [c.messages[1].content for c in ex.calls if len(c.messages) == 2]
    assert all("Inventory: empty" in p for p in first_prompts)  # each trial starts afresh
    draws = [(c.params.temperature, c.params.sample) for c in ex.calls if len(c.messages) == 2]
    assert draws == [(0.0, 0), (0.7, 1), (0.7, 2)]  # the paper's resampling, distinct draws


async def test_try_again_trials_are_not_cache_replays(tmp_path: Path, env: TextCraftEnv) -> None:
    ex = by_task({ROOT: [DO_PLANKS[0], "Action: failed"]})
    cached = CachedLLM(ex, tmp_path / "cache.sqlite3")
    await TryAgainAgent(d_max=3).run(
        env, task(env, "wooden_pickaxe"), Roles(cached), NullRecorder()
    )
    assert len(ex.calls) == 6  # every trial reached the model: no hit for trials 2 and 3


async def test_try_again_stops_at_the_first_success(env: TextCraftEnv) -> None:
    plan = [DO_PLANKS[0], DO_PLANKS[1], DO_STICKS[0], DO_STICKS[1], *DO_FINAL]
    trials = {"n": 0}

    def answer(messages: tuple[Message, ...]) -> str:
        if len(messages) == 2:
            trials["n"] += 1
            if trials["n"] == 1:
                return "Action: completed"  # trial 1 over-claims at once
        return plan[sum(m.role == "assistant" for m in messages[2:])]

    traj = await TryAgainAgent(d_max=4).run(
        env, task(env, "wooden_pickaxe"), Roles(ScriptedLLM(fn=answer)), NullRecorder()
    )
    assert traj.success and len(traj.notes["trials"]) == 2
    trial1 = traj.notes["trials"][0]
    assert trial1["claimed"] is True and trial1["verified"] is False and trial1["overclaimed"]


async def test_try_again_old_mode_stops_at_the_first_success(env: TextCraftEnv) -> None:
    def answer(messages: tuple[Message, ...]) -> str:
        if "Inventory: empty" in messages[1].content:
            return "Action: get 1 oak log" if len(messages) == 2 else "Action: completed"
        script = [*DO_PLANKS[1:2], *DO_STICKS[:2], *DO_FINAL]
        return script[sum(m.role == "assistant" for m in messages[2:])]

    traj = await TryAgainAgent(d_max=4, reset_per_trial=False).run(
        env, task(env, "wooden_pickaxe"), Roles(ScriptedLLM(fn=answer)), NullRecorder()
    )
    assert traj.success and len(traj.notes["trials"]) == 2


async def test_reflexion_keeps_lessons_for_later_trials(env: TextCraftEnv) -> None:
    lessons = iter(
        ["Reflection: oak planks cannot be fetched; craft them.", "Reflection: second lesson."]
    )

    def answer(messages: tuple[Message, ...]) -> str:
        if "Reflection:" in messages[0].content:
            assert "Action: get 3 oak planks" in messages[1].content  # it sees its attempt
            return next(lessons)
        return "Action: get 3 oak planks" if len(messages) == 2 else "Action: failed"

    llm = ScriptedLLM(fn=answer)
    traj = await ReflexionAgent(d_max=3).run(
        env, task(env, "wooden_pickaxe"), Roles(llm), NullRecorder()
    )
    assert not traj.success
    assert traj.notes["memory"] == ["oak planks cannot be fetched; craft them.", "second lesson."]
    firsts = [
        c.messages[1].content
        for c in llm.calls
        if len(c.messages) == 2 and "Last successful action" in c.messages[1].content
    ]
    assert len(firsts) == 3
    assert "Lessons" not in firsts[0]
    assert "- oak planks cannot be fetched; craft them." in firsts[1]
    assert "- second lesson." in firsts[2] and "- oak planks cannot" in firsts[2]
    # no reflection after the last trial: 3 trials x 2 turns + 2 reflections
    assert len(llm.calls) == 8 and traj.notes["llm_calls"] == 8


async def test_plan_execute_runs_each_step_once_without_adapting(env: TextCraftEnv) -> None:
    ex = by_task({PLANKS: DO_PLANKS, STICKS: DO_STICKS, FINAL: DO_FINAL})
    planner = planner_by_task({ROOT: PLAN})
    traj = await PlanExecuteAgent().run(
        env,
        task(env, "wooden_pickaxe"),
        Roles({"executor": ex, "planner": planner}),
        NullRecorder(),
    )
    assert traj.success and len(planner.calls) == 1
    assert "complete plan" in planner.calls[0].messages[1].content
    # a failing step is not decomposed or retried
    ex2 = by_task({PLANKS: ["Action: failed"]})
    planner2 = planner_by_task({ROOT: PLAN})
    traj2 = await PlanExecuteAgent().run(
        env,
        task(env, "wooden_pickaxe"),
        Roles({"executor": ex2, "planner": planner2}),
        NullRecorder(),
    )
    assert not traj2.success and len(planner2.calls) == 1 and len(ex2.calls) == 1
    assert traj2.notes["tree"]["children"][0]["success"] is False


def test_registry_names() -> None:
    for name in ("adapt", "plan-execute", "try-again", "reflexion"):
        assert make_agent(name).name == name
