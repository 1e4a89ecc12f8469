"""The core's episode rules (lorekit/envs/episodes.py): one step cap, truncation and
after-the-end behaviour for every env registered with a ``max_steps`` default."""

from __future__ import annotations

import pytest

from lorekit.envs import check_env, make
from lorekit.envs.base import Observation, Step, Task, TextEnv
from lorekit.envs.episodes import EpisodeRules
from lorekit.envs.registry import env_parameters
from lorekit.registry import Registry


class Counter(TextEnv):
    """Say numbers up to a target; the env itself knows nothing of caps or endings."""

    name = "counter"
    execution = "inline"

    def __init__(self, target: int = 3) -> None:
        self.target = target
        self.said = 0

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        self.said = 0
        return Observation(f"Count to {self.target}.")

    def step(self, action: str) -> Step:
        if action.strip() != f"say {self.said + 1}":
            return Step(f"Say {self.said + 1} next.", 0.0, False, {"valid": False})
        self.said += 1
        won = self.said == self.target
        return Step(
            f"You said {self.said}.", 1.0 if won else 0.0, won, {"valid": True, "success": won}
        )

    def tasks(self, split: str = "test") -> list[Task]:
        return [Task("count", f"count to {self.target}", "all")]

    def splits(self) -> tuple[str, ...]:
        return ("test",)

    def action_forms(self) -> list[str]:
        return ["say <number>"]

    def manual(self) -> str:
        return "Say the numbers in order."

    def expert_action(self) -> str | None:
        return f"say {self.said + 1}"

    def candidate_actions(self) -> list[str]:
        return [f"say {n}" for n in range(1, self.target + 2)]


@pytest.fixture
def counter(registry: Registry) -> Registry:
    registry.add_env("counter", f"{__name__}:Counter", "count", max_steps=5, expert=True)
    return registry


def play(env: TextEnv, actions: list[str]) -> list[Step]:
    env.reset()
    return [env.step(a) for a in actions]


def test_make_wraps_a_ruled_env_and_max_steps_is_an_option(counter: Registry) -> None:
    env = make("counter", target=2)
    assert isinstance(env, EpisodeRules) and env.max_steps == 5 and env.name == "counter"
    assert "max_steps" in env_parameters("counter") and "target" in env_parameters("counter")
    assert make("counter", max_steps=None).step_limit is None
    assert (
        "after 5 actions" in env.manual()
        and "after" not in make("counter", max_steps=None).manual()
    )
    with pytest.raises(ValueError, match="max_steps must be a whole number"):
        make("counter", max_steps=0)
    check_env(make("counter", target=4))


def test_a_win_on_the_last_step_wins_and_one_short_is_truncated(counter: Registry) -> None:
    won = play(make("counter", target=3, max_steps=3), ["say 1", "say 2", "say 3"])
    assert won[-1].done and won[-1].info["success"] and not won[-1].info["truncated"]
    assert "Step limit" not in won[-1].observation
    short = play(make("counter", target=3, max_steps=2), ["say 1", "say 2"])
    assert [s.done for s in short] == [False, True]
    assert short[-1].info["truncated"] and not short[-1].info["success"]
    assert "Step limit of 2 reached" in short[-1].observation


def test_steps_outside_an_episode_never_reach_the_env(counter: Registry) -> None:
    env = make("counter", target=1)
    before = env.step("say 1")
    assert before.done and not before.info["valid"] and "reset() first" in before.observation
    env.reset()
    assert env.step("say 1").info["success"]
    inner = env.env
    assert isinstance(inner, Counter)
    after = env.step("say 2")
    assert after.done and not after.info["valid"] and after.info["success"]  # the result stays
    assert inner.said == 1  # the env was not asked
    assert env.expert_action() is None and env.candidate_actions() == []


def test_an_env_registered_without_a_cap_is_left_alone(registry: Registry) -> None:
    registry.add_env("counter-raw", f"{__name__}:Counter", "count")
    env = make("counter-raw")
    assert isinstance(env, Counter)
    with pytest.raises(TypeError, match="max_steps"):
        make("counter-raw", max_steps=3)


@pytest.mark.parametrize(
    ("name", "options"),
    [("textcraft", {}), ("webshop", {}), ("alfworld", {"split": "dev"})],
)
def test_the_built_in_envs_follow_the_same_rules(name: str, options: dict[str, object]) -> None:
    """One implementation of the cap and the ends: the built-in envs keep a
    StepRules and say what the wrapper says, word for word."""
    from lorekit.envs.episodes import StepRules, texts

    if name == "alfworld":
        pytest.importorskip("alfworld")
    env = make(name, max_steps=1, **options)
    assert isinstance(getattr(env, "stepping", None), StepRules)
    before = env.step("look")
    assert before.observation == texts()["not_started"] and before.done
    env.reset(env.tasks(str(options.get("split", "test")))[0])
    last = env.step("look")
    assert last.done and last.info["truncated"] and last.info["steps"] == 1
    assert last.observation.endswith(texts()["step_limit"].format(limit=1))
    after = env.step("look")
    assert after.observation == texts()["finished"] and not after.info["valid"]
    assert env.expert_action() is None
