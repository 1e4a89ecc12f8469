"""ALFWorld's worked examples are real: each executor example replays word for word
on its dev-split game, in the env's default text and, rewritten by the bridge, in
the other text options; every planner step is one the bridge can check."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lorekit.agents.adapt import parse_plan
from lorekit.agents.adapt.alfworld_checks import parse_condition
from lorekit.agents.adapt.bridge_alfworld import AlfworldBridge, adapt_examples
from lorekit.agents.examples import EnvExamples, examples_for
from lorekit.envs import make
from lorekit.envs.alfworld import AlfWorldEnv

ALFWORLD = examples_for("alfworld")
BRIDGE = AlfworldBridge()

# Which dev game each executor example plays, and what earlier sub-tasks did first.
REPLAYS: dict[str, tuple[str, list[str]]] = {
    "heat some cup and put it in shelf": (
        "pick_heat_then_place_in_recep-Cup-None-Shelf-7/trial_dev_1012_00051",
        [],
    ),
    "examine the mug with the desklamp": (
        "look_at_obj_in_light-Mug-None-None-323/trial_dev_1012_00061",
        [],
    ),
    "find and take a pencil from the drawers": (
        "look_at_obj_in_light-BaseballBat-None-None-305/trial_dev_1012_00055",
        [],
    ),
    "put the clean cloth in/on the drawer": (
        "pick_clean_then_place_in_recep-Cloth-None-Drawer-409/trial_dev_1012_00020",
        [
            "go to countertop 1",
            "take cloth 1 from countertop 1",
            "go to sinkbasin 1",
            "clean cloth 1 with sinkbasin 1",
        ],
    ),
    "clean the soapbar with the sinkbasin": (
        "pick_clean_then_place_in_recep-SoapBar-None-Toilet-403/trial_dev_1012_00068",
        ["go to countertop 1", "take soapbar 1 from countertop 1"],
    ),
    "cool the tomato with the fridge": (
        "pick_cool_then_place_in_recep-Tomato-None-CounterTop-23/trial_dev_1012_00028",
        ["go to sinkbasin 1", "take tomato 1 from sinkbasin 1"],
    ),
    "find and use a desklamp": (
        "look_at_obj_in_light-BaseballBat-None-None-305/trial_dev_1012_00055",
        ["go to bed 1", "take baseballbat 1 from bed 1"],
    ),
}
# The rooms of the worked plans, by task.
PLAN_ROOMS = {
    "put a clean cloth in toilet": "pick_clean_then_place_in_recep-Cloth-None-Toilet-403/"
    "trial_dev_1012_00014",
    "find and take a cloth": "pick_clean_then_place_in_recep-Cloth-None-Toilet-403/"
    "trial_dev_1012_00014",
    "look at pen under the desklamp": "look_at_obj_in_light-BaseballBat-None-None-315/"
    "trial_dev_1012_00037",
    "find and use a desklamp": "look_at_obj_in_light-BaseballBat-None-None-315/"
    "trial_dev_1012_00037",
    "put two soapbottle in toilet": "pick_two_obj_and_place-SoapBottle-None-Toilet-405/"
    "trial_dev_1012_00023",
}
OPTIONS = [
    {},
    {"syntax": "put"},
    {"syntax": "put", "strip_arrival": True, "object_ids": True, "banner": False},
]


@pytest.fixture(scope="module")
def envs() -> Iterator[dict[str, AlfWorldEnv]]:
    made: dict[str, AlfWorldEnv] = {}
    for options in OPTIONS:
        env = make("alfworld", split="dev", **options)
        assert isinstance(env, AlfWorldEnv)
        made[repr(options)] = env
    yield made
    for env in made.values():
        env.close()


def dev_task(env: AlfWorldEnv, task_id: str) -> Any:
    return next(t for t in env.tasks("dev") if t.id == task_id)


@pytest.mark.parametrize("options", OPTIONS, ids=["move", "put", "put-ids-stripped"])
def test_executor_examples_replay_word_for_word(
    envs: dict[str, AlfWorldEnv], options: dict[str, Any]
) -> None:
    env = envs[repr(options)]
    shown = BRIDGE.adapt_examples(env, ALFWORLD)
    assert set(REPLAYS) == {d.task for d in ALFWORLD.executor}, "every example needs a replay"
    test_ids = {t.id for t in env.tasks("test")}
    verdicts = set()
    for original, demo in zip(ALFWORLD.executor, shown.executor, strict=True):
        game, before = REPLAYS[original.task]
        assert game not in test_ids
        opening = env.reset(dev_task(env, game)).text
        assert BRIDGE.describe_setting(opening, "") == demo.setting, original.task
        for action in before:
            assert env.step(action).info["valid"], action
        assert BRIDGE.describe_state(env) == demo.state, original.task
        for turn in demo.turns[:-1]:
            assert env.step(turn.action).observation == turn.observation, turn.action
        last = demo.turns[-1]
        assert last.observation is None and last.action in ("completed", "failed")
        assert BRIDGE.check_subtask(env, demo.task) is (last.action == "completed"), demo.task
        verdicts.add(last.action)
    assert verdicts == {"completed", "failed"}  # the examples show both ways to end


def test_examples_follow_the_env_syntax() -> None:
    put = adapt_examples(ALFWORLD, syntax="put")
    actions = [t.action for d in put.executor for t in d.turns]
    replies = [t.observation or "" for d in put.executor for t in d.turns]
    assert "put cup 1 in/on shelf 1" in actions and not any(a.startswith("move ") for a in actions)
    assert "You put the cup 1 in/on the shelf 1." in replies
    ids = adapt_examples(ALFWORLD, strip=True, object_ids=True)
    first = ids.executor[0]
    assert "cabinet_4" in first.setting and first.turns[0].action == "go to countertop_1"
    assert first.turns[0].observation is not None
    assert not first.turns[0].observation.startswith("You arrive")
    assert adapt_examples(ALFWORLD) is ALFWORLD  # the default text needs no rewrite
    assert adapt_examples(EnvExamples(), syntax="put") == EnvExamples()


def test_worked_plans_are_steps_the_bridge_can_check(envs: dict[str, AlfWorldEnv]) -> None:
    env = envs[repr({})]
    assert set(ALFWORLD.planner) == {"adapt", "detailed"}
    ors = 0
    for style, plans in ALFWORLD.planner.items():
        assert len(plans) >= 2 and ALFWORLD.planner_rules[style]
        for demo in plans:
            plan = parse_plan(demo.plan)
            opening = env.reset(dev_task(env, PLAN_ROOMS[demo.task])).text
            assert BRIDGE.describe_setting(opening, "") == demo.setting
            world = env.world()
            for step in (demo.task, *plan.steps):
                assert parse_condition(step, world) is not None, step
            ors += " OR " in plan.to_dict()["order"]
    assert ors >= 3  # finding is planned as alternatives
    first_two = [parse_plan(d.plan).to_dict()["order"] for d in ALFWORLD.planner["adapt"][:2]]
    assert " AND " in first_two[0] and " OR " in first_two[1]  # both shown at shots=2


def test_rules_cover_what_trips_models_up() -> None:
    rules = ALFWORLD.rules.lower()
    for point in ("with their numbers", "closed", "one object at a time", "nothing happens"):
        assert point in rules, point
    assert "move " not in rules  # the place command comes from the env's action list
