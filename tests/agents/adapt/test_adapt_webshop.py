"""ADaPT and ReAct on WebShop: the bridge's state and checks, the worked examples replay in the
env, and a scripted run that fails, decomposes and buys the right product."""

from __future__ import annotations

import pytest
from _adapt_scripts import by_task, planner_by_task

from lorekit.agents import NullRecorder, ReActAgent
from lorekit.agents.adapt import AdaptAgent, WebShopBridge, bridge_for, parse_plan
from lorekit.agents.examples import examples_for
from lorekit.envs.base import Task
from lorekit.envs.webshop import WebShopEnv
from lorekit.llm import Roles, ScriptedLLM

WEBSHOP = examples_for("webshop")


@pytest.fixture(scope="module")
def shop() -> WebShopEnv:
    return WebShopEnv()


def test_bridge_is_registered(shop: WebShopEnv) -> None:
    """What the controller gets for "webshop" answers from the shop's state;
    an env without a bridge gets one that can never tell."""
    bridge, unknown = bridge_for("webshop"), bridge_for("no-such-env")
    task = shop.tasks("test")[0]
    opening = shop.reset(task)
    assert "Instruction:" in opening.text
    assert "Instruction:" not in bridge.describe_setting(opening.text, task.goal)
    assert bridge.check_subtask(shop, "search[anything]") is False
    shop.step(f"search[{task.data['query']}]")
    assert bridge.check_subtask(shop, "search[anything]") is True
    assert unknown.check_subtask(shop, "search[anything]") is None
    assert "Last search:" in bridge.describe_state(shop) and unknown.describe_state(shop) == ""


def test_executor_example_replays_in_the_env(shop: WebShopEnv) -> None:
    test_goals = {t.goal for t in shop.tasks("test")}
    assert WEBSHOP.executor
    for demo in WEBSHOP.executor:
        task = next(t for t in shop.tasks("train") if t.goal == demo.task)
        assert demo.task not in test_goals
        opening = shop.reset(task)
        assert WebShopBridge().describe_setting(opening.text, task.goal) == demo.setting.strip()
        step = None
        for turn in demo.turns[:-1]:
            step = shop.step(turn.action)
            assert step.observation == turn.observation, turn.action
        assert step is not None and step.reward == 1.0
        assert demo.turns[-1].action == "completed"
        assert WebShopBridge().check_subtask(shop, demo.task) is True


def test_worked_plans_parse() -> None:
    plans = WEBSHOP.planner["adapt"]
    assert len(plans) >= 2
    for demo in plans:
        assert parse_plan(demo.plan).steps


def test_bridge_state_and_checks(shop: WebShopEnv) -> None:
    bridge = WebShopBridge()
    task = shop.tasks("test")[0]
    shop.reset(task)
    assert bridge.check_subtask(shop, "search[anything]") is False
    assert bridge.check_subtask(shop, task.goal) is False
    assert task.goal not in bridge.describe_state(shop)  # the instruction is not repeated
    shop.step(f"search[{task.data['query']}]")
    assert bridge.check_subtask(shop, "search[anything]") is True
    asin = shop.products[shop.browser.shown_results()[0]].asin
    assert bridge.check_subtask(shop, f"open product [{asin}]") is False
    shop.step(f"click[{asin}]")
    assert bridge.check_subtask(shop, f"open product [{asin}]") is True
    assert bridge.check_subtask(shop, f"check that {asin} matches the criteria") is None
    product = shop.products[shop.browser.product or 0]
    state = bridge.describe_state(shop)
    assert f"Open product: [{asin}]" in state and product.title in state
    if product.options:
        value = next(iter(product.options.values()))[0]
        assert bridge.check_subtask(shop, f"select {value}") is False
        shop.step(f"click[{value}]")
        assert bridge.check_subtask(shop, f"select {value}") is True
        assert value in bridge.describe_state(shop)
    assert bridge.check_subtask(shop, "buy the open product") is False
    shop.step("click[Buy Now]")
    assert bridge.check_subtask(shop, "buy the open product") is True


async def test_adapt_decomposes_and_buys(shop: WebShopEnv) -> None:
    task: Task = shop.tasks("test")[2]
    shop.reset(task)
    query = task.goal.split(" with ")[0].split(", and price")[0]
    target = task.data["asin"]
    options = list(task.data["goal_options"].values())
    search, pick, buy = f"search[{query}]", f"open product [{target}]", "buy the open product"
    order = "Execution order: Step 1 AND Step 2 AND Step 3"
    plan = f"Step 1: {search}\nStep 2: {pick}\nStep 3: {buy}\n{order}"
    executor = by_task(
        {
            task.goal: ["Action: failed"],
            search: [f"Action: {search}", "Action: completed"],
            pick: [
                "Action: click[Next >]",
                "Action: click[< Prev]",
                f"Action: click[{target}]",
                "Action: completed",
            ],
            buy: [*(f"Action: click[{v}]" for v in options), "Action: click[Buy Now]"],
        }
    )
    shop.step(f"search[{query}]")  # the scripted pick opens the target from page 1
    assert target in [shop.products[i].asin for i in shop.browser.shown_results()]
    planner = planner_by_task({task.goal: plan})
    trajectory = await AdaptAgent(d_max=2).run(
        shop, task, Roles({"executor": executor, "planner": planner}), NullRecorder()
    )
    assert trajectory.success and trajectory.steps[-1].reward == 1.0
    tree = trajectory.notes["tree"]
    assert [c["task"] for c in tree["children"]] == [search, pick, buy]
    assert tree["children"][0]["verified"] is True and tree["children"][1]["verified"] is True


async def test_react_buys_through_the_real_env() -> None:
    env = WebShopEnv()
    task = env.tasks("test")[4]
    env.reset(task)
    plan = []
    while (action := env.expert_action()) is not None:
        plan.append(action)
        env.step(action)
    model = ScriptedLLM([f"Thought: next step\nAction: {a}" for a in plan])
    trajectory = await ReActAgent().run(env, task, Roles({"executor": model}), NullRecorder())
    assert trajectory.success and trajectory.steps[-1].reward == 1.0
    first_prompt = "\n".join(m.content for m in model.calls[0].messages)
    assert "search[<query>]" in first_prompt and task.goal in first_prompt
