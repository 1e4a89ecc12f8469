from __future__ import annotations

import asyncio
import json
from typing import Any

from _team_fakes import FakeSkills, PoolWorld, Result, TwoStage, validate

from lorekit.agents.teams.hourglass import COMMAND, REFUSED, HourglassAgent
from lorekit.agents.teams.org import Organization, build_org
from lorekit.llm import ScriptedLLM


def plan(*actions: str, task: str = "t") -> str:
    return json.dumps({"objective": "o", "plan": ["s1"], "task": task, "actions": list(actions)})


def verdict(status: str, why: str = "because") -> str:
    return json.dumps({"status": status, "rationale": why})


class Team:
    """Agents of one organization on a fake world, each with its scripted answers."""

    def __init__(self, org: Organization, answers: dict[str, list[Any]], **kw: Any) -> None:
        self.world = PoolWorld()
        self.skills = FakeSkills(self.world, kw.pop("outcomes", {}))
        self.events: list[dict[str, Any]] = []
        self.models = {
            n: ScriptedLLM(answers.get(n, []) or None, default=plan()) for n in org.names
        }
        self.agents = {
            n: HourglassAgent(
                n,
                org,
                self.world,
                TwoStage(self.models[n]),
                self.skills,
                goal="collect 10 wood",
                validate=validate,
                events=self.events,
                **kw,
            )
            for n in org.names
        }

    def step(self, name: str) -> bool:
        return asyncio.run(self.agents[name].iterate())

    def said(self, name: str) -> list[tuple[str | None, str]]:
        """(addressee, text) of what agent ``name`` posted, with agent names."""
        org = self.agents[name].org
        player = org.agent(name).player
        return [
            (None if m.to is None else org.by_player(m.to), m.text)
            for m in self.world.pool
            if m.sender == player
        ]


def test_malformed_answers_are_retried_with_the_error() -> None:
    team = Team(
        build_org("solo"), {"agent": ["not json", '{"objective": 1}', plan("collect(wood, 2)")]}
    )
    team.step("agent")
    calls = team.models["agent"].calls
    assert len(calls) == 3
    assert "not valid JSON" in calls[1].last
    assert "'objective' has the wrong type" in calls[2].last
    assert team.skills.ran == [("p1", "collect(wood, 2)")]
    errors = [e["error"] for e in team.events if e["kind"] == "call"]
    assert errors[0] and errors[1] and errors[2] is None


def test_retries_are_bounded_and_the_failure_is_recorded() -> None:
    team = Team(build_org("solo"), {"agent": ["{}"] * 5}, max_retries=1)
    team.step("agent")
    assert len(team.models["agent"].calls) == 2
    assert team.skills.ran == []
    failed = [e for e in team.events if e["kind"] == "plan"]
    assert len(failed) == 1 and "after 2 tries" in failed[0]["error"]


def test_a_planning_pass_counts_once_both_planners_have_answered() -> None:
    """``plans`` (what mPT averages) counts completed passes: a task planner that
    gave up after its retries, or an action planner that did, made no plan."""
    gave_up = Team(build_org("solo"), {"agent": ["{}"] * 5}, max_retries=1)
    gave_up.step("agent")
    assert gave_up.agents["agent"].plans == 0
    no_actions = Team(build_org("solo"), {"agent": [plan("tell bob to dig")]})
    no_actions.agents["agent"].max_retries = 0
    no_actions.step("agent")  # the action planner's one answer is refused
    assert no_actions.agents["agent"].plans == 0
    assert any(e["kind"] == "actions" and e.get("error") for e in no_actions.events)
    done = Team(build_org("solo"), {"agent": [plan("collect(wood, 1)")]})
    done.step("agent")
    assert done.agents["agent"].plans == 1


def test_bad_skill_calls_and_unknown_teammates_are_sent_back() -> None:
    answers = {"agent": [plan("chop trees"), plan("tell bob to dig"), plan("collect(wood, 1)")]}
    team = Team(build_org("solo"), answers)
    team.step("agent")
    calls = team.models["agent"].calls
    assert "is not a skill call" in calls[1].last
    assert "'bob', who is not on the team" in calls[2].last
    assert team.skills.ran == [("p1", "collect(wood, 1)")]


def test_delegation_reaches_the_right_worker_only() -> None:
    team = Team(
        build_org("tree", leaves=2),
        {
            "leader": [plan("tell worker2 to collect(stone, 3)")],
            "worker2": [plan("collect(stone, 3)", task="collect(stone, 3)")],
        },
    )
    team.step("leader")
    team.step("worker1")
    team.step("worker2")
    assert team.models["worker1"].calls == []  # no orders, so no model call
    assert "collect(stone, 3)" in team.models["worker2"].calls[0].last
    assert team.skills.ran == [("p3", "collect(stone, 3)")]
    assert team.said("worker2") == [("leader", "REPORT starting: collect(stone, 3)")]


