"""Where an extraction stands, saved after every step so a rerun continues it.

An extraction makes dozens of model calls per achievement. A kill, a network
outage or a spent budget should cost at most the step in flight: after each
answered step the extractor writes the whole progress (per achievement: the
current text and form of each aspect's costs and gains and of the
preconditions, how many records each has seen, calls made, and a failure if
there was one) to a JSON sidecar, atomically. A rerun reads it and asks only
what is left; with the model cache on, the step that was in flight is
replayed from the cache, so the result is the one an uninterrupted run gives.

Progress is only reused for the same question: each achievement's entry
carries a fingerprint of the model, the prompts and that achievement's
records, and a rerun that differs in any of them stops with
:class:`ProgressMismatch` instead of mixing two extractions. The retry bound
is not part of it: a rerun asks the failed step of a failed achievement
again, so a larger bound can rescue it while finished achievements are kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lorekit import jsonscan

FORMAT = 1


class ProgressMismatch(ValueError):
    """Saved progress belongs to another extraction (other records, model or prompts)."""


def progress_path(out: str | Path) -> Path:
    """The progress sidecar of an output file: ``experience.json.progress.json``
    (beside the output, so the same command finds it again)."""
    p = Path(out)
    return p.with_name(p.name + ".progress.json")


def fingerprint(**parts: Any) -> str:
    """A short stable hash of JSON-able ``parts``."""
    raw = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def new_state(print_: str) -> dict[str, Any]:
    """A fresh achievement entry; ``print_`` is its fingerprint."""
    return {
        "fingerprint": print_,
        "status": "running",
        "calls": 0,
        "retries": 0,
        "effects": {},
        "preconditions": {"done": 0, "text": "", "form": {}},
        "failure": None,
    }


class Progress:
    """The sidecar file (or nothing, when ``path`` is None: a run that cannot resume)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self.achievements: dict[str, dict[str, Any]] = {}
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        try:
            data = jsonscan.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ProgressMismatch(
                f"{path}: cannot read the saved progress ({exc}); delete it to start over"
            ) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ProgressMismatch(
                f"{path}: not an extraction progress file of format {FORMAT}; "
                "delete it to start over"
            )
        achievements = data.get("achievements")
        if not isinstance(achievements, dict):
            raise ProgressMismatch(f"{path}: the progress file has no achievements table")
        self.achievements = achievements

    def state(self, achievement: str, print_: str) -> dict[str, Any]:
        """The entry of ``achievement``: the saved one if it matches, else a new one."""
        saved = self.achievements.get(achievement)
        if saved is None:
            saved = self.achievements[achievement] = new_state(print_)
        elif saved.get("fingerprint") != print_:
            where = self.path if self.path is not None else "the progress"
            raise ProgressMismatch(
                f"{where}: the saved progress of {achievement!r} was made with other records, "
                "another model, other prompts or another retry bound; delete the file (or "
                "pass --fresh) to start over, or rerun with what it began with"
            )
        return saved

    def save(self) -> None:
        """Write everything, atomically (a kill mid-write leaves the previous file)."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(
            json.dumps({"format": FORMAT, "achievements": self.achievements}, indent=1) + "\n",
            encoding="utf-8",
        )
        os.replace(tmp, self.path)

    def summary(self) -> Mapping[str, str]:
        """Status by achievement: running, done or failed."""
        return {name: str(state.get("status")) for name, state in self.achievements.items()}
