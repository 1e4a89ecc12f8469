"""The builder and consolidator: case-conditioned prompts, tool calls parsed
with ast and dispatched to the rule system, refusals fed back, bounded retries."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from lorekit.agents.automanual.builder import Builder, case_name, parse_diagnosis
from lorekit.agents.automanual.consolidator import Consolidator
from lorekit.agents.automanual.core import (
    Diagnosis,
    Outcome,
    PlannerEpisode,
    PlannerTurn,
    RuleType,
)
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.store import open_db
from lorekit.llm import ScriptedLLM
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles


def episode(outcome: Outcome, eid: str = "put-1/0") -> PlannerEpisode:
    turns = [
        PlannerTurn(
            answer="...",
            analysis="search the drawers",
            code="obs = agent.go_to('drawer_1')\nassert 'pen_1' in obs, 'Error in [Step 1]'",
            feedback="AssertionFailed: Error in [Step 1] (line 2)",
            error="AssertionFailed",
        )
    ]
    if outcome.succeeded:
        turns.append(PlannerTurn(answer="...", code="agent.put('pen_1', 'desk_1')", feedback="ok"))
    return PlannerEpisode(
        eid,
        "pick_and_place_simple",
        "put a pen on desk",
        "You see...",
        turns,
        outcome,
        conclusion="done",
    )


def rules_system(trajectories: dict[str, str] | None = None) -> RuleSystem:
    table = trajectories or {}
    return RuleSystem(open_db(None), "b1", trajectory=table.get)


class Script:
    """A scripted model that records the prompts it saw."""

    def __init__(self, answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.seen: list[tuple[Message, ...]] = []
        self.llm = ScriptedLLM(fn=self._answer)

    def _answer(self, messages: tuple[Message, ...]) -> str:
        self.seen.append(messages)
        return self.answers.pop(0)


def test_parse_diagnosis() -> None:
    assert parse_diagnosis("blah\nDiagnosis: rules") is Diagnosis.IMPERFECT_RULES
    assert (
        parse_diagnosis("Diagnosis: rules\n...\n**Diagnosis: agent**") is Diagnosis.IMPERFECT_AGENT
    )
    assert parse_diagnosis("I conclude: Imperfect Agent.") is Diagnosis.IMPERFECT_AGENT
    assert parse_diagnosis("not imperfect rules but imperfect agent") is None
    assert parse_diagnosis("no verdict at all") is None
    assert case_name(Outcome.FAILURE, Diagnosis.IMPERFECT_AGENT) == "case_failure_agent"


def test_builder_retries_diagnosis_then_refuses_unsafe_calls_then_applies() -> None:
    script = Script(
        [
            "The agent looked in one drawer only.",  # no verdict: asked again
            "Diagnosis: rules",
            "```python\nimport os\n"
            "rule_system.write_rule(rule=os.getcwd(), type='Special Mechanism')\n```",
            "```python\nrule_system.write_rule(rule='When searching: objects hide in drawers.', "
            "type='Corrected Error', example='agent.open(\"drawer_1\")', "
            "validation_record='put-1/0')\nrule_system.stop_generating()\n```",
        ]
    )
    rules = rules_system()
    report = asyncio.run(
        Builder("ALFWorld", "agent.go_to(x)").build(
            Roles(script.llm), rules, episode(Outcome.INDIRECT_SUCCESS)
        )
    )
    assert report.diagnosis == "rules" and report.case == "case_indirect_success_rules"
    assert [r.content for r in rules.rules()] == ["When searching: objects hide in drawers."]
    assert rules.rules()[0].type is RuleType.CORRECTED_ERROR
    assert report.dialogue.stopped and report.failed is None
    assert len(report.dialogue.refused_blocks) == 1
    manage_prompt = script.seen[2][-1].content
    assert "## Manage rules" in manage_prompt and "Corrected Error" in manage_prompt
    refusal = script.seen[3][-1].content
    assert "## Refused" in refusal and "import" in refusal.lower()
    assert report.version_before == 0 and report.version_after == 1


def test_failed_episode_cannot_write_a_success_rule_and_is_told_why() -> None:
    script = Script(
        [
            "Diagnosis: rules",
            "```python\n"
            "rule_system.write_rule(rule='Put tasks: go, take, put.', type='Success Process')\n"
            "rule_system.stop_generating()\n```",
            "```python\nrule_system.write_rule(rule='Put tasks: the pen was not in drawer_1.', "
            "type='Unsolved Error')\nrule_system.stop_generating()\n```",
        ]
    )
    rules = rules_system()
    report = asyncio.run(
        Builder("ALFWorld", "api").build(Roles(script.llm), rules, episode(Outcome.FAILURE))
    )
    assert [r.type for r in rules.rules()] == [RuleType.UNSOLVED_ERROR]
    assert report.case == "case_failure_rules"
    assert report.dialogue.calls[0].error is not None
    assert "Success Process" in script.seen[2][-1].content  # the refusal names the guard


def test_builder_gives_up_after_bounded_bad_blocks() -> None:
    bad = "```python\nrule_system.write_rule(rule=open('/etc/passwd').read(), type='x')\n```"
    script = Script(["Diagnosis: agent", bad, bad, bad, bad])
    rules = rules_system()
    builder = Builder("ALFWorld", "api", retries=2)
    report = asyncio.run(builder.build(Roles(script.llm), rules, episode(Outcome.FAILURE)))
    assert rules.rules() == [] and rules.version == 0
    assert report.failed is not None and "retries" in report.failed
    assert len(script.seen) == 4  # diagnosis + 1 + 2 retries


def test_the_five_cases() -> None:
    assert case_name(Outcome.DIRECT_SUCCESS) == "case_direct_success"
    names = {
        case_name(o, d)
        for o in (Outcome.INDIRECT_SUCCESS, Outcome.FAILURE)
        for d in (Diagnosis.IMPERFECT_RULES, Diagnosis.IMPERFECT_AGENT)
    }
    assert len(names | {case_name(Outcome.DIRECT_SUCCESS, Diagnosis.IMPERFECT_AGENT)}) == 5
    with pytest.raises(ValueError):
        case_name(Outcome.FAILURE)


def test_direct_success_goes_straight_to_the_success_prompt() -> None:
    script = Script(
        [
            "```python\nrule_system.write_rule(rule='Put tasks: go, take, put.', "
            "type='Success Process', example='agent.go_to(\"desk_1\")', "
            "validation_record='put-1/0')\nrule_system.stop_generating()\n```"
        ]
    )
    rules = rules_system()
    ep = episode(Outcome.DIRECT_SUCCESS)
    ep.turns = ep.turns[1:]
    report = asyncio.run(Builder("ALFWorld", "api").build(Roles(script.llm), rules, ep))
    assert report.case == "case_direct_success" and report.diagnosis is None
    assert len(script.seen) == 1  # no diagnosis call
    prompt = script.seen[0][-1].content
    assert "## Trajectory" in prompt and "## Manage rules" in prompt
    assert "Useful Helper Method" in prompt and "Success Process" in prompt
    assert "Diagnosis:" not in prompt and "change nothing" not in prompt
    assert [r.type for r in rules.rules()] == [RuleType.SUCCESS_PROCESS]


def test_failure_and_indirect_success_get_their_own_diagnosis_prompts() -> None:
    asked = {}
    for outcome in (Outcome.FAILURE, Outcome.INDIRECT_SUCCESS):
        script = Script(["Diagnosis: agent", "```python\nrule_system.stop_generating()\n```"])
        asyncio.run(
            Builder("ALFWorld", "api").build(Roles(script.llm), rules_system(), episode(outcome))
        )
        asked[outcome] = script.seen[0][-1].content
    assert "final error" in asked[Outcome.FAILURE]
    assert "final error" not in asked[Outcome.INDIRECT_SUCCESS]
    assert "root cause" in asked[Outcome.INDIRECT_SUCCESS]


def test_builder_without_verdict_changes_nothing_and_says_so() -> None:
    script = Script(["hmm", "still thinking", "no idea"])
    rules = rules_system()
    report = asyncio.run(
        Builder("ALFWorld", "api", retries=2).build(
            Roles(script.llm), rules, episode(Outcome.FAILURE)
        )
    )
    assert report.diagnosis is None and report.failed and rules.version == 0


def fill_rules(rules: RuleSystem, n: int) -> None:
    rules.begin("ep-1", succeeded=True, actor="builder")
    for i in range(n):
        rules.write_rule(f"Case {i}: something about drawers.", "Special Phenomenon", "", "ep-1")


def test_consolidator_reads_a_trajectory_then_merges_under_the_limit() -> None:
    rules = rules_system({"ep-1": "TRAJECTORY-OF-EP-1"})
    fill_rules(rules, 13)
    script = Script(
        [
            "```python\nrule_system.get_trajectory(episode_id='ep-1')\n```",
            "```python\nrule_system.update_rule(rule_id='rule_0', rule='Cases 0-2: drawers.')\n"
            "rule_system.delete_rule(rule_id='rule_1')\nrule_system.delete_rule('rule_2')\n"
            "rule_system.stop_generating()\n```",
        ]
    )
    consolidator = Consolidator("ALFWorld", "api", max_rules=12)
    assert consolidator.needed(rules)
    report = asyncio.run(consolidator.consolidate(Roles(script.llm), rules, "ep-9"))
    assert "TRAJECTORY-OF-EP-1" in script.seen[1][-1].content
    assert "(13, the limit is 12)" in script.seen[0][-1].content
    assert report.before == 13 and report.after == 11 and not report.over_limit
    assert [r.rule_id for r in rules.rules()][:2] == ["rule_0", "rule_3"]
    assert rules.rules()[0].content == "Cases 0-2: drawers."


def test_consolidator_that_never_merges_is_reported_over_the_limit() -> None:
    rules = rules_system()
    fill_rules(rules, 14)
    script = Script(["```python\nrule_system.stop_generating()\n```"] * 10)
    consolidator = Consolidator("ALFWorld", "api", max_rules=12, max_rounds=3)
    report = asyncio.run(consolidator.consolidate(Roles(script.llm), rules, None))
    assert report.over_limit and report.after == 14
    assert len(script.seen) == 1  # it called stop_generating(): not asked again


def test_consolidator_goes_on_while_the_model_has_not_stopped() -> None:
    rules = rules_system()
    fill_rules(rules, 14)
    script = Script(
        [
            "```python\nrule_system.delete_rule(rule_id='rule_0')\n```",
            "```python\nrule_system.delete_rule(rule_id='rule_1')\n```",
        ]
    )
    consolidator = Consolidator("ALFWorld", "api", max_rules=12, max_rounds=3)
    report = asyncio.run(consolidator.consolidate(Roles(script.llm), rules, None))
    assert report.after == 12 and not report.over_limit and len(script.seen) == 2


@pytest.mark.parametrize("outcome", list(Outcome))
@pytest.mark.parametrize("diagnosis", list(Diagnosis))
def test_every_case_has_a_prompt(outcome: Outcome, diagnosis: Diagnosis) -> None:
    from lorekit.agents.automanual.texts import fill

    text = fill("builder", case_name(outcome, diagnosis))
    if outcome is Outcome.FAILURE:
        assert "may NOT write" in text


def test_the_builder_sees_the_planners_comments_on_the_rules_it_named() -> None:
    from lorekit.agents.automanual.trajectory import render_trajectory

    ep = episode(Outcome.FAILURE)
    ep.turns[0].answer = (
        "### Analysis\nx\n### Related rules\nrule_2: drawers must be opened first, "
        "so I open them\n### Plan\ny\n### Code\n```python\npass\n```"
    )
    ep.turns[0].related_rules = ["rule_2"]
    text = render_trajectory(ep)
    assert "Related rules: rule_2: drawers must be opened first, so I open them" in text
