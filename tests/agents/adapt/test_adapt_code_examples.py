"""The code profile's TextCraft worked examples are real: each plays in compat mode as written."""

from __future__ import annotations

import pytest

from lorekit.agents.adapt.code_executor import code_prompts
from lorekit.agents.adapt.code_plan import read_plan, unwrap
from lorekit.envs.textcraft.env import TextCraftEnv

GOALS = {"craft crimson sign.": "crimson_sign", "fetch 4 birch planks.": "birch_fence_gate"}


def turns(example: str) -> tuple[str, list[tuple[str, str]]]:
    lines = example.strip("\n").split("\n")
    goal = next(line[len("Goal: ") :] for line in lines if line.startswith("Goal: "))
    start = next(i for i, line in enumerate(lines) if line.startswith("> "))
    body = lines[start:]
    return goal, [(body[i][2:], body[i + 1]) for i in range(0, len(body), 2)]


@pytest.mark.parametrize("index", [0, 1])
def test_each_executor_example_replays_with_every_reply_as_written(index: int) -> None:
    goal, played = turns(code_prompts("textcraft")["examples"][index])
    env = TextCraftEnv("datapack", compat=True, max_steps=None, after_goal="continue")
    env.reset(next(t for t in env.tasks("all") if t.id == GOALS[goal]))
    for action, reply in played:
        if action.startswith("think"):
            assert reply == "OK."
            continue
        assert env.step(action).observation == reply, action
    assert "task completed" in played[-1][0].lower()


def test_each_worked_plan_reads_as_an_and_of_its_steps() -> None:
    for example in code_prompts("textcraft")["plan_examples"]:
        plan = unwrap(read_plan(example))
        assert plan.operator == "AND" and len(plan.steps) >= 3
        assert all(isinstance(s, str) and s.split()[0] in ("fetch", "craft") for s in plan.steps)
