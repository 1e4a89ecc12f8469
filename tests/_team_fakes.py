"""Stand-ins for the team pieces other modules provide (org, clock, team world,
``run_team``), shaped like the agreed contracts, so the team command and its
recording can be tested on their own. Test code only: never a real team.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lorekit.agents.teams.runs import TeamParts
from lorekit.envs.base import Step


@dataclass(frozen=True)
class FakeAgent:
    name: str
    role: str
    player: str
    parent: str | None = None


@dataclass
class FakeOrg:
    kind: str
    agents: list[FakeAgent]


def build_org(spec: dict[str, Any]) -> FakeOrg:
    """Specs as ``org_from_spec`` reads them: ``{org: tree, leaves: N}``,
    ``{org: chain, size: N}``, ``{org: solo}``, or a custom agents list."""
    kind = spec["org"]
    if "agents" in spec:
        members = [
            FakeAgent(a["name"], a.get("role", "worker"), a["player"]) for a in spec["agents"]
        ]
        return FakeOrg(kind, members)
    if kind == "tree":
        leaves = [
            FakeAgent(f"w{i}", "worker", f"p{i + 1}", "leader")
            for i in range(1, spec["leaves"] + 1)
        ]
        return FakeOrg(kind, [FakeAgent("leader", "leader", "p1"), *leaves])
    n = 1 if kind == "solo" else spec["size"]
    return FakeOrg(kind, [FakeAgent(f"a{i}", "worker", f"p{i}") for i in range(1, n + 1)])


class FakeClock:
    kind = "virtual"

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += seconds


class FakeWorld:
    """Over the real party env (reset by the team's episode); the fake team decides
    success, and ``report`` states it as the real world states the party's."""

    def __init__(self, party: Any, clock: FakeClock, seconds_per_tick: float | None) -> None:
        self.party = party
        self.clock = clock
        self.players = list(party.names)
        self.success = False
        self.done = False
        self.tick = 0
        self.task_id = ""
        self._reported = 0.0

    def begin(self) -> None:
        self.task_id = self.party.task.id

    def progress(self) -> str:
        return "50/50 wood" if self.success else "3/20 stone"

    def report(self, observation: str, info: dict[str, Any]) -> Step:
        reward = (1.0 if self.success else 0.0) - self._reported
        self._reported += reward
        return Step(observation, reward, self.done, {**info, "success": self.success})


@dataclass
class FakeResult:
    success: bool
    events: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    metrics: dict[str, Any]
    traces: dict[str, Any] = field(default_factory=dict)


@dataclass
class FakeTeam:
    """``run_team`` stand-in: asks the leader and one worker's models, emits a
    realistic event list and message pool; stone tasks fail, the rest succeed.
    ``played`` lists the task ids it played (to check resuming)."""

    played: list[str] = field(default_factory=list)
    fail_on: str | None = None
    kwargs: list[dict[str, Any]] = field(default_factory=list)

    async def run_team(
        self,
        world: FakeWorld,
        org: FakeOrg,
        roles: Any,
        *,
        mode: str,
        clock: FakeClock,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        **kw: Any,
    ) -> FakeResult:
        self.played.append(world.task_id)
        self.kwargs.append({"mode": mode, **kw})
        if self.fail_on is not None and self.fail_on in world.task_id:
            raise RuntimeError(f"the team broke on {world.task_id}")
        await roles["leader"].complete("plan the team's work")
        await roles["worker"].complete("collect wood")
        ok = "stone" not in world.task_id
        world.success = world.done = ok
        world.tick = 240
        events: list[dict[str, Any]] = [
            {"time": 0.0, "tick": 0, "agent": "leader", "kind": "call", "role": "leader",
             "prompt_tokens": 300, "completion_tokens": 80, "latency_s": 4.0},
            {"time": 4.0, "tick": 20, "agent": "leader", "kind": "plan",
             "task": "gather wood", "plan": ["wood", "table"], "actions": ["tell w1 to collect"]},
            {"time": 4.0, "tick": 20, "agent": "leader", "kind": "message", "to": "w1",
             "text": "collect 10 wood"},
            {"time": 5.0, "tick": 25, "agent": "w2", "kind": "refused", "command": "go north",
             "sender": "w1", "reason": "only leader may command w2"},
            {"time": 6.5, "tick": 32, "agent": "w1", "kind": "call", "role": "worker",
             "prompt_tokens": 120, "completion_tokens": 30, "latency_s": 1.5},
            {"time": 6.5, "tick": 32, "agent": "w1", "kind": "skill",
             "call": "collect(wood, 10)"},
            {"time": 6.7, "tick": 33, "agent": "w1", "kind": "action", "action": "do"},
            {"time": 30.0, "tick": 150, "agent": "w1", "kind": "skill",
             "call": "collect(wood, 10)", "success": ok, "reason": "no tree within reach",
             "ticks": 118},
            {"time": 31.0, "tick": 155, "agent": "w1", "kind": "report", "to": "leader",
             "status": "failed", "task": "collect 10 wood",
             "text": "REPORT failed: collect 10 wood (no tree within reach, 2 wood)"},
            {"time": 33.0, "tick": 165, "agent": "leader", "kind": "monitor",
             "status": "ongoing", "rationale": "w1 found no trees"},
        ]  # fmt: skip
        for event in events:  # as the real team emits them, while it plays
            if on_event is not None:
                on_event(event)
        pool = [
            {"time": 4.0, "tick": 20, "sender": "leader", "to": "w1", "text": "collect 10 wood"},
            {"time": 2.0, "tick": 10, "sender": "w2", "to": None, "text": "I see a cow"},
            {
                "time": 5.0,
                "tick": 25,
                "sender": "w2",
                "to": "w1",
                "text": "REFUSED: only leader may command w2",
            },
            {
                "time": 31.0,
                "tick": 155,
                "sender": "w1",
                "to": "leader",
                "text": "REPORT failed: collect 10 wood (no tree within reach, 2 wood)",
            },
        ]
        metrics = {  # as TeamMetrics.to_dict writes them: a NaN TC is null
            "tc": 48.0 if ok else None,
            "mpt": 2.5,
            "iterations": {"leader": 3, "w1": 2, "w2": 1},
            "ticks": 240,
            "reason": "success" if ok else "cutoff",
        }
        return FakeResult(ok, events, pool, metrics, {"w1": {"iterations": 2}})


def fake_parts(team: FakeTeam) -> TeamParts:
    return TeamParts(build_org, lambda kind: FakeClock(), FakeWorld, team.run_team)
