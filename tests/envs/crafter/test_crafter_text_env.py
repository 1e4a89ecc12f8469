"""The text environment: contract, actions with counts, tasks, determinism."""

from __future__ import annotations

import pytest

from lorekit.envs import check_env, make
from lorekit.envs.crafter import CrafterTextEnv


@pytest.fixture
def env() -> CrafterTextEnv:
    return CrafterTextEnv(length=60)


def test_check_env_passes(env: CrafterTextEnv) -> None:
    check_env(env, episodes=2, max_actions=20)


def test_registered() -> None:
    made = make("crafter", length=30)
    assert isinstance(made, CrafterTextEnv) and made.max_steps == 30


def test_observation_content(env: CrafterTextEnv) -> None:
    text = env.reset("collect_wood/seed-0").text
    for part in ("You face", "Vitals: health 9/9", "Inventory: nothing", "In view (9x7",
                 "Status: awake", "Achievements unlocked (0/22)", "Goal: Unlock"):  # fmt: skip
        assert part in text


def test_repeat_counts_ticks_and_stops_when_blocked(env: CrafterTextEnv) -> None:
    env.reset("collect_wood/seed-0")
    step = env.step("move_west 3")
    assert step.info["valid"] and step.info["ticks"] == 3 and step.info["repeats"] == 3
    # Walk north until something blocks: the repeat must stop early and say so.
    step = env.step("move_north 20")
    assert step.info["repeats"] < 20
    assert "blocked by" in step.observation


def test_invalid_actions_pass_time_and_are_reported(env: CrafterTextEnv) -> None:
    env.reset("collect_wood/seed-0")
    step = env.step("fly to the moon")
    assert not step.info["valid"] and "Unknown action" in step.observation
    assert step.info["ticks"] == 1
    step = env.step("move_west 99")
    assert not step.info["valid"] and "repeat count" in step.observation
    assert env.step("Move West").info["valid"]  # case and spaces are forgiven
    assert env.step("move_left").info["valid"]  # crafter's own names too


def test_achievement_task_succeeds_when_unlocked() -> None:
    env = CrafterTextEnv(length=200)
    env.reset("collect_wood/seed-0")
    # Seed 0: a tree stands 3 north and 1 west of the start after 3 steps west.
    actions = ["move_west 3", "move_north 2", "move_west", "move_north", "do", "do"]
    steps = [env.step(a) for a in actions]
    last = next(s for s in steps if s.done)
    assert last.info["success"] and last.reward == 1.0
    assert "collect_wood unlocked" in last.observation


def test_same_seed_same_episode() -> None:
    a, b = CrafterTextEnv(length=100), CrafterTextEnv(length=100)
    plan = ["move_east 4", "do", "move_south 2", "sleep", "do", "move_west 5"]
    ta = [a.reset("score/seed-3").text] + [a.step(x).observation for x in plan]
    tb = [b.reset("score/seed-3").text] + [b.step(x).observation for x in plan]
    assert ta == tb
    assert a.reset("score/seed-4").text != ta[0]


def test_tasks_and_groups(env: CrafterTextEnv) -> None:
    tasks = env.tasks("test")
    groups = {t.group for t in tasks}
    assert "score" in groups and "tier-0" in groups and "tier-6" in groups
    ids = {t.id for t in tasks}
    assert not ids & {t.id for t in env.tasks("dev")}
    assert len({t.data["achievement"] for t in tasks if t.group != "score"}) == 22


def test_expanded_text_actions() -> None:
    env = CrafterTextEnv(length=50, expanded=True)
    env.reset("score/seed-0")
    assert "collect_wood" in env.candidate_actions() and "do" not in env.candidate_actions()
    assert not env.step("do").info["valid"]
    assert env.step("collect_wood").info["valid"]
