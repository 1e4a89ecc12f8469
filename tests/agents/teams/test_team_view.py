"""How a team episode's notes are printed: agents, then one timeline in clock order."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from _team_fakes import FakeClock, FakeTeam, FakeWorld, build_org
from rich.console import Console

from lorekit.agents.teams import view as team_view
from lorekit.agents.teams.results import record_result
from lorekit.agents.teams.view import agent_rows, describe, render_teams, timeline
from lorekit.envs import make


def _team_notes(task: str = "collect-50-wood/seed-0") -> dict[str, Any]:
    """Notes as a team run records them, from the stand-in team's result."""
    party = make("crafter-party", players=3)
    party.reset(next(t for t in party.tasks("test") if t.id == task))
    world = FakeWorld(party, FakeClock(), None)
    world.begin()
    org = build_org({"org": "tree", "leaves": 2})

    class Roles(dict[str, Any]):
        def __getitem__(self, role: str) -> Any:
            class Model:
                async def complete(self, prompt: str) -> str:
                    return "ok"

            return Model()

    result = asyncio.run(FakeTeam().run_team(world, org, Roles(), mode="async", clock=world.clock))
    notes = record_result(result, world)
    notes["org"] = {"org": "tree", "leaves": 2, "members": [
        {"name": a.name, "role": a.role, "player": a.player} for a in org.agents]}  # fmt: skip
    notes.update(mode="async", clock="virtual")
    return notes


def _printed(notes: dict[str, Any]) -> str:
    out = io.StringIO()
    render_teams({"team": notes}, Console(file=out, width=200, color_system=None))
    return out.getvalue()


def test_timeline_is_in_clock_order_with_messages_between() -> None:
    lines = timeline(_team_notes())
    times = [line.time for line in lines]
    assert times == sorted(times)
    kinds = [(line.agent, line.kind) for line in lines]
    # the pool-only message (t=2.0) comes before the leader's plan (t=4.0)
    assert kinds[0] == ("w2", "message") and kinds[1] == ("leader", "plan")
    # the pool's copies of the leader's message, the report and the refusal are not repeated
    assert sum(1 for line in lines if "-> w1: collect 10 wood" in line.text) == 1
    assert sum(1 for line in lines if "REPORT failed" in line.text) == 1
    assert not any("REFUSED" in line.text for line in lines)
    # single actions and model calls are counted, not listed
    assert not {"action", "call"} & {line.kind for line in lines}


def test_ties_keep_recorded_order() -> None:
    notes = {"events": [
        {"time": 1.0, "tick": 5, "agent": "a", "kind": "plan", "task": "first"},
        {"time": 1.0, "tick": 5, "agent": "b", "kind": "plan", "task": "second"},
        {"time": 0.5, "tick": 2, "agent": "c", "kind": "monitor", "status": "ongoing"},
    ]}  # fmt: skip
    assert [line.agent for line in timeline(notes)] == ["c", "a", "b"]


def test_every_kind_reads_as_words() -> None:
    assert describe({"kind": "message", "to": None, "text": "found iron"}) == "-> all: found iron"
    assert describe({"kind": "skill", "call": "craft(wood_pickaxe)"}) == (
        "starts craft(wood_pickaxe)"
    )
    assert describe(
        {"kind": "skill", "call": "collect(iron, 1)", "success": False,
         "reason": "needs stone_pickaxe", "ticks": 3}
    ) == "collect(iron, 1) -> failed: needs stone_pickaxe (3 ticks)"  # fmt: skip
    assert describe({"kind": "monitor", "status": "success", "rationale": "10 wood"}) == (
        "monitor: success (10 wood)"
    )
    assert describe(
        {"kind": "refused", "command": "mine", "sender": "w2", "reason": "not parent"}
    ) == ("refused mine from w2: not parent")
    assert describe({"kind": "report", "to": "leader", "status": "failed", "task": "dig"}) == (
        "reports to leader: failed: dig"
    )
    assert describe({"kind": "report", "to": "boss", "status": "failed", "text": "REPORT x"}) == (
        "reports to boss: REPORT x"
    )
    assert describe({"kind": "plan", "error": "no usable answer after 3 tries"}) == (
        "plan failed: no usable answer after 3 tries"
    )
    assert describe({"kind": "call", "role": "worker", "prompt_tokens": 10,
                     "completion_tokens": 5, "latency_s": 1.25}) == (
        "worker model call, 15 tokens, 1.25 s"
    )  # fmt: skip
    # a kind this renderer does not know still shows its fields
    assert describe({"kind": "vote", "time": 1.0, "choice": "north"}) == "choice=north"


def test_agent_rows_count_what_each_agent_did() -> None:
    rows = agent_rows(_team_notes())
    assert list(rows) == ["leader", "w1", "w2"]
    leader, w1, w2 = rows["leader"], rows["w1"], rows["w2"]
    assert (leader["role"], leader["plans"], leader["calls"], leader["tokens"]) == (
        "leader", 1, 1, 380)  # fmt: skip
    assert leader["think_s"] == 4.0 and leader["messages"] == 1
    assert (w1["skills_ok"], w1["actions"], w1["messages"]) == (1, 1, 1)
    assert w2["refused"] == 1
    assert (leader["iterations"], w1["iterations"], w2["iterations"]) == (3, 2, 1)


def test_render_prints_header_agents_and_timeline() -> None:
    text = _printed(_team_notes("collect-20-stone/seed-0"))
    assert "org=tree leaves=2" in text and "mode=async" in text and "clock=virtual" in text
    assert "TC=NaN" in text and "mPT=2.5" in text and "ticks=240" in text
    assert "agents" in text and "timeline (8 entries" in text
    assert "collect(wood, 10) -> failed: no tree within reach (118 ticks)" in text
    assert text.index("I see a cow") < text.index("-> w1: collect 10 wood")


def test_long_timelines_are_cut(monkeypatch: Any) -> None:
    monkeypatch.setattr(team_view, "TIMELINE_LINES", 3)
    notes = {"events": [
        {"time": float(i), "tick": i, "agent": "a", "kind": "plan", "task": f"t{i}"}
        for i in range(5)
    ]}  # fmt: skip
    text = _printed(notes)
    assert "plans: t2" in text and "plans: t3" not in text and "... 2 more entries" in text


def test_episodes_without_a_team_print_nothing() -> None:
    out = io.StringIO()
    render_teams({"spring": {}}, Console(file=out))
    assert out.getvalue() == ""


def test_pool_messages_naming_players_are_told_as_agents_and_not_repeated() -> None:
    team = {
        "org": {"members": [
            {"name": "leader", "role": "leader", "player": "p1"},
            {"name": "worker1", "role": "worker", "player": "p2"},
        ]},
        "events": [
            {"time": 1.0, "tick": 5, "agent": "leader", "kind": "message", "to": "worker1",
             "text": "collect(wood, 5)"},
        ],
        "messages": [
            {"time": 1.0, "tick": 5, "sender": "p1", "to": "p2",
             "text": "COMMAND: collect(wood, 5)"},
            {"time": 2.0, "tick": 10, "sender": "p2", "to": "p1", "text": "found a lake"},
        ],
    }  # fmt: skip
    lines = timeline(team)
    assert [(line.agent, line.kind) for line in lines] == [
        ("leader", "message"),
        ("worker1", "message"),
    ]
    assert "leader" in lines[1].text and "p1" not in lines[1].text
