"""ADaPT's controller on TextCraft with scripted models: decomposition only on
failure, AND/OR short-circuits, d_max, the call budget, information passing and
the environment's word over the executor's."""

from __future__ import annotations

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
from lorekit.agents.adapt import AdaptAgent, Executor, parse_plan, verdict_of
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.llm import Roles, ScriptedLLM


def roles(executor: ScriptedLLM, planner: ScriptedLLM) -> Roles:
    return Roles({"executor": executor, "planner": planner})


def tasks_run(llm: ScriptedLLM) -> list[str]:
    """Sub-tasks the executor was started on, in order (first turn of each)."""
    out = []
    for call in llm.calls:
        if not any(m.role == "assistant" for m in call.messages[2:]):
            out.append(call.messages[1].content.split("Goal: ")[-1].split("\n")[0])
    return out


async def test_executor_success_needs_no_planner(env: TextCraftEnv) -> None:
    ex = by_task({ROOT: [*DO_PLANKS[:2], *DO_STICKS[:2], *DO_FINAL]})
    planner = ScriptedLLM(default="Step 1: x\nExecution order: Step 1")
    traj = await AdaptAgent().run(
        env, task(env, "wooden_pickaxe"), roles(ex, planner), NullRecorder()
    )
    assert traj.success and traj.stop_reason == "done"
    assert planner.calls == [] and traj.notes["depth_reached"] == 1
    assert traj.notes["tree"]["children"] == [] and traj.notes["tree"]["plan"] is None


async def test_decomposes_on_failure_and_passes_information(env: TextCraftEnv) -> None:
    ex = by_task({ROOT: ["Action: failed"], PLANKS: DO_PLANKS, STICKS: DO_STICKS, FINAL: DO_FINAL})
    planner = planner_by_task({ROOT: PLAN})
    traj = await AdaptAgent().run(
        env, task(env, "wooden_pickaxe"), roles(ex, planner), NullRecorder()
    )
    assert traj.success and len(planner.calls) == 1
    assert tasks_run(ex) == [ROOT, PLANKS, STICKS, FINAL]
    tree = traj.notes["tree"]
    assert tree["plan"]["order"] == "(Step 1 AND Step 2 AND Step 3)"
    assert [c["task"] for c in tree["children"]] == [PLANKS, STICKS, FINAL]
    assert all(c["depth"] == 2 and c["success"] for c in tree["children"])
    assert traj.notes["depth_reached"] == 2
    # the stick sub-task starts from what the planks sub-task left behind
    firsts = [c for c in ex.calls if not any(m.role == "assistant" for m in c.messages[2:])]
    sticks_prompt = firsts[2].messages[1].content
    assert "Current state: Inventory: 4 oak planks" in sticks_prompt
    assert "Last successful action: craft 4 oak planks using 1 oak log" in sticks_prompt
    final_prompt = firsts[3].messages[1].content
    assert "2 stick" in final_prompt and "craft 2 stick using 4 bamboo" in final_prompt
    # the planner saw the state too (empty at the start)
    assert "Current state: Inventory: empty" in planner.calls[0].messages[1].content


async def test_and_stops_at_first_failure_and_d_max_limits_recursion(env: TextCraftEnv) -> None:
    ex = by_task({ROOT: ["Action: failed"], PLANKS: ["Action: failed"]})
    planner = planner_by_task(
        {ROOT: PLAN, PLANKS: "Step 1: get 1 oak log\nExecution order: Step 1"}
    )
    traj = await AdaptAgent(d_max=2).run(
        env, task(env, "wooden_pickaxe"), roles(ex, planner), NullRecorder()
    )
    assert not traj.success and traj.stop_reason == "gave_up"
    assert tasks_run(ex) == [ROOT, PLANKS]  # AND stopped; STICKS and FINAL never ran
    assert len(planner.calls) == 1  # depth 2 = d_max: no decomposition of PLANKS
    child = traj.notes["tree"]["children"][0]
    assert child["plan"] is None and child["success"] is False
    # with one more level, PLANKS is decomposed too
    ex3 = by_task({ROOT: ["Action: failed"], PLANKS: ["Action: failed"]})
    planner3 = planner_by_task(
        {ROOT: PLAN, PLANKS: "Step 1: get 1 oak log\nExecution order: Step 1"}
    )
    traj3 = await AdaptAgent(d_max=3).run(
        env, task(env, "wooden_pickaxe"), roles(ex3, planner3), NullRecorder()
    )
    assert len(planner3.calls) == 2 and traj3.notes["depth_reached"] == 3
    assert tasks_run(ex3) == [ROOT, PLANKS, "get 1 oak log"]


async def test_or_stops_at_first_success(env: TextCraftEnv) -> None:
    plan = (
        f"Step 1: {PLANKS}\nStep 2: craft 3 birch planks\nStep 3: {STICKS}\nStep 4: {FINAL}\n"
        "Execution order: (Step 1 OR Step 2) AND Step 3 AND Step 4"
    )
    ex = by_task({ROOT: ["Action: failed"], PLANKS: DO_PLANKS, STICKS: DO_STICKS, FINAL: DO_FINAL})
    traj = await AdaptAgent().run(
        env, task(env, "wooden_pickaxe"), roles(ex, planner_by_task({ROOT: plan})), NullRecorder()
    )
    assert traj.success
    assert "craft 3 birch planks" not in tasks_run(ex)
    # and when the first alternative fails, the second one runs
    plan2 = plan.replace("Step 1 OR Step 2", "Step 2 OR Step 1")
    ex2 = by_task({ROOT: ["Action: failed"], PLANKS: DO_PLANKS, STICKS: DO_STICKS, FINAL: DO_FINAL})
    traj2 = await AdaptAgent(d_max=2).run(
        env, task(env, "wooden_pickaxe"), roles(ex2, planner_by_task({ROOT: plan2})), NullRecorder()
    )
    assert traj2.success and tasks_run(ex2) == [ROOT, "craft 3 birch planks", PLANKS, STICKS, FINAL]