def test_tree_refuses_a_leaf_command_and_tells_the_sender() -> None:
    team = Team(
        build_org("tree", leaves=2),
        {
            "leader": [plan("tell worker1 to get worker2 digging")],
            "worker1": [plan("tell worker2 to collect(stone, 9)")],
        },
    )
    team.step("leader")
    team.step("worker1")
    team.step("worker2")
    assert team.skills.ran == []
    refusal = [m for m in team.world.pool if m.text.startswith(REFUSED)]
    assert len(refusal) == 1 and refusal[0].sender == "p3" and refusal[0].to == "p2"
    assert "only leader may command worker2" in refusal[0].text
    assert team.agents["worker2"].task is None
    assert team.models["worker2"].calls == []
    assert [e["sender"] for e in team.events if e["kind"] == "refused"] == ["worker1"]
    # the refusal reaches the sender's next prompt
    team.step("worker1")
    assert "refuses the command" in team.models["worker1"].calls[-1].last


def test_graph_lets_a_delegation_loop_run() -> None:
    loop1 = [plan("tell agent2 to do it")] * 3
    loop2 = [plan("tell agent1 to do it")] * 3
    team = Team(build_org("graph", size=2), {"agent1": loop1, "agent2": loop2})
    for _ in range(3):
        team.step("agent1")
        team.step("agent2")
    commands = [m for m in team.world.pool if m.text.startswith(COMMAND)]
    assert [m.sender for m in commands] == ["p1", "p2"] * 3
    assert not any(m.text.startswith(REFUSED) for m in team.world.pool)


def test_chain_relays_and_refuses_skipping_a_link() -> None:
    team = Team(
        build_org("chain", size=3),
        {"agent1": [plan("tell agent2 to pass it on", "tell agent3 to collect(wood, 1)")]},
    )
    team.step("agent1")
    team.step("agent2")
    team.step("agent3")
    assert team.agents["agent2"].task == "pass it on"
    assert [to for to, text in team.said("agent3") if text.startswith(REFUSED)] == ["agent1"]


def worker_with_task(monitor_answer: str, outcome: Result) -> Team:
    team = Team(
        build_org("tree", leaves=1),
        {
            "leader": [plan("tell worker1 to collect(iron, 2)")],
            "worker1": [plan("collect(iron, 2)", task="collect(iron, 2)"), monitor_answer],
        },
        outcomes={"collect(iron, 2)": outcome},
    )
    team.step("leader")
    team.step("worker1")  # accepts, plans, runs the skill
    team.step("worker1")  # queue empty: the monitor judges
    return team


def test_monitor_success_reports_to_the_leader() -> None:
    team = worker_with_task(verdict("success", "got 2 iron"), Result(True, "gained 2 iron"))
    assert team.said("worker1")[-1][1] == "REPORT succeeded: collect(iron, 2) (got 2 iron)"
    assert team.agents["worker1"].task is None
    monitors = [e for e in team.events if e["kind"] == "monitor"]
    assert monitors[0]["status"] == "success"


def test_monitor_fail_reports_why_with_the_skill_reason() -> None:
    reason = "needs stone_pickaxe; inventory: wood 3"
    team = worker_with_task(verdict("fail", "no pickaxe"), Result(False, reason))
    to, text = team.said("worker1")[-1]
    assert to == "leader" and text.startswith("REPORT failed: collect(iron, 2)")
    assert reason in text
    assert "collect(iron, 2): failed" in team.models["worker1"].calls[1].last


def test_monitor_ongoing_keeps_the_task_and_plans_on() -> None:
    team = worker_with_task(verdict("ongoing", "half done"), Result(True, "gained 1 iron"))
    assert team.agents["worker1"].task == "collect(iron, 2)"
    assert team.said("worker1") == [("leader", "REPORT starting: collect(iron, 2)")]
    # after the monitor the planner was asked, and saw the verdict
    assert "ongoing: half done" in team.models["worker1"].calls[-1].last


def test_leader_reassigns_after_a_failure_report() -> None:
    org = build_org("tree", leaves=2)
    team = Team(
        org,
        {
            "worker1": [
                plan("collect(iron, 1)", task="collect(iron, 1)"),
                verdict("fail", "no iron"),
            ],
            "worker2": [plan("collect(iron, 1)", task="collect(iron, 1)")],
        },
        outcomes={"collect(iron, 1)": Result(False, "no iron within reach")},
    )
    # the leader reassigns when a failure report is in its prompt
    team.models["leader"] = ScriptedLLM(
        rules=[
            ("Judge it", verdict("ongoing", "worker1 failed; worker2 is free")),
            ("REPORT failed", plan("tell worker2 to collect(iron, 1)")),
            ("", plan("tell worker1 to collect(iron, 1)")),
        ]
    )
    team.agents["leader"].model = TwoStage(team.models["leader"])
    team.step("leader")
    team.step("worker1")
    team.step("worker1")
    team.step("leader")
    assert team.said("leader") == [
        ("worker1", "COMMAND: collect(iron, 1)"),
        ("worker2", "COMMAND: collect(iron, 1)"),
    ]
    team.step("worker2")
    assert team.agents["worker2"].task == "collect(iron, 1)"


