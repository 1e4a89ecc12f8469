"""What one sub-task hands the next: only a *successful* sub-task passes its last
action on (as in the paper); a failed one, such as a failed OR branch, passes nothing."""

from __future__ import annotations

from _adapt_scripts import (
    DO_FINAL,
    DO_PLANKS,
    DO_STICKS,
    FINAL,
    PLANKS,
    ROOT,
    STICKS,
    by_task,
    planner_by_task,
    task,
    task_of,
)

from lorekit.agents import NullRecorder
from lorekit.agents.adapt import AdaptAgent
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.llm import Roles, ScriptedLLM

BIRCH = "craft 3 birch planks"
OR_PLAN = (
    f"Step 1: {BIRCH}\nStep 2: {PLANKS}\nStep 3: {STICKS}\nStep 4: {FINAL}\n"
    "Execution order: (Step 1 OR Step 2) AND Step 3 AND Step 4"
)


def first_prompts(llm: ScriptedLLM) -> dict[str, str]:
    """The opening user message of each executor run, by its task."""
    return {
        task_of(c.messages): c.messages[1].content
        for c in llm.calls
        if not any(m.role == "assistant" for m in c.messages[2:])
    }


def last_action_line(prompt: str) -> str:
    return next(line for line in prompt.splitlines() if line.startswith("Last successful action:"))


async def test_a_failed_or_branch_passes_nothing_to_the_next(env: TextCraftEnv) -> None:
    ex = by_task(
        {
            # the root executor acts (validly) and then gives up
            ROOT: ["Action: inventory", "Action: failed"],
            # the first OR branch fetches a birch log, then fails
            BIRCH: ["Action: get 1 birch log", "Action: failed"],
            PLANKS: DO_PLANKS,
            STICKS: DO_STICKS,
            FINAL: DO_FINAL,
        }
    )
    traj = await AdaptAgent(d_max=2).run(
        env,
        task(env, "wooden_pickaxe"),
        Roles({"executor": ex, "planner": planner_by_task({ROOT: OR_PLAN})}),
        NullRecorder(),
    )
    assert traj.success
    prompts = first_prompts(ex)
    # nothing succeeded yet: neither the failed root run nor the failed branch is passed on
    assert last_action_line(prompts[BIRCH]) == "Last successful action: none yet"
    assert last_action_line(prompts[PLANKS]) == "Last successful action: none yet"
    # both OR branches got the same information from the controller
    assert last_action_line(prompts[BIRCH]) == last_action_line(prompts[PLANKS])
    # a successful sub-task does pass its last action on
    assert last_action_line(prompts[STICKS]).endswith("craft 4 oak planks using 1 oak log")
    assert last_action_line(prompts[FINAL]).endswith("craft 2 stick using 4 bamboo")
    # the environment's state is the state: the branch's birch log is really there
    assert "1 birch log" in prompts[PLANKS]


async def test_a_sub_task_the_env_rejects_passes_nothing_on(env: TextCraftEnv) -> None:
    """An over-claimed step (env trust) counts as failed, so its actions are not passed on."""
    liar = [DO_PLANKS[0], "Action: completed"]
    steps = f"Step 1: {PLANKS}\nStep 2: {BIRCH}\nExecution order: Step 1"
    ex = by_task({ROOT: ["Action: failed"], PLANKS: liar})
    await AdaptAgent(d_max=2).run(
        env,
        task(env, "wooden_pickaxe"),
        Roles({"executor": ex, "planner": planner_by_task({ROOT: steps + " OR Step 2"})}),
        NullRecorder(),
    )
    prompts = first_prompts(ex)
    assert last_action_line(prompts[BIRCH]) == "Last successful action: none yet"
    # believing the executor (the paper's mode), the claimed success does pass it on
    ex2 = by_task({ROOT: ["Action: failed"], PLANKS: liar})
    await AdaptAgent(d_max=2, trust="self").run(
        env,
        task(env, "wooden_pickaxe"),
        Roles({"executor": ex2, "planner": planner_by_task({ROOT: steps + " AND Step 2"})}),
        NullRecorder(),
    )
    assert last_action_line(first_prompts(ex2)[BIRCH]).endswith("get 1 oak log")
