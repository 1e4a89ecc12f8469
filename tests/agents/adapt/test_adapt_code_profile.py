"""ADaPT's code profile: the published controller and executor loop, on compat TextCraft."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lorekit.agents.adapt import AdaptAgent
from lorekit.agents.adapt.code_executor import CodeRun, TranscriptExecutor
from lorekit.agents.adapt.common import start
from lorekit.agents.adapt.profiles import settings_for
from lorekit.agents.base import NullRecorder
from lorekit.envs.base import Task
from lorekit.envs.textcraft.env import TextCraftEnv
from lorekit.llm.roles import Roles
from lorekit.llm.scripted import ScriptedLLM

GOAL = "chiseled_nether_bricks"  # craft 1 chiseled nether bricks using 2 nether brick slab
SLABS = [
    "get 12 nether brick",
    *["craft 1 nether bricks using 4 nether brick"] * 3,
    "craft 6 nether brick slab using 3 nether bricks",
]
CHISEL = "craft 1 chiseled nether bricks using 2 nether brick slab"


@pytest.fixture(scope="module")
def compat() -> TextCraftEnv:
    return TextCraftEnv("datapack", compat=True, max_steps=None, after_goal="continue")


def task(env: TextCraftEnv, item: str = GOAL) -> Task:
    return next(t for t in env.tasks("adapt-200") if t.id == item)


def roles(
    executor: Sequence[str], planner: Sequence[str] = ()
) -> tuple[Roles, ScriptedLLM, ScriptedLLM]:
    ex, pl = ScriptedLLM(list(executor)), ScriptedLLM(list(planner), default="")
    return Roles({"executor": ex, "planner": pl}), ex, pl


async def run_executor(
    env: TextCraftEnv, lines: Sequence[str], **overrides: object
) -> tuple[CodeRun, ScriptedLLM]:
    settings = settings_for("textcraft", "code").with_overrides(**overrides)
    r, ex, _ = roles(lines)
    ctx = await start(env, task(env), r, NullRecorder(), None, None)
    run = await TranscriptExecutor(settings).run(ctx, "fetch 1 nether brick", "Goal: x\n", [])
    return run, ex


async def test_thought_lines_are_answered_ok_and_never_reach_the_env(compat: TextCraftEnv) -> None:
    run, _ = await run_executor(
        compat, ["think: let me look", "> get 1 nether brick", "think: task completed"]
    )
    assert run.actions == [
        "get 1 nether brick"
    ]  # the "> " the model wrote is dropped, as the code did
    assert run.transcript == (
        " think: let me look\nOK.\n> get 1 nether brick\nGot 1 nether brick\n"
        "> think: task completed\nOK.\n>"
    )
    assert (run.claimed, run.success, run.stop) == (True, True, "completed")


async def test_eight_stalled_turns_in_a_row_end_the_run_and_the_last_is_not_kept(
    compat: TextCraftEnv,
) -> None:
    stalls = ["think: hmm", "get 1 chiseled nether bricks"] * 4  # "OK." and "Could not find ..."
    run, _ = await run_executor(compat, [*stalls, "get 1 nether brick"])
    assert (run.stop, run.success, run.turns) == ("patience", False, 8)
    assert run.transcript.count("\n>") == 7  # the eighth turn is cut before it is written down
    # seven stalls, then a valid action, start the count again
    run, _ = await run_executor(
        compat, [*stalls[:7], "get 1 nether brick", *stalls[:6], "think: task failed"]
    )
    assert (run.stop, run.claimed) == ("failed", False)
    # a verdict that is itself the eighth stall ends the run by patience, and (as in the
    # code, which only resets success when no verdict was given) keeps its claim
    run, _ = await run_executor(compat, [*stalls[:7], "think: task completed"])
    assert (run.stop, run.success, run.reward) == ("patience", True, 0.0)


async def test_the_turn_budget_is_the_codes_39(compat: TextCraftEnv) -> None:
    run, ex = await run_executor(compat, ["inventory"] * 50)
    assert (run.turns, run.stop, run.success, len(ex.calls)) == (39, "turns", False, 39)


async def test_a_verdict_phrase_ends_the_run_in_any_line_on_textcraft_only_in_thoughts_on_alfworld(
    compat: TextCraftEnv,
) -> None:
    line = "get 1 nether brick. Task Completed!"
    run, _ = await run_executor(compat, [line])
    assert (run.claimed, run.success, run.turns) == (True, True, 1)
    run, _ = await run_executor(compat, [line, "think: task completed"], verdict_anywhere=False)
    assert (run.claimed, run.turns) == (True, 2)


async def test_crafting_the_goal_ends_the_run_with_reward(compat: TextCraftEnv) -> None:
    run, _ = await run_executor(compat, [*SLABS, CHISEL])
    assert (run.success, run.reward, run.stop, run.claimed) == (True, 1.0, "env_done", None)


PLAN = (
    "Step 1: fetch 2 nether brick slab\n"
    "Step 2: craft 1 chiseled nether bricks using 2 nether brick slab\n"
    "Step 3: fetch 1 chiseled nether bricks\n"
    "Execution Order: (Step 1 AND Step 2 AND Step 3)"
)


async def test_after_the_goal_the_plan_runs_on_and_the_last_run_is_the_figure(
    compat: TextCraftEnv,
) -> None:
    executor = [
        "think: task failed",  # the root
        *SLABS, "think: task completed",  # step 1
        CHISEL,  # step 2 crafts the goal
        "inventory", "think: I hold it. Task completed",  # step 3 still runs (env_53 in the record)
    ]  # fmt: skip
    r, ex, pl = roles(executor, [PLAN])
    traj = await AdaptAgent(profile="code").run(compat, task(compat), r, NullRecorder())
    log = traj.notes["plan_log"]
    assert [e.get("run") for e in log if "run" in e] == [
        "craft chiseled nether bricks.",
        "fetch 2 nether brick slab",
        "craft 1 chiseled nether bricks using 2 nether brick slab",
        "fetch 1 chiseled nether bricks",
    ]
    assert traj.success is True  # the env: the goal was crafted
    assert traj.notes["code_reward"] == 0.0  # the code's figure: the last run's reward
    assert (
        traj.steps[-1].observation
        == "Inventory: [nether brick slab] (4) [chiseled nether bricks] (1) "
    )
    # after each success the next executor is told the inventory as it was then
    told = "> inventory\nInventory: [nether brick slab] (6) \n"
    assert told in ex.calls[len(SLABS) + 2].messages[-1].content
    assert len(pl.calls) == 1


async def test_the_planner_is_asked_once_whatever_it_answers(compat: TextCraftEnv) -> None:
    r, ex, pl = roles(["think: task failed"] * 3, ["I have no idea."])
    traj = await AdaptAgent(profile="code").run(compat, task(compat), r, NullRecorder())
    # unreadable -> all its steps (none), AND: nothing runs, the root's failure stands
    assert (len(pl.calls), len(ex.calls), traj.notes["code_success"]) == (1, 1, False)
    assert traj.notes["plan_log"][-1] == {"plan": [], "depth": 2, "logic": "AND"}


async def test_the_executors_claim_decides_not_the_env(compat: TextCraftEnv) -> None:
    r, _, pl = roles(["think: Task completed"])
    traj = await AdaptAgent(profile="code").run(compat, task(compat), r, NullRecorder())
    assert traj.notes["code_success"] is True and traj.success is False and not pl.calls


def test_the_profile_sets_the_codes_budgets_and_options_override_them() -> None:
    agent = AdaptAgent(profile="code")
    assert agent.code is not None
    s = agent.code.settings("textcraft")
    assert (s.d_max, s.executor_turns, s.patience) == (4, 39, 8)
    assert AdaptAgent(profile="code", d_max=2).code.settings("textcraft").d_max == 2  # type: ignore[union-attr]
    assert AdaptAgent(profile="paper").code.settings("textcraft").executor_turns == 20  # type: ignore[union-attr]
    assert agent.env_defaults("textcraft") == {"after_goal": "continue"}
    with pytest.raises(ValueError, match="WebShop ADaPT plans over its own modules"):
        agent.env_defaults("webshop")
    with pytest.raises(ValueError, match="profile: expected one of lorekit, code, paper"):
        AdaptAgent(profile="authors")
    assert AdaptAgent().env_defaults("textcraft") == {}