def test_events_follow_the_timeline_schema() -> None:
    team = worker_with_task(verdict("success"), Result(True, "ok", ticks=4))
    kinds = {e["kind"] for e in team.events}
    assert {"plan", "monitor", "skill", "message", "report", "call"} <= kinds
    for e in team.events:
        assert isinstance(e["time"], float) and isinstance(e["tick"], int)
        assert e["agent"] in ("leader", "worker1")
    skill = next(e for e in team.events if e["kind"] == "skill")
    assert skill["ticks"] == 4 and skill["call"] == "collect(iron, 2)"


def test_quiet_when_nothing_of_its_own_is_under_way() -> None:
    team = Team(
        build_org("tree", leaves=1),
        {
            "leader": [plan("tell worker1 to collect(wood, 1)")],
            "worker1": [plan("collect(wood, 1)")],
        },
    )
    assert team.step("worker1") is True  # no orders: quiet, and no model call
    assert team.models["worker1"].calls == []
    assert team.step("leader") is True  # it only delegated: quiet until a report comes
    assert team.step("worker1") is False  # it ran a skill: the monitor has work next time
    team.world.done = True
    assert team.step("worker1") is True


def test_a_chain_link_waits_for_its_commander_before_planning() -> None:
    """The chain is a relay: agent2 does not plan from the goal at t=0."""
    org = build_org("chain", size=3)
    team = Team(org, {"agent1": [plan("tell agent2 to collect(wood, 3)", "collect(wood, 3)")]})
    assert team.step("agent2") is True
    assert team.models["agent2"].calls == []
    team.step("agent1")
    team.step("agent2")
    assert team.agents["agent2"].task == "collect(wood, 3)"
    assert len(team.models["agent2"].calls) == 1


def test_graph_peers_plan_without_orders() -> None:
    team = Team(build_org("graph", size=2), {})
    team.step("agent2")
    assert len(team.models["agent2"].calls) == 1


def test_the_action_planner_sees_only_the_current_task() -> None:
    team = Team(build_org("tree", leaves=1), {"leader": [plan("collect(wood, 2)", task="chop")]})
    team.world.post("p2", "p1", "wood is scarce up north")
    team.step("leader")
    planner = team.agents["leader"].model
    assert isinstance(planner, TwoStage) and len(planner.action_prompts) == 1
    prompt = planner.action_prompts[0]
    assert "The task: chop" in prompt and "player p1" in prompt
    assert "collect 10 wood" not in prompt and "scarce" not in prompt  # no goal, no messages
    assert "collect 10 wood" in team.models["leader"].calls[0].prompt  # the task planner's


def test_a_delegating_leader_judges_its_stage_from_reports() -> None:
    team = Team(
        build_org("tree", leaves=1),
        {
            "leader": [plan("tell worker1 to collect(wood, 2)", task="stage 1"),
                       verdict("success", "worker1 reported"), plan()],
            "worker1": [plan("collect(wood, 2)", task="collect(wood, 2)"), verdict("success")],
        },
    )  # fmt: skip
    team.step("leader")
    team.step("worker1")
    team.step("worker1")
    assert team.said("worker1")[-1][1].startswith("REPORT succeeded")
    team.step("leader")
    judged = team.models["leader"].calls[1].last
    assert "Judge it" in judged and "REPORT succeeded" in judged
    assert '"task": "stage 1"' in judged  # the previous plan
    assert [
        e["status"] for e in team.events if e["kind"] == "monitor" and e["agent"] == "leader"
    ] == ["success"]


def test_no_global_progress_counter_unless_asked() -> None:
    team = Team(build_org("solo"), {})
    team.step("agent")
    assert "Team progress" not in team.models["agent"].calls[0].prompt
    ablation = Team(build_org("solo"), {}, team_progress=True)
    ablation.step("agent")
    assert "Team progress: 0/10 wood" in ablation.models["agent"].calls[0].prompt


def test_a_failure_report_carries_the_inventory() -> None:
    team = worker_with_task(verdict("fail", "no pickaxe"), Result(False, "needs a pickaxe"))
    assert "Inventory: sapling 1" in team.said("worker1")[-1][1]


def test_a_refused_command_leaves_the_queue_running() -> None:
    team = Team(
        build_org("tree", leaves=2),
        {"worker1": [plan("collect(wood, 1)", "collect(wood, 2)", task="collect(wood, 3)")]},
    )
    team.world.post("p1", "p2", "COMMAND: collect(wood, 3)")

    def meddle(player: str, call: str) -> None:
        if call == "collect(wood, 1)":
            team.world.post("p3", "p2", "COMMAND: dig a hole")

    team.skills.on_run = meddle
    team.step("worker1")
    assert [c for p, c in team.skills.ran if p == "p2"] == ["collect(wood, 1)", "collect(wood, 2)"]
