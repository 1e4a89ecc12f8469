"""Whose word decides a sub-task, for each ``trust`` mode, at both levels of
ADaPT's controller: the executor's claim about a sub-task, and a plan's
logical outcome for the task it decomposed.

- ``trust="env"``: the environment's check overrules both when it can tell.
- ``trust="self"`` (the published behaviour): the executor's claim and the
  plan's outcome stand, whatever the check says.
- Either way, the check is only consulted while the episode runs; once the
  episode has ended, its success is the verdict.
"""

from __future__ import annotations

from typing import Any

import pytest
from _adapt_scripts import ROOT, by_task, planner_by_task, task

from lorekit.agents import NullRecorder
from lorekit.agents.adapt import AdaptAgent
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.llm import Roles

LOG = "get 1 oak log"
ONE_STEP = f"Step 1: {LOG}\nExecution order: Step 1"
# An executor that fails the root, and claims the log without fetching it.
LIAR = {ROOT: ["Action: failed"], LOG: ["Action: completed"]}
# One that fails the root, and really fetches the log before claiming it.
HONEST = {ROOT: ["Action: failed"], LOG: [f"Action: {LOG}", "Action: completed"]}


async def _tree(env: TextCraftEnv, trust: str, script: dict[str, list[str]]) -> dict[str, Any]:
    roles = Roles({"executor": by_task(script), "planner": planner_by_task({ROOT: ONE_STEP})})
    agent = AdaptAgent(d_max=2, trust=trust)  # type: ignore[arg-type]
    traj = await agent.run(env, task(env, "wooden_pickaxe"), roles, NullRecorder())
    assert not traj.success  # nobody made a pickaxe: the episode's reward says so
    tree: dict[str, Any] = traj.notes["tree"]
    assert [c["task"] for c in tree["children"]] == [LOG]
    return tree


async def test_self_trust_keeps_the_plans_outcome_over_the_env_check(env: TextCraftEnv) -> None:
    tree = await _tree(env, "self", HONEST)
    child = tree["children"][0]
    assert child["success"] is True and child["verified"] is True
    # the plan's only step succeeded, so the plan did; the env's check of the
    # root task (no pickaxe yet) says no, and self-trust does not ask it
    assert tree["plan_outcome"] is True and tree["verified"] is False
    assert tree["success"] is True


async def test_env_trust_lets_the_check_overrule_the_plan(env: TextCraftEnv) -> None:
    tree = await _tree(env, "env", HONEST)
    assert tree["plan_outcome"] is True and tree["verified"] is False
    assert tree["success"] is False


@pytest.mark.parametrize(("trust", "child_success"), [("self", True), ("env", False)])
async def test_an_overclaimed_sub_task_counts_only_under_self_trust(
    env: TextCraftEnv, trust: str, child_success: bool
) -> None:
    tree = await _tree(env, trust, LIAR)
    child = tree["children"][0]
    assert child["executor"]["claimed"] is True and child["verified"] is False
    assert child["success"] is child_success
    assert tree["plan_outcome"] is child_success
    assert tree["success"] is child_success
