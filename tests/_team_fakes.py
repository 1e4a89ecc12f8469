"""Stand-ins for the team's pieces, one set for every team test (test code only).

Two levels, sharing one :class:`FakeClock`:

- what an hourglass agent needs (:class:`PoolWorld`: a message pool and ticks;
  :class:`FakeSkills`; :func:`validate`; :class:`TwoStage` for scripting one
  answer per planning pass), so the agent is tested without crafter;
- what a team run needs of its org, world and ``run_team`` (:func:`build_org`,
  :class:`FakeWorld` over the real party env, :class:`FakeTeam`,
  :func:`fake_parts`), shaped like the contracts of
  :class:`lorekit.agents.teams.runs.TeamParts`, so the team command and its
  recording are tested on their own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lorekit.agents.teams.models import give_clock
from lorekit.agents.teams.runs import TeamParts
from lorekit.envs.base import Step
from lorekit.llm.base import Completion


class FakeClock:
    """A clock whose time moves only when someone sleeps on it."""

    kind = "virtual"

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += seconds


# -- what an hourglass agent sees ------------------------------------------------


@dataclass(frozen=True)
class Msg:
    time: float
    tick: int
    sender: str
    to: str | None
    text: str


@dataclass(frozen=True)
class Result:
    success: bool
    reason: str
    ticks: int = 1


@dataclass
class PoolWorld:
    """What an hourglass agent needs of a team world: a message pool and ticks, on
    a :class:`FakeClock`; observations name the player and the tick."""

    clock: FakeClock = field(default_factory=FakeClock)
    tick: int = 0
    done: bool = False
    pool: list[Msg] = field(default_factory=list)

    def now(self) -> float:
        return self.clock.now()

    async def sleep(self, seconds: float) -> None:
        await self.clock.sleep(seconds)

    def observe(self, player: str) -> str:
        return f"player {player} at tick {self.tick}\nInventory: sapling 1."

    def progress(self) -> str:
        return f"{self.tick}/10 wood"

    def post(self, sender: str, to: str | None, text: str) -> Msg:
        msg = Msg(self.now(), self.tick, sender, to, text)
        self.pool.append(msg)
        return msg

    def messages(self, since: int = 0) -> list[Msg]:
        return self.pool[since:]


@dataclass
class FakeSkills:
    """Skill runner: answers from ``outcomes`` (call -> Result), success otherwise."""

    world: PoolWorld
    outcomes: dict[str, Result] = field(default_factory=dict)
    ran: list[tuple[str, str]] = field(default_factory=list)
    on_run: Callable[[str, str], None] | None = None

    async def __call__(self, player: str, call: str) -> Result:
        self.ran.append((player, call))
        out = self.outcomes.get(call, Result(True, "done"))
        self.world.tick += out.ticks
        if self.on_run is not None:
            self.on_run(player, call)
        return out


def validate(call: str) -> None:
    """Accepts ``name(args)`` shapes, like the skills' parser would."""
    if "(" not in call or not call.endswith(")"):
        raise ValueError(f"{call!r} is not a skill call such as collect(wood, 5)")


class TwoStage:
    """Lets a test script one answer per planning pass, as before the planners were
    split: the scripted task-planner answer also lists ``actions``, and the action
    planner's call that follows gets those actions back (it is not passed to the
    scripted model, so its ``calls`` count task plans and monitor verdicts only)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.actions: list[Any] = []
        self.action_prompts: list[str] = []

    @property
    def model(self) -> str:
        return str(self.inner.model)

    @property
    def calls(self) -> Any:
        return self.inner.calls

    async def complete(self, messages: Any, **kw: Any) -> Any:
        user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        if '{"actions"' in user:
            self.action_prompts.append(user)
            return Completion(json.dumps({"actions": self.actions}), model=self.model)
        out = await self.inner.complete(messages, **kw)
        try:
            data = json.loads(out.text)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and "task" in data:
            self.actions = data.get("actions", [])
        return out


# -- what a team run is made of --------------------------------------------------


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
        # as run_team does: simulated latency passes on the team's clock, not in real time
        give_clock({roles["leader"], roles["worker"]}, clock)
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
