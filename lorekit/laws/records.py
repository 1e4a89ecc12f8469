"""STAND-IN for helper lawsym's ``lorekit.laws.records`` (the lead keeps lawsym's).

Only the issue-15 contract: one JSON object a line with ``achievement``,
``action``, ``success``, ``before`` and ``after`` (each state: attributes,
tools, materials, face, nearby).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class LawRecord:
    achievement: str
    action: str
    success: bool
    before: dict[str, Any]
    after: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "achievement": self.achievement,
            "action": self.action,
            "success": self.success,
            "before": self.before,
            "after": self.after,
        }


def read_records(path: str | Path) -> list[LawRecord]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            out.append(
                LawRecord(
                    raw["achievement"], raw["action"], raw["success"], raw["before"], raw["after"]
                )
            )
    return out


def write_records(records: Iterable[LawRecord], path: str | Path) -> int:
    lines = [json.dumps(r.to_json(), sort_keys=True) for r in records]
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)
