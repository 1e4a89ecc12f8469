"""Few-shot examples and environment rules as data: the TextCraft file replays in
the env, ``shots`` picks how many the prompts show, and every prompt shows the
(sub-)task it is about as its goal."""

from __future__ import annotations

from typing import Any

import pytest
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
)

from lorekit.agents import NullRecorder, make_agent
from lorekit.agents.adapt import (
    AdaptAgent,
    NullBridge,
    PlanExecuteAgent,
    TextCraftBridge,
    parse_goal,
    parse_plan,
)
from lorekit.agents.adapt.bridge import without_goal
from lorekit.agents.adapt.react import ReActAgent
from lorekit.agents.examples import ExamplesError, examples_for, parse_examples
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.llm import Message, Roles, ScriptedLLM

TEXTCRAFT = examples_for("textcraft")


def pickaxe(env: TextCraftEnv) -> Any:
    return next(t for t in env.tasks("all") if t.id == "wooden_pickaxe")


def commands_of(setting: str) -> list[str]:
    return [line for line in setting.splitlines() if line.startswith("craft ")]


def inventory_of(env: TextCraftEnv, state: str) -> dict[str, int]:
    body = state.removeprefix("Inventory:").strip()
    held: dict[str, int] = {}
    if body != "empty":
        for part in body.split(","):
            count, _, name = part.strip().partition(" ")
            ident = env.book.resolve(name) or env.book.resolve(name.removesuffix("s"))
            assert ident is not None, name
            held[ident] = int(count)
    return held


def test_textcraft_executor_examples_replay_in_the_env(env: TextCraftEnv) -> None:
    """Every worked trajectory is real: its commands are the book's, each
    observation is what the env says, and it ends ``completed`` only when done."""
    recipes = {env.book.command(r) for item in env.book.items for r in env.book.recipes_for(item)}
    test_ids = {t.id for t in env.tasks("test")}
    assert len(TEXTCRAFT.executor) >= 2
    for demo in TEXTCRAFT.executor:
        assert set(commands_of(demo.setting)) <= recipes, demo.task
        goal = parse_goal(demo.task)
        assert goal is not None and env.book.resolve(goal[1]) not in test_ids
        env.reset(env.tasks("test")[0])  # a deep goal no example makes: the episode goes on
        env._inventory = inventory_of(env, demo.state)
        for turn in demo.turns[:-1]:
            assert env.step(turn.action).observation == turn.observation, turn.action
        assert demo.turns[-1].action == "completed" and demo.turns[-1].observation is None
        assert TextCraftBridge().check_subtask(env, demo.task) is True


def test_textcraft_worked_plans_follow_their_contracts(env: TextCraftEnv) -> None:
    recipes = {env.book.command(r) for item in env.book.items for r in env.book.recipes_for(item)}
    assert set(TEXTCRAFT.planner) == {"adapt", "detailed"}
    for style, plans in TEXTCRAFT.planner.items():
        assert len(plans) >= 2 and TEXTCRAFT.planner_rules[style]
        for demo in plans:
            assert set(commands_of(demo.setting)) <= recipes
            plan = parse_plan(demo.plan)
            crafts_using = [s for s in plan.steps if " using " in s]
            if style == "adapt":  # one level: at most one crafting command, used last
                assert crafts_using == [plan.steps[-1]]
            else:  # complete: every step names its one command
                assert crafts_using == list(plan.steps)
            assert all(parse_goal(s) is not None for s in plan.steps)


def test_textcraft_rules_say_what_trips_models_up() -> None:
    rules = TEXTCRAFT.rules.lower()
    for point in ("one crafting command", "exact counts", "no partial recipes", "base items"):
        assert point in rules, point


async def test_shots_sets_how_many_examples_the_prompts_show(env: TextCraftEnv) -> None:
    for shots in (0, 1, 2):
        ex = by_task(
            {ROOT: ["Action: failed"], PLANKS: DO_PLANKS, STICKS: DO_STICKS, FINAL: DO_FINAL}
        )
        planner = planner_by_task({ROOT: PLAN})
        agent = make_agent("adapt", shots=shots, d_max=2)
        traj = await agent.run(
            env, pickaxe(env), Roles({"executor": ex, "planner": planner}), NullRecorder()
        )
        assert traj.success
        system = ex.calls[0].messages[0].content
        assert system.count("\nExample ") == shots and ("Example 1" in system) == (shots > 0)
        assert TEXTCRAFT.rules in system  # the rules do not depend on the shots
        plan_system = planner.calls[0].messages[0].content
        assert plan_system.count("\nExample ") == shots and TEXTCRAFT.rules in plan_system
        for demo in TEXTCRAFT.planner["adapt"][:shots]:
            assert demo.plan in plan_system  # ADaPT's planner sees one-level worked plans
        if shots:
            assert TEXTCRAFT.executor[0].turns[0].action in system
    # Plan-and-Execute's planner sees worked complete plans, and its own rules
    planner = planner_by_task({ROOT: PLAN})
    ex = by_task({PLANKS: DO_PLANKS, STICKS: DO_STICKS, FINAL: DO_FINAL})
    await PlanExecuteAgent(shots=1).run(
        env, pickaxe(env), Roles({"executor": ex, "planner": planner}), NullRecorder()
    )
    plan_system = planner.calls[0].messages[0].content
    assert TEXTCRAFT.planner["detailed"][0].plan in plan_system
    assert TEXTCRAFT.planner["adapt"][0].plan not in plan_system
    assert TEXTCRAFT.planner_rules["detailed"] in plan_system
    # ReAct takes the option too, and a bad value is refused before any episode
    assert make_agent("react", shots=3).executor.shots == 3
    with pytest.raises(ValueError, match="shots"):
        ReActAgent(shots=-1)


