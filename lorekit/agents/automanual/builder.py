"""AutoManual's builder: turn one planner episode into rule changes (section 3.3).

Case-conditioned prompting with the paper's five cases. A direct success
(solved by the first plan) goes straight to its case: record the Success
Process and the Useful Helper Methods, no diagnosis. An indirect success or a
failure is diagnosed first, each with its own prompt (an indirect success:
the root cause of the mistakes; a failure: the steps that worked and where
the final error happened), ending in a verdict of imperfect rules or
imperfect agent; then the builder gets the shared instructions plus its
case's, and answers with ``rule_system`` calls, dispatched through
:class:`~lorekit.agents.automanual.dialogue.ToolDialogue`. The rule system
itself enforces the guards that prompts can only ask for (no success-type
rule from a failed episode), so a model that ignores its case prompt is
refused, not obeyed.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from lorekit.agents.automanual.core import Diagnosis, Outcome, PlannerEpisode
from lorekit.agents.automanual.dialogue import DialogueLog, ToolDialogue, tool_text
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.texts import fill
from lorekit.agents.automanual.trajectory import render_trajectory
from lorekit.llm.ask import ParseError, ask
from lorekit.llm.base import Completion, Message, RequestParams
from lorekit.llm.roles import Roles

BUILDER_TOOLS = ("write_rule", "update_rule", "stop_generating")
CONSOLIDATOR_TOOLS = ("get_trajectory", "update_rule", "delete_rule", "stop_generating")
_VERDICT = re.compile(r"diagnosis\s*+[:=]\s*+\**+\s*+(?:imperfect\s++)?+(rules?|agent)\b", re.I)
_LOOSE = re.compile(r"\bimperfect\s+(rules?|agent)\b", re.I)


def parse_diagnosis(answer: str) -> Diagnosis | None:
    """The verdict in ``answer``: its last ``Diagnosis: rules|agent`` line.

    Without such a line, a lone "imperfect rules" / "imperfect agent" in the
    last paragraph is accepted; an answer naming both there is ambiguous (None).
    """
    found = _VERDICT.findall(answer)
    if found:
        return (
            Diagnosis.IMPERFECT_AGENT if found[-1].lower() == "agent" else Diagnosis.IMPERFECT_RULES
        )
    tail = answer.strip().split("\n\n")[-1]
    loose = {m.lower().rstrip("s") for m in _LOOSE.findall(tail)}
    if len(loose) == 1:
        return Diagnosis.IMPERFECT_AGENT if loose == {"agent"} else Diagnosis.IMPERFECT_RULES
    return None


def case_name(outcome: Outcome, diagnosis: Diagnosis | None = None) -> str:
    """The case prompt for ``outcome`` (x ``diagnosis`` unless a direct success): five cases."""
    if outcome is Outcome.DIRECT_SUCCESS:
        return "case_direct_success"
    if diagnosis is None:
        raise ValueError(f"a {outcome.value} episode needs a diagnosis")
    return f"case_{outcome.value}_{diagnosis.value}"


@dataclass(slots=True)
class BuildReport:
    """What the builder did after one episode, kept in the episode's notes."""

    diagnosis: str | None = None
    case: str | None = None
    dialogue: DialogueLog = field(default_factory=DialogueLog)
    version_before: int = 0
    version_after: int = 0
    failed: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["dialogue"] = self.dialogue.to_dict()
        return d


def system_prompt(env_title: str, api: str, tools: tuple[str, ...], which: str) -> str:
    return fill("builder", which, env_title=env_title, api=api, tools=tool_text(tools))


@dataclass(slots=True)
class Builder:
    """Reads a planner episode and updates the rules through tool calls."""

    env_title: str
    api_text: str
    role: str = "builder"
    max_rules: int = 12
    retries: int = 2
    max_rounds: int = 3
    temperature: float = 0.0
    max_tokens: int = 4_000

    async def build(self, roles: Roles, rules: RuleSystem, episode: PlannerEpisode) -> BuildReport:
        report = BuildReport(version_before=rules.version)
        diagnosis: Diagnosis | None = None
        rules.begin(episode.episode_id, succeeded=episode.outcome.succeeded, actor="builder")
        context = fill(
            "builder",
            "episode",
            rules=rules.render(logs=True) or "(no rules yet)",
            trajectory=render_trajectory(episode),
            outcome=episode.outcome.value,
        )
        messages = [
            Message("system", system_prompt(self.env_title, self.api_text, BUILDER_TOOLS, "system"))
        ]
        lead = context + "\n\n"  # a direct success: the episode and its case in one message
        if episode.outcome is not Outcome.DIRECT_SUCCESS:
            diagnosis = await self._diagnose(roles, messages, context, episode.outcome)
            if diagnosis is None:
                report.failed = f"no diagnosis after {self.retries} retries; rules left unchanged"
                report.version_after = rules.version
                return report
            report.diagnosis = diagnosis.value
            lead = ""
        report.case = case_name(episode.outcome, diagnosis)
        case = fill("builder", report.case)
        manage = fill("builder", "manage", max_rules=self.max_rules, case=case)
        messages.append(Message("user", lead + manage))
        dialogue = ToolDialogue(
            roles,
            self.role,
            rules,
            BUILDER_TOOLS,
            max_rounds=self.max_rounds,
            retries=self.retries,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        report.dialogue = await dialogue.run(messages)
        report.failed = report.dialogue.failed
        report.version_after = rules.version
        return report

    async def _diagnose(
        self, roles: Roles, messages: list[Message], context: str, outcome: Outcome
    ) -> Diagnosis | None:
        """Ask the outcome's diagnosis prompt (bounded retries); the verdict or None."""
        asked = fill("builder", f"diagnose_{outcome.value}")
        messages.append(Message("user", context + "\n\n" + asked))
        answer = await ask(
            roles[self.role],
            messages,
            _verdict,
            params=RequestParams(temperature=self.temperature, max_tokens=self.max_tokens),
            attempts=self.retries + 1,
            feedback=lambda exc: fill("builder", "diagnose_retry"),
        )
        return answer.value if answer.ok else None


def _verdict(out: Completion) -> Diagnosis:
    diagnosis = parse_diagnosis(out.text)
    if diagnosis is None:
        raise ParseError("no 'Diagnosis: rules' or 'Diagnosis: agent' verdict in the answer")
    return diagnosis
