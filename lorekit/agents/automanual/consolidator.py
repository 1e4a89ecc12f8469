"""AutoManual's consolidator: merge and delete rules once there are too many (section 3.3).

It runs after the builder whenever the rule count exceeds ``max_rules``. It
sees every rule with its validation log, may read the episodes behind a rule
(``get_trajectory``; the text comes back in the next message), and merges
(update one, delete the other) or deletes until the count is within the
limit. When it cannot get there in its rounds the build goes on with the
rules it has and the report says so: a missed limit costs context length,
not correctness, and hiding it would be worse.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from lorekit.agents.automanual.builder import CONSOLIDATOR_TOOLS, system_prompt
from lorekit.agents.automanual.dialogue import DialogueLog, ToolDialogue
from lorekit.agents.automanual.rules import RuleSystem
from lorekit.agents.automanual.texts import fill
from lorekit.llm.base import Message
from lorekit.llm.roles import Roles


@dataclass(slots=True)
class ConsolidationReport:
    before: int = 0
    after: int = 0
    dialogue: DialogueLog = field(default_factory=DialogueLog)
    over_limit: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["dialogue"] = self.dialogue.to_dict()
        return d


@dataclass(slots=True)
class Consolidator:
    env_title: str
    api_text: str
    role: str = "consolidator"
    max_rules: int = 12
    retries: int = 2
    max_rounds: int = 6
    temperature: float = 0.0
    max_tokens: int = 6_000

    def needed(self, rules: RuleSystem) -> bool:
        return len(rules.rules()) > self.max_rules

    async def consolidate(
        self, roles: Roles, rules: RuleSystem, episode_id: str | None
    ) -> ConsolidationReport:
        report = ConsolidationReport(before=len(rules.rules()))
        rules.begin(episode_id, succeeded=None, actor="consolidator")
        messages = [
            Message(
                "system",
                system_prompt(
                    self.env_title, self.api_text, CONSOLIDATOR_TOOLS, "consolidator_system"
                ),
            ),
            Message("user", self._state(rules, "consolidate", "")),
        ]

        def more(log: DialogueLog, results: str) -> str | None:
            if not self.needed(rules):
                return None
            return self._state(rules, "consolidate_more", results)

        dialogue = ToolDialogue(
            roles,
            self.role,
            rules,
            CONSOLIDATOR_TOOLS,
            max_rounds=self.max_rounds,
            retries=self.retries,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        report.dialogue = await dialogue.run(messages, more)
        report.after = len(rules.rules())
        report.over_limit = report.after > self.max_rules
        return report

    def _state(self, rules: RuleSystem, template: str, results: str) -> str:
        return fill(
            "builder",
            template,
            count=len(rules.rules()),
            max_rules=self.max_rules,
            rules=rules.render(logs=True),
            results=results,
        )
