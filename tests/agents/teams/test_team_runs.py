"""The team as one harness agent: specs, the episode's clock, what reaches the notes."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from _team_fakes import FakeClock, FakeResult, FakeWorld, build_org

from lorekit.agents.teams.results import team_summary
from lorekit.agents.teams.runs import TeamAgent, TeamParts, TeamSpec
from lorekit.envs import make
from lorekit.eval.store_schema import EpisodeRecord
from lorekit.llm.roles import Roles
from lorekit.llm.scripted import ScriptedLLM


def test_specs_name_the_org_as_the_org_builder_reads_it() -> None:
    tree = TeamSpec("tree", 3, "async", "virtual")
    assert (tree.agents, tree.label, tree.org_spec()) == (
        4, "tree-3/async/virtual", {"org": "tree", "leaves": 3})  # fmt: skip
    chain = TeamSpec("chain", 4, "relay", "wall")
    assert (chain.agents, chain.org_spec()) == (4, {"org": "chain", "size": 4})
    assert TeamSpec("solo", 1, "round", "virtual").org_spec() == {"org": "solo"}
    with pytest.raises(ValueError, match="--leaves: a tree needs at least 1 leaf"):
        TeamSpec("tree", 0, "async", "virtual")
    with pytest.raises(ValueError, match="--mode: unknown mode 'batch'"):
        TeamSpec("tree", 2, "batch", "virtual")


class _Recorder:
    def __init__(self) -> None:
        self.steps: list[tuple[Any, ...]] = []
        self.attached: Any = None

    def add_step(self, *args: Any) -> None:
        self.steps.append(args)

    def attach(self, trajectory: Any) -> None:
        self.attached = trajectory


def _task(party: Any, task_id: str) -> Any:
    return next(t for t in party.tasks("test") if t.id == task_id)


def test_the_team_spends_model_time_on_its_episode_clock() -> None:
    """The clock is built for each episode and reaches the team as an argument (no
    context variable): time spent on it stays in its episode."""
    seen: list[dict[str, Any]] = []

    async def run_team(world: FakeWorld, org: Any, roles: Any, **kw: Any) -> FakeResult:
        await kw["clock"].sleep(2.5)  # what a simulated model's latency does
        seen.append({"kw": kw, "now": kw["clock"].now(), "clock": kw["clock"]})
        world.success = world.done = True
        return FakeResult(True, [], [], {"tc": kw["clock"].now(), "mpt": 1.0})

    parts = TeamParts(build_org, lambda kind: FakeClock(), FakeWorld, run_team)
    party = make("crafter-party", players=3)
    agent = TeamAgent(TeamSpec("tree", 2, "round", "virtual", cutoff_s=60.0), parts)
    task = _task(party, "collect-20-wood/seed-0")

    def play() -> tuple[Any, _Recorder]:
        recorder = _Recorder()
        traj = asyncio.run(agent.run(party, task, Roles(ScriptedLLM(["x"])), recorder))
        return traj, recorder

    traj, recorder = play()
    assert seen[0]["now"] == 2.5 and seen[0]["kw"]["mode"] == "round"
    assert seen[0]["kw"]["cutoff_s"] == 60.0
    assert traj.success and traj.reward == 1.0 and traj.stop_reason == "done"
    assert recorder.attached is traj
    assert traj.notes["team"]["metrics"]["tc"] == 2.5
    assert "Goal:" in traj.initial_observation and "w2 (worker, p3)" in traj.initial_observation
    play()  # the next episode: a clock of its own, from zero
    assert seen[1]["clock"] is not seen[0]["clock"] and seen[1]["now"] == 2.5


def test_a_team_plays_only_the_party_env() -> None:
    agent = TeamAgent(TeamSpec("solo", 1, "async", "virtual"))
    textcraft = make("textcraft")
    with pytest.raises(TypeError, match="crafter-party"):
        asyncio.run(
            agent.run(textcraft, textcraft.tasks()[0], Roles(ScriptedLLM(["x"])), _Recorder())
        )


def _episode(metrics: dict[str, Any], ticks: int) -> EpisodeRecord:
    notes = {"team": {"metrics": metrics, "ticks": ticks}}
    return EpisodeRecord("r", "k", 0, "t", "g", 0, "success", True, 1.0, 0, 0.0, 0.0, 0.0, None,
                         {"notes": notes})  # fmt: skip


def test_summary_averages_tc_over_episodes_that_have_one() -> None:
    summary = team_summary([
        _episode({"tc": 40.0, "mpt": 2.0}, 200),
        _episode({"tc": 60.0, "mpt": 4.0}, 300),
        _episode({"tc": math.nan, "mpt": 6.0}, 900),
        _episode({"tc": None, "mpt": 4.0}, 600),  # NaN as JSON stores it
    ])  # fmt: skip
    assert summary["tc_mean"] == 50.0 and summary["tc_nan"] == 2
    assert summary["mpt_mean"] == 4.0 and summary["ticks_mean"] == 500.0
    assert math.isnan(team_summary([])["tc_mean"])