async def test_environment_overrules_an_overconfident_executor(env: TextCraftEnv) -> None:
    # the executor claims the planks are made after fetching only a log
    liar = [DO_PLANKS[0], "Action: completed"]
    ex = by_task({ROOT: ["Action: failed"], PLANKS: liar, STICKS: DO_STICKS, FINAL: DO_FINAL})
    traj = await AdaptAgent(d_max=2).run(
        env, task(env, "wooden_pickaxe"), roles(ex, planner_by_task({ROOT: PLAN})), NullRecorder()
    )
    assert not traj.success
    planks = traj.notes["tree"]["children"][0]
    assert planks["executor"]["claimed"] is True and planks["executor"]["verified"] is False
    assert planks["executor"]["overclaimed"] and traj.notes["overclaims"] == 1
    assert tasks_run(ex) == [ROOT, PLANKS]  # AND stopped: the env said the step failed
    # trusting the executor (the published behaviour) carries on past the lie
    ex2 = by_task({ROOT: ["Action: failed"], PLANKS: liar, STICKS: DO_STICKS, FINAL: DO_FINAL})
    traj2 = await AdaptAgent(d_max=2, trust="self").run(
        env, task(env, "wooden_pickaxe"), roles(ex2, planner_by_task({ROOT: PLAN})), NullRecorder()
    )
    assert tasks_run(ex2) == [ROOT, PLANKS, STICKS, FINAL]
    assert not traj2.success  # the final craft lacks planks; the env's reward decides


async def test_call_budget_stops_the_episode(env: TextCraftEnv) -> None:
    ex = by_task({}, default="Action: inventory")
    planner = planner_by_task({ROOT: PLAN})
    agent = AdaptAgent(max_calls=7, executor_turns=3)
    traj = await agent.run(env, task(env, "wooden_pickaxe"), roles(ex, planner), NullRecorder())
    assert traj.stop_reason == "budget" and traj.notes["budget_exhausted"]
    assert len(ex.calls) + len(planner.calls) == 7 == traj.notes["llm_calls"]
    # root: 3 turns, plan: 1 call, PLANKS: 3 turns; planning PLANKS is refused
    assert [s["stop"] for s in traj.notes["subtasks"]] == ["turns", "turns"]
    assert len(planner.calls) == 1
    assert traj.notes["tree"]["success"] is None  # interrupted, not failed
    # a budget that runs out inside an executor marks that sub-task
    ex2 = by_task({}, default="Action: inventory")
    traj2 = await AdaptAgent(max_calls=5, executor_turns=3).run(
        env, task(env, "wooden_pickaxe"), roles(ex2, planner_by_task({ROOT: PLAN})), NullRecorder()
    )
    assert [s["stop"] for s in traj2.notes["subtasks"]] == ["turns", "budget"]
    assert traj2.stop_reason == "budget" and len(ex2.calls) == 4


async def test_bad_plans_are_retried_with_the_reason(env: TextCraftEnv) -> None:
    answers = [
        "Step 1: craft 3 oak planks\nStep 2: craft 2 stick\nExecution order: Step 1 AND Step 3",
        "Step 1: craft 3 oak planks\nExecution order: (Step 1",
        "Here is my plan: craft everything.",
    ]
    ex = by_task({ROOT: ["Action: failed"]})
    planner = planner_by_task({ROOT: answers})
    traj = await AdaptAgent(plan_retries=2).run(
        env, task(env, "wooden_pickaxe"), roles(ex, planner), NullRecorder()
    )
    assert not traj.success and len(planner.calls) == 3
    errors = traj.notes["tree"]["plan"]["errors"]
    assert "the plan has 2 steps" in errors[0] and "balance" in errors[1] and "Step 1:" in errors[2]
    assert "the plan has 2 steps" in planner.calls[1].messages[-1].content


async def test_patience_ends_a_sub_task_of_invalid_actions(env: TextCraftEnv) -> None:
    ex = by_task({ROOT: ["Action: get 1 unobtainium"]})
    traj = await AdaptAgent(d_max=1, patience=3).run(
        env, task(env, "wooden_pickaxe"), roles(ex, ScriptedLLM(default="")), NullRecorder()
    )
    sub = traj.notes["subtasks"][0]
    assert sub["stop"] == "patience" and sub["invalid"] == 3 and len(traj.steps) == 3


def test_plan_parser_and_verdicts() -> None:
    plan = parse_plan(
        "**Step 1:** get 2 bamboo\n- Step 2) craft 1 stick\nExecution order: Step 1 AND Step 2"
    )
    assert plan.steps == ("get 2 bamboo", "craft 1 stick")
    assert verdict_of("Completed.") is True and verdict_of("FAILED") is False
    assert verdict_of("get 1 done") is None
    assert make_agent("adapt", d_max=2).name == "adapt"
    assert Executor(trust="self").trust == "self"
