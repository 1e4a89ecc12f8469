"""GraphAgent, the one loop under SPRING and AgentKit: a pass a step, the method's
hooks in order, fallbacks recorded, per-episode memory, the budget."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lorekit.agents.base import Episode, NullRecorder
from lorekit.agents.graph_agent import GraphAgent, GraphRun, NoAction
from lorekit.agents.graph_pass import load_checked
from lorekit.envs import make
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.llm import Message, Roles, ScriptedLLM

SPEC = """\
name: tiny
max_retries: 0
database:
  observation: null
  last_action: null
nodes:
  act:
    prompt: |
      You see: {observation}
      You last did: {last_action}
      Name your next command.
"""


class Tiny(GraphAgent[list[str]]):
    """Plays what node ``act`` answers when it starts with a known verb, else
    ``inventory`` (or gives up, with ``give_up``); its memory is a step diary."""

    name = "tiny"
    note_key = "tiny"
    fallback_action = "inventory"

    def __init__(self, spec: Path, *, give_up: bool = False, **options: Any) -> None:
        super().__init__(
            load_checked(spec, "act", ("observation", "last_action")), note_steps=5, **options
        )
        self.give_up = give_up
        self.calls: list[str] = []

    def head(self) -> dict[str, Any]:
        return {"agent": "tiny"}

    async def begin(
        self, ep: Episode, task: Task, log: dict[str, Any], budget: int
    ) -> tuple[dict[str, Any], list[str]]:
        self.calls.append(f"begin {budget}")
        return {"observation": ep.observation[:40], "last_action": "nothing yet"}, []

    async def before_pass(self, run: GraphRun[list[str]]) -> None:
        self.calls.append(f"before {run.number}")

    def choose(self, run: GraphRun[list[str]], results: Mapping[str, Any]) -> str:
        answer = str(results.get("act", "")).strip()
        if not answer.startswith(("get ", "craft ", "inventory")):
            raise NoAction(f"act: {answer!r} is no command")
        return answer

    def fallback(self, run: GraphRun[list[str]]) -> str | None:
        return None if self.give_up else super().fallback(run)

    def after_pass(self, run: GraphRun[list[str]], results: Mapping[str, Any], action: str) -> None:
        run.memory.append(f"{run.number}: {action}")
        self.calls.append(f"after {run.number} {action}")


def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return path


def task() -> tuple[EnvLike, Task]:
    env = make("textcraft")
    return env, env.tasks("dev")[0]


async def test_one_pass_a_step_with_the_hooks_in_order(tmp_path: Path) -> None:
    llm = ScriptedLLM(["get 1 acacia logs", "I think I should look around", "inventory"])
    agent = Tiny(spec_file(tmp_path), max_steps=3)
    env, t = task()
    traj = await agent.run(env, t, Roles(llm), NullRecorder(), seed=0)
    assert traj.actions == ["get 1 acacia logs", "inventory", "inventory"]
    assert traj.stop_reason == "budget"
    assert agent.calls == [
        "begin 3",
        *("before 1", "after 1 get 1 acacia logs"),
        *("before 2", "after 2 inventory"),  # the fallback is played and booked like a choice
        *("before 3", "after 3 inventory"),
    ]
    log = traj.notes["tiny"]
    assert log["agent"] == "tiny" and log["graph"] == "tiny" and log["fallbacks"] == 1
    steps = log["steps"]
    assert [s["fallback"] for s in steps] == [False, True, False]
    assert steps[1]["reason"] == "act: 'I think I should look around' is no command"
    assert "prompt_tokens" in steps[0]  # GraphAgent.tokens defaults to True
    # after each step the database holds what was played (the default after_act)
    second = llm.calls[1].messages[-1].content
    assert "You last did: get 1 acacia logs" in second


async def test_no_fallback_gives_up(tmp_path: Path) -> None:
    agent = Tiny(spec_file(tmp_path), max_steps=5, give_up=True)
    env, t = task()
    llm = ScriptedLLM(["hmm"])
    traj = await agent.run(env, t, Roles(llm), NullRecorder(), seed=0)
    assert traj.actions == [] and traj.stop_reason == "gave_up"
    step = traj.notes["tiny"]["steps"][0]
    assert step["action"] is None and step["fallback"] is True
    assert agent.calls == ["begin 5", "before 1"]  # nothing to book without an action


async def test_memory_belongs_to_the_episode(tmp_path: Path) -> None:
    """One agent object plays two episodes at once; neither sees the other's memory."""
    seen: dict[str, list[str]] = {}

    class Keep(Tiny):
        def after_act(self, run: GraphRun[list[str]], action: str, previous: str) -> None:
            super().after_act(run, action, previous)
            seen[run.ep.trajectory.task.id] = run.memory

    keep = Keep(spec_file(tmp_path), max_steps=2)
    env_a, env_b = make("textcraft"), make("textcraft")
    tasks = env_a.tasks("dev")[:2]

    def model(messages: tuple[Message, ...]) -> str:
        return "inventory"

    await asyncio.gather(
        keep.run(env_a, tasks[0], Roles(ScriptedLLM(fn=model)), NullRecorder(), seed=0),
        keep.run(env_b, tasks[1], Roles(ScriptedLLM(fn=model)), NullRecorder(), seed=0),
    )
    assert seen[tasks[0].id] == ["1: inventory", "2: inventory"]
    assert seen[tasks[1].id] == ["1: inventory", "2: inventory"]
    assert seen[tasks[0].id] is not seen[tasks[1].id]
    assert keep.model_roles == ("default",)


async def test_an_asleep_crafter_step_is_played_without_a_pass(tmp_path: Path) -> None:
    class Sleepy(Tiny):
        asleep_action = "noop"

    agent = Sleepy(spec_file(tmp_path), max_steps=1, skip_asleep=True)

    base = type(make("textcraft"))

    class Asleep(base):  # type: ignore[valid-type,misc]
        """TextCraft whose first observation is crafter's sleeping status line."""

        def reset(self, task: Task | None = None, seed: int | None = None) -> Any:
            out = super().reset(task, seed=seed)
            return type(out)("Status: asleep (energy 3/9)\n" + out.text, out.info)

    env = Asleep()
    llm = ScriptedLLM([])
    traj = await agent.run(env, env.tasks("dev")[0], Roles(llm), NullRecorder(), seed=0)
    assert traj.actions == ["noop"] and llm.calls == []
    assert traj.notes["tiny"]["steps"] == [{"step": 1, "action": "noop", "asleep": True}]
