"""STAND-IN for helper lawsym's ``records.py`` (the lead keeps lawsym's version).

The paper's record format, one JSON object per line::

    {"achievement", "action", "success", "before": {"attributes", "tools",
     "materials", "face", "nearby": [[3x3 names]]}, "after": {...}}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit.envs.crafter.records import Record
from lorekit.laws.experience import LAW_ACTIONS


@dataclass(frozen=True)
class LawRecord:
    achievement: str
    action: str
    success: bool
    before: Mapping[str, Any]
    after: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "achievement": self.achievement,
            "action": self.action,
            "success": self.success,
            "before": dict(self.before),
            "after": dict(self.after),
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> LawRecord:
        return cls(
            str(raw["achievement"]),
            str(raw["action"]),
            bool(raw["success"]),
            raw["before"],
            raw["after"],
        )


def _paper_state(state: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "attributes": dict(state["attributes"]),
        "tools": dict(state["tools"]),
        "materials": dict(state["materials"]),
        "face": state["faced"],
        "nearby": [list(row) for row in state["neighbourhood"]],
    }


def from_record(record: Record, achievement: str, success: bool) -> LawRecord:
    return LawRecord(
        achievement,
        LAW_ACTIONS[achievement],
        success,
        _paper_state(record.state),
        _paper_state(record.next_state),
    )


def write_records(records: Iterable[LawRecord], path: str | Path) -> int:
    lines = [json.dumps(r.to_json(), sort_keys=True) for r in records]
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def read_records(path: str | Path) -> list[LawRecord]:
    text = Path(path).read_text(encoding="utf-8")
    return [LawRecord.from_json(json.loads(line)) for line in text.splitlines() if line.strip()]
