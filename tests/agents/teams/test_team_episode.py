"""A team plays its task as an Episode of the harness's env (issue 37, item 4).

The real org, team world and clock, with ``run_team`` replaced by a script
that acts on the world the way a team would, so each rule is seen alone:
success is the env's verdict, each finished skill is a step recorded as it
ends, any in-process handle on the env will do, and no context variable
carries the models or the clock.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from _team_fakes import FakeResult

from lorekit.agents.teams.runs import TeamAgent, TeamSpec, default_parts
from lorekit.envs import make
from lorekit.envs.asyncenv import AsyncEnv
from lorekit.envs.base import Execution, TextEnv
from lorekit.llm import Roles, ScriptedLLM

ROOT = Path(__file__).resolve().parents[3]
WOOD = "collect-20-wood/seed-0"
Script = Callable[..., Awaitable[FakeResult]]


class Recorder:
    def __init__(self) -> None:
        self.steps: list[tuple[Any, ...]] = []
        self.live: Any = None

    def add_step(self, *args: Any) -> None:
        self.steps.append(args)

    def attach(self, trajectory: Any) -> None:
        self.live = trajectory


class DirectEnv(AsyncEnv):
    """A harness handle that is not a ``LocalEnv``: calls run on the env directly."""

    def __init__(self, env: TextEnv, execution: Execution = "inline") -> None:
        super().__init__(env.name, env.max_steps, execution)
        self.inner = env

    async def _run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> Any:
        return fn(self.inner, *args, **kwargs)

    def close(self) -> None:
        self.inner.close()


def skill(world: Any, agent: str, call: str, success: bool, reason: str) -> dict[str, Any]:
    return {"time": world.now(), "tick": world.tick, "agent": agent, "kind": "skill",
            "call": call, "success": success, "reason": reason, "ticks": 1}  # fmt: skip


def play(script: Script, env: Any = None, task_id: str = WOOD) -> tuple[Any, Recorder]:
    parts = dataclasses.replace(default_parts(), run_team=script)
    agent = TeamAgent(TeamSpec("tree", 1, "async", "virtual"), parts)
    party = make("crafter-party", players=2)
    task = next(t for t in party.tasks("test") if t.id == task_id)
    recorder = Recorder()
    roles = Roles(ScriptedLLM(default="x"))
    traj = asyncio.run(agent.run(env or party, task, roles, recorder))
    return traj, recorder


async def gather_wood(world: Any, org: Any, roles: Any, **kw: Any) -> FakeResult:
    """The leader's skill completes the task on a tick of the world; then it ends."""
    with kw["clock"].participate():
        world.party.core.players[0].achievements["collect_wood"] = 20
        await world.act("p1", "noop")  # the tick on which the party counts 20 wood
    event = skill(world, "leader", "collect(wood, 20)", True, "gained 20 wood")
    kw["on_event"](event)
    return FakeResult(True, [event], [], {"tc": world.now(), "reason": "success"})


def test_success_and_steps_come_from_the_env_through_the_episode() -> None:
    traj, recorder = play(gather_wood)
    assert traj.actions == ["p1 collect(wood, 20)"]  # a step of the trajectory itself
    (step,) = traj.steps
    assert step.observation == "gained 20 wood" and step.done and step.reward == 1.0
    assert step.info["success"] is True and step.info["skill_success"] is True
    assert step.info["progress"] == "20/20 wood"
    assert traj.success and traj.done and traj.reward == 1.0 and traj.stop_reason == "done"
    assert [s[1] for s in recorder.steps] == ["p1 collect(wood, 20)"]
    assert recorder.live is traj


async def claims_success(world: Any, org: Any, roles: Any, **kw: Any) -> FakeResult:
    """Its result says success; the world was never won."""
    kw["on_event"](skill(world, "worker1", "collect(wood, 2)", True, "gained 2 wood"))
    return FakeResult(True, [], [], {"tc": 1.0, "reason": "success"})


def test_a_team_that_claims_success_has_not_won_the_env() -> None:
    traj, _ = play(claims_success)
    assert not traj.success and not traj.done and traj.reward == 0.0
    assert traj.steps[0].info["skill_success"] is True and not traj.steps[0].info["success"]


async def breaks_after_a_skill(world: Any, org: Any, roles: Any, **kw: Any) -> FakeResult:
    kw["on_event"](skill(world, "worker1", "collect(wood, 2)", False, "no tree within reach"))
    raise RuntimeError("the team broke")


def test_steps_taken_before_an_error_are_already_recorded() -> None:
    recorder = Recorder()

    async def run() -> None:
        parts = dataclasses.replace(default_parts(), run_team=breaks_after_a_skill)
        agent = TeamAgent(TeamSpec("tree", 1, "async", "virtual"), parts)
        party = make("crafter-party", players=2)
        task = next(t for t in party.tasks("test") if t.id == WOOD)
        await agent.run(party, task, Roles(ScriptedLLM(default="x")), recorder)

    with pytest.raises(RuntimeError, match="the team broke"):
        asyncio.run(run())
    assert [(s[0], s[1]) for s in recorder.steps] == [
        ("no tree within reach", "p2 collect(wood, 2)")
    ]
    assert recorder.live.notes["team"]["org"]["org"] == "tree"  # what was known is kept


async def everyone_dies(world: Any, org: Any, roles: Any, **kw: Any) -> FakeResult:
    """The party dies while its agents think: no skill is running when it ends."""
    with kw["clock"].participate():
        for player in world.party.core.players:
            player.health = 0
        await world.act("p1", "noop")
    return FakeResult(False, [], [], {"tc": None, "reason": "ended"})


def test_an_end_the_world_reaches_between_skills_is_recorded() -> None:
    traj, recorder = play(everyone_dies)
    assert traj.done and not traj.success and traj.stop_reason == "done"
    assert traj.actions == ["world: episode over"] and len(recorder.steps) == 1


def test_any_in_process_handle_on_the_env_will_do() -> None:
    party = make("crafter-party", players=2)
    traj, _ = play(gather_wood, DirectEnv(party))
    assert traj.success and traj.actions == ["p1 collect(wood, 20)"]
    with pytest.raises(TypeError, match="crafter-party env tick by tick in this process"):
        play(gather_wood, DirectEnv(make("crafter-party", players=2), "process"))


def test_no_context_variable_carries_a_teams_models_or_clock() -> None:
    """Models and clock reach a team as arguments: the package keeps no ContextVar."""
    package = ROOT / "lorekit" / "agents" / "teams"
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted(package.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bcontextvars\b|\bContextVar\b", line)
    ]
    assert not found, found
