"""STAND-IN for helper lawsym's ``experience.py`` (the lead keeps lawsym's version).

Only the shared contract the reward modules code against: ``Law``,
``Experience``, ``LAW_ACTIONS`` and ``oracle_experience()``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lorekit.envs.crafter.core import ACHIEVEMENTS
from lorekit.envs.crafter.rules import CrafterRules

LAW_ACTIONS: dict[str, str] = {a: ("sleep" if a == "wake_up" else a) for a in ACHIEVEMENTS}


@dataclass
class Law:
    achievement: str
    action: str
    requires: dict[str, int]
    nearby: list[str]
    faced: list[str]
    costs: dict[str, int]
    gains: dict[str, int]
    text: str = ""
    confidence: float | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class Experience:
    laws: dict[str, Law]
    source: str
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "laws": {k: asdict(v) for k, v in self.laws.items()},
            "source": self.source,
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Experience:
        laws = {k: Law(**v) for k, v in data["laws"].items()}
        return cls(laws, str(data["source"]), dict(data.get("meta", {})))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Experience:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))

    def render(self) -> str:
        return "\n".join(f"{law.action}: {law.text}" for law in self.laws.values())


def oracle_experience() -> Experience:
    rules = CrafterRules()
    laws = {}
    for achievement in ACHIEVEMENTS:
        rule = rules.for_achievement(achievement)
        laws[achievement] = Law(
            achievement=achievement,
            action=LAW_ACTIONS[achievement],
            requires=dict(rule.requires),
            nearby=list(rule.nearby),
            faced=list(rule.faced),
            costs=dict(rule.costs),
            gains=dict(rule.gains),
            text=f"requires {dict(rule.requires)}, nearby {list(rule.nearby)}, "
            f"facing {list(rule.faced)}",
        )
    return Experience(laws, "oracle", {})
