"""Step caps at their boundary, for every text env with a ``max_steps`` option.

The expert needs N actions for a task. With ``max_steps=N`` the N-th action
wins: the episode is a success and is *not* truncated, and its last
observation is the one an uncapped env shows (no limit notice). With
``max_steps=N-1`` the episode is truncated one action short, as a failure.
"""

from __future__ import annotations

from typing import Any

import pytest

from lorekit.envs import make
from lorekit.envs.base import Step

# (env name, make options, task of the test split or None for the first one)
ENVS = [
    pytest.param("textcraft", {}, id="textcraft"),
    pytest.param("webshop", {}, id="webshop"),
    pytest.param("alfworld", {"split": "dev"}, id="alfworld"),
]


def _expert_run(name: str, options: dict[str, Any], cap: int | None) -> list[Step]:
    env = make(name, max_steps=cap, **options)
    split = options.get("split", "test")
    env.reset(env.tasks(split)[0])
    steps: list[Step] = []
    while not steps or not steps[-1].done:
        action = env.expert_action()
        assert action is not None, [s.observation for s in steps[-2:]]
        steps.append(env.step(action))
        assert len(steps) <= 200, "the expert never finished"
    return steps


@pytest.mark.parametrize(("name", "options"), ENVS)
def test_a_win_on_the_last_allowed_step_is_not_truncated(
    name: str, options: dict[str, Any]
) -> None:
    free = _expert_run(name, options, None)
    assert free[-1].info["success"] and len(free) >= 2
    n = len(free)
    capped = _expert_run(name, options, n)
    assert len(capped) == n
    last = capped[-1]
    assert last.done and last.info["success"] and last.reward == free[-1].reward
    assert last.info["truncated"] is False
    assert last.observation == free[-1].observation  # no limit notice on a win
    assert not any(s.info["truncated"] for s in capped)


@pytest.mark.parametrize(("name", "options"), ENVS)
def test_one_step_short_is_truncated_as_a_failure(name: str, options: dict[str, Any]) -> None:
    n = len(_expert_run(name, options, None))
    env = make(name, max_steps=n - 1, **options)
    env.reset(env.tasks(options.get("split", "test"))[0])
    steps = []
    for _ in range(n - 1):
        action = env.expert_action()
        assert action is not None
        steps.append(env.step(action))
    assert [s.done for s in steps] == [False] * (n - 2) + [True]
    last = steps[-1]
    assert last.info["truncated"] is True and not last.info["success"] and last.reward == 0.0
    assert f"{n - 1}" in last.observation
    assert not any(s.info["truncated"] for s in steps[:-1])