async def test_a_sub_task_is_shown_as_the_goal_without_the_root_goal(env: TextCraftEnv) -> None:
    ex = by_task({ROOT: ["Action: failed"], PLANKS: DO_PLANKS, STICKS: DO_STICKS, FINAL: DO_FINAL})
    planner = planner_by_task({ROOT: PLAN})
    await AdaptAgent(d_max=2).run(
        env, pickaxe(env), Roles({"executor": ex, "planner": planner}), NullRecorder()
    )
    firsts = [c.messages[1].content for c in ex.calls if len(c.messages) == 2]
    root, planks = firsts[0], firsts[1]
    assert "Goal: craft wooden pickaxe" in root
    assert "Goal: craft 3 oak planks" in planks
    assert "wooden pickaxe." not in planks and planks.count("Goal:") == 1
    assert "Crafting commands:" in planks  # the world it acts in is still shown
    # the planner's goal is the task it decomposes
    assert planner.calls[0].messages[1].content.count("Goal: craft wooden pickaxe") == 1


def test_examples_files_are_checked_with_the_field_named() -> None:
    good: dict[str, Any] = {
        "rules": "Be careful.",
        "executor": [
            {
                "setting": "Crafting commands:",
                "task": "get 1 dirt",
                "state": "Inventory: empty",
                "turns": [{"thought": "t", "action": "completed"}],
            }
        ],
        "planner": {"adapt": {"rules": "r", "examples": []}},
    }
    parsed = parse_examples(good, "x.yaml")
    assert parsed.executor[0].turns[0].observation is None and parsed.planner["adapt"] == ()
    bad_turn = {**good, "executor": [{**good["executor"][0], "turns": [{"thought": "t"}]}]}
    with pytest.raises(ExamplesError, match=r"x.yaml: executor\[0\].turns\[0\].action"):
        parse_examples(bad_turn, "x.yaml")
    with pytest.raises(ExamplesError, match="unknown field"):
        parse_examples({**good, "extra": 1}, "x.yaml")
    with pytest.raises(ExamplesError, match="planner must be a mapping"):
        parse_examples({**good, "planner": []}, "x.yaml")
    assert examples_for("no-such-env").executor == ()
    assert examples_for("../prompts/react").rules == ""  # names, never paths


async def test_planner_examples_come_before_the_task(env: TextCraftEnv) -> None:
    """The worked plans sit in the system message, so the user message holds one goal."""
    seen: list[tuple[Message, ...]] = []

    def plan(messages: tuple[Message, ...]) -> str:
        seen.append(messages)
        return "Step 1: get 1 oak log\nExecution order: Step 1"

    models = {"executor": ScriptedLLM(default="Action: failed"), "planner": ScriptedLLM(fn=plan)}
    await PlanExecuteAgent().run(env, pickaxe(env), Roles(models), NullRecorder())
    assert seen[0][1].content.count("Goal:") == 1 and "Step 1:" not in seen[0][1].content
    assert "Step 1:" in seen[0][0].content  # the worked plans


def test_settings_drop_the_goal_lines_only() -> None:
    opening = "Step 0. You face a tree.\nInventory: nothing.\nGoal: Unlock the achievement eat_cow."
    kept = NullBridge().describe_setting(opening, "Unlock the achievement eat_cow.")
    assert kept == "Step 0. You face a tree.\nInventory: nothing."
    other = "You are in a kitchen.\nYour task is to: put a clean mug on the desk."
    assert without_goal(other, "put a clean mug on the desk") == "You are in a kitchen."
    # TextCraft drops only its Goal: line; a crafting command may name the goal item
    craft = "Crafting commands:\ncraft 1 stick using 2 bamboo\n\nGoal: craft stick."
    assert TextCraftBridge().describe_setting(craft, "craft stick") == (
        "Crafting commands:\ncraft 1 stick using 2 bamboo"
    )
