"""The ends of Crafter episodes at their boundaries: the last tick, death on it,
death just before it, in the text env and the gym env (the party world's are in
tests/agents/teams/test_party_env.py).

A score episode succeeds only when the player is alive when the length limit
is reached; dying on that same tick is a death, not a survival.
"""

from __future__ import annotations

from lorekit.envs.crafter import CrafterTextEnv
from lorekit.envs.crafter.gym_env import CrafterGym

LENGTH = 4


def _score_env() -> CrafterTextEnv:
    env = CrafterTextEnv(length=LENGTH)
    env.reset("score/seed-0")
    return env


def test_score_episode_surviving_to_the_last_tick_succeeds() -> None:
    env = _score_env()
    steps = [env.step("noop") for _ in range(LENGTH)]
    assert [s.done for s in steps] == [False] * (LENGTH - 1) + [True]
    last = steps[-1]
    assert last.info["success"] and not last.info["dead"] and last.info["ticks"] == LENGTH
    assert f"The time limit of {LENGTH} steps is reached." in last.observation


def test_score_episode_dying_on_the_last_tick_fails() -> None:
    env = _score_env()
    for _ in range(LENGTH - 1):
        assert not env.step("noop").done
    env.core.players[0].health = 0  # the blow lands on the final tick
    last = env.step("noop")
    assert last.done and last.info["dead"] and last.info["ticks"] == LENGTH
    assert last.info["success"] is False
    # the end is final and keeps the verdict
    after = env.step("noop")
    assert after.done and after.info["success"] is False and not after.info["valid"]


def test_score_episode_dying_before_the_end_stops_there() -> None:
    env = _score_env()
    env.core.players[0].health = 0
    step = env.step("noop 3")
    assert step.done and step.info["dead"] and not step.info["success"]
    assert step.info["ticks"] == 1 and step.info["repeats"] == 1


def test_achievement_unlocked_on_the_last_tick_succeeds() -> None:
    env = CrafterTextEnv(length=LENGTH)
    env.reset("collect_wood/seed-0")
    for _ in range(LENGTH - 1):
        env.step("noop")
    env.core.players[0].achievements["collect_wood"] = 1
    last = env.step("noop")
    assert last.done and last.info["success"] and last.reward == 1.0


def test_achievement_missing_at_the_last_tick_fails() -> None:
    env = CrafterTextEnv(length=LENGTH)
    env.reset("collect_wood/seed-0")
    steps = [env.step("noop") for _ in range(LENGTH)]
    assert steps[-1].done and not steps[-1].info["success"] and steps[-1].reward == 0.0
    assert not any(s.done for s in steps[:-1])


def test_gym_death_on_the_last_tick_is_termination_not_truncation() -> None:
    env = CrafterGym("symbolic", length=LENGTH)
    env.reset(seed=0)
    for _ in range(LENGTH - 1):
        _, _, terminated, truncated, _ = env.step(0)
        assert not terminated and not truncated
    env.core.players[0].health = 0
    _, _, terminated, truncated, _ = env.step(0)
    assert terminated and not truncated
