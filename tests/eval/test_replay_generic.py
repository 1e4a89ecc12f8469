"""The method-free part of replaying a published run: replay models, agent wrapper, table."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from lorekit.agents.base import Episode, NullRecorder, Recorder, Trajectory
from lorekit.envs.asyncenv import AsyncEnv, EnvLike
from lorekit.envs.base import Task, TextEnv
from lorekit.envs.textcraft.env import TextCraftEnv
from lorekit.eval.replay import (
    Divergence,
    ReplayAgent,
    ReplayError,
    ReplaySession,
    compare,
    markdown,
    replay,
)
from lorekit.eval.store import RunStore
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles


class EchoCursor:
    """Answers with the episode's recorded actions; names a call past the end."""

    def __init__(self, key: str, actions: list[str]) -> None:
        self.key, self.actions, self.calls = key, list(actions), 0
        self.divergences: list[Divergence] = []

    def bind(self, env: AsyncEnv) -> None:
        self.env = env

    async def answer(self, role: str, messages: Sequence[Message]) -> str:
        self.calls += 1
        await asyncio.sleep(0.001 * (self.calls % 3))  # interleave the episodes
        if not self.actions:
            self.divergences.append(Divergence("call", self.calls, role, "nothing more", "a call"))
            return "inventory"
        return self.actions.pop(0)

    def finish(self, trajectory: Trajectory) -> dict[str, Any]:
        return {
            "record": self.key,
            "published": 1.0,
            "replayed": float(trajectory.success),
            "decided": not self.divergences,
            "divergences": [d.to_dict() for d in self.divergences],
        }


class AskThreeTimes:
    """An agent that asks its model for three actions and plays them."""

    name = "ask-three"
    model_roles = ("executor",)

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep = await Episode.start(env, task, recorder, seed)
        for _ in range(3):
            if ep.done:
                break
            answer = await roles["executor"].complete([Message("user", ep.observation)])
            await ep.act(answer.text)
        return ep.stop("gave_up")


class ToySource:
    title = "toy"
    path = Path("toy.json")
    roles = ("executor",)
    limits = ("none",)
    recorded: ClassVar[dict[str, list[str]]] = {
        "stick": ["get 2 bamboo", "craft 1 stick using 2 bamboo"],
        "oak_planks": ["get 1 oak log"],  # too short: the third call is off the record
    }

    def make_env(self) -> TextEnv:
        return TextCraftEnv()

    def make_agent(self) -> AskThreeTimes:
        return AskThreeTimes()

    def tasks(self) -> list[Task]:
        env = TextCraftEnv()
        return [next(t for t in env.tasks("all") if t.id == k) for k in self.recorded]

    def seed(self, task: Task) -> int:
        return 7

    def cursor(self, task: Task) -> EchoCursor:
        return EchoCursor(task.id, self.recorded[task.id])

    def describe(self) -> dict[str, Any]:
        return {"reader": "toy", "env": "textcraft"}


async def test_each_episode_is_answered_from_its_own_record_and_stored(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.sqlite3") as db:
        result = await replay(ToySource(), db, run_id="toy", concurrency=2)
        stored = {e.task_id: e for e in db.episodes("toy")}
        calls = db.llm_calls("toy")
    assert result.summaries["stick"]["decided"] is True and stored["stick"].success
    oak = result.summaries["oak_planks"]
    assert not oak["decided"] and [d["kind"] for d in oak["divergences"]] == ["call", "call"]
    assert {c["model"] for c in calls} == {"replay:executor"} and len(calls) == 5
    assert stored["oak_planks"].info["notes"]["replay"]["record"] == "oak_planks"
    assert {e.seed for e in stored.values()} == {7}  # the published run's seeds, not the index


def test_the_table_puts_the_published_figure_beside_the_replayed_one_per_group() -> None:
    rows = compare(
        [
            ("depth-2", {"published": 1.0, "replayed": 1.0, "decided": True, "divergences": []}),
            ("depth-2", {"published": 0.0, "replayed": 1.0, "decided": False,
                         "divergences": [{"kind": "reward"}, {"kind": "gap"}, {"kind": "gap"}]}),
            ("depth-3", {"published": 0.0, "replayed": 0.0, "decided": True, "divergences": []}),
        ]
    )  # fmt: skip
    cells = {r.group: r.cells() for r in rows}
    assert cells["depth-2"] == ["depth-2", "2", "50.0", "100.0", "1/2", "1/2", "gap 2, reward 1"]
    assert cells["all"][:6] == ["all", "3", "33.3", "66.7", "2/3", "2/3"]
    text = markdown("toy", rows, ["a limit"])
    assert "| depth-3 | 1 | 0.0 | 0.0 | 1/1 | 1/1 | none |" in text and text.endswith("- a limit\n")


async def test_an_agent_without_its_episodes_replay_models_refuses() -> None:
    session = ReplaySession(ToySource())
    agent = ReplayAgent(ToySource(), session)
    task = ToySource().tasks()[0]
    with pytest.raises(ReplayError, match="no replay models were built for episode 'stick'"):
        await agent.run(TextCraftEnv(), task, Roles({}), NullRecorder(), seed=7)
    answer = await session.roles(task, 7)["executor"].complete([Message("user", "hi")])
    assert answer.text == "get 2 bamboo" and session.take(task, 7) is not None
