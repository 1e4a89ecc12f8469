"""STAND-IN for helper lawsym's ``lorekit/laws/experience.py`` (keep theirs when merging).

Only what the SPRING agent and its tests use, with the shared contract's names
and fields: ``Law``, ``Experience(laws, source, meta)``, ``save``/``load`` of a
JSON file and ``render()``, the text an LLM agent reads as context.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Law:
    """What one achievement takes and gives, as learned (or as given)."""

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
    """Laws by achievement, where they came from, and free-form metadata."""

    laws: dict[str, Law]
    source: str
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "meta": self.meta,
            "laws": {k: asdict(v) for k, v in self.laws.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Experience:
        laws = {k: Law(**v) for k, v in dict(data["laws"]).items()}
        return cls(laws, str(data["source"]), dict(data.get("meta") or {}))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Experience:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls.from_json(data)
        except FileNotFoundError:
            raise ValueError(f"{path}: no such experience file") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not an experience file ({exc})") from None

    def render(self) -> str:
        lines = []
        for law in self.laws.values():
            parts = [f"- {law.action} (unlocks {law.achievement}):"]
            if law.requires:
                parts.append("needs " + ", ".join(f"{n} {k}" for k, n in law.requires.items()))
            if law.nearby:
                parts.append("near " + ", ".join(law.nearby))
            if law.faced:
                parts.append("facing " + " or ".join(law.faced))
            if law.costs:
                parts.append("uses " + ", ".join(f"{n} {k}" for k, n in law.costs.items()))
            if law.gains:
                parts.append("gives " + ", ".join(f"{n} {k}" for k, n in law.gains.items()))
            if law.text:
                parts.append(law.text)
            lines.append(" ".join(parts))
        return "\n".join(lines)
