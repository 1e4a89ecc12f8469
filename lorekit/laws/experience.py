"""STAND-IN for helper lawsym's ``lorekit.laws.experience`` (the lead keeps lawsym's).

Only the issue-15 contract, so that the extractor can be written and tested
against it in this worktree: ``LAW_ACTIONS``, ``Law`` and ``Experience``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_SAME = (
    *("collect_coal", "collect_diamond", "collect_drink", "collect_iron", "collect_sapling"),
    *("collect_stone", "collect_wood", "eat_cow", "eat_plant", "defeat_zombie"),
    *("defeat_skeleton", "place_plant", "place_stone", "place_table", "place_furnace"),
    *("make_wood_pickaxe", "make_stone_pickaxe", "make_iron_pickaxe", "make_wood_sword"),
    *("make_stone_sword", "make_iron_sword"),
)
LAW_ACTIONS: dict[str, str] = {**{a: a for a in _SAME}, "wake_up": "sleep"}


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
    meta: dict[str, Any]

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
        Path(path).write_text(json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Experience:
        return cls.from_json(json.loads(Path(path).read_text()))

    def render(self) -> str:
        return "\n\n".join(f"{law.action}: {law.text}" for law in self.laws.values())
