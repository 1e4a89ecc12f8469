"""Oracle and random agents on TextCraft."""

import pytest

from lorekit.agents import NullRecorder, OracleAgent, RandomAgent
from lorekit.envs import make
from lorekit.llm import Roles, ScriptedLLM

ROLES = Roles(ScriptedLLM(default="unused"))


async def test_oracle_solves_every_test_task() -> None:
    env = make("textcraft")
    tasks = env.tasks("test")
    results = [
        await OracleAgent().run(env, t, ROLES, NullRecorder(), seed=i) for i, t in enumerate(tasks)
    ]
    assert len(results) == 200 and all(r.success for r in results)


async def test_random_agent_is_seeded_and_weak() -> None:
    env = make("textcraft")
    tasks = env.tasks("test")[:30]
    a = [await RandomAgent().run(env, t, ROLES, NullRecorder(), seed=1) for t in tasks]
    b = [await RandomAgent().run(env, t, ROLES, NullRecorder(), seed=1) for t in tasks]
    assert [x.actions for x in a] == [y.actions for y in b]
    rate = sum(x.success for x in a) / len(a)
    assert rate < 0.5  # a floor, not a solver
    assert all(x.steps for x in a)


def test_agents_registry_is_lazy_but_complete() -> None:
    import lorekit.agents as agents
    from lorekit.registry import REGISTRY

    assert all(isinstance(entry.target, str) for entry in REGISTRY.entries("agent"))
    assert agents.AdaptAgent.__name__ == "AdaptAgent"  # imported on access
    assert agents.agent_parameters("react")[:2] == ("role", "max_turns")
    assert isinstance(agents.make_agent("oracle"), agents.OracleAgent)
    with pytest.raises(AttributeError, match="NoSuchAgent"):
        _ = agents.NoSuchAgent


async def test_step_caps_follow_the_envs_unless_set() -> None:
    env = make("textcraft", max_steps=45)
    tasks = env.tasks("test")[:6]
    runs = [await RandomAgent().run(env, t, ROLES, NullRecorder(), seed=1) for t in tasks]
    failed = [r for r in runs if not r.success]
    assert failed and all(len(r.steps) == 45 for r in failed)  # the env's cap, not 40
    mine = await RandomAgent(max_steps=3).run(env, tasks[0], ROLES, NullRecorder(), seed=1)
    assert len(mine.steps) <= 3
    uncapped = make("textcraft", max_steps=None)
    traj = await OracleAgent().run(
        uncapped, uncapped.tasks("test")[0], ROLES, NullRecorder(), seed=0
    )
    assert traj.success
