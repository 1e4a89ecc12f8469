"""The law records' format: one attempt at an achievement and the states around it.

A record is ``{"achievement", "action", "success", "before", "after"}`` where a
state is ``{"attributes", "tools", "materials", "face", "nearby", "sleeping"}``
(``sleeping`` is optional when read: older files lack it) (see
:mod:`lorekit.laws.records`, which collects them and re-exports these names).
Kept apart from the collector so that the learners (``candidates``,
``symbolic``, ``score``) read records without depending on how they are
collected.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit import jsonscan
from lorekit.laws.experience import LAW_ACTIONS, THING_NAMES
from lorekit.laws.transitions import ATTRIBUTES, MATERIALS, TOOLS, write_jsonl

__all__ = [
    "STATE_KEYS",
    "LawRecord",
    "NoRecords",
    "RecordError",
    "iter_attempts",
    "kind",
    "paper_state",
    "read_nonempty_records",
    "read_records",
    "write_records",
]

MAX_RECORDS_BYTES = 512 * 1024**2
"""The paper's records are a few MB; a file far larger is not one (and would be
read into memory)."""

STATE_KEYS = ("attributes", "tools", "materials", "face", "nearby")


class RecordError(ValueError):
    """A records file line that does not follow the record format."""


class NoRecords(RecordError):
    """A records file without a single record: nothing to learn laws from."""


def kind(name: str) -> str:
    """The kind a thing name belongs to: a ripe plant is a plant (as ``do`` sees it)."""
    return "plant" if name == "ripe plant" else name


def paper_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """The record's view of a :func:`structured_state`: vitals, inventory, faced,
    3x3, and whether the player sleeps (what a ``sleep`` that took changes)."""
    return {
        "attributes": dict(state["attributes"]),
        "tools": dict(state["tools"]),
        "materials": dict(state["materials"]),
        "face": str(state["faced"]),
        "nearby": [[str(cell) for cell in row] for row in state["neighbourhood"]],
        "sleeping": bool(state.get("sleeping", False)),
    }


@dataclass(frozen=True)
class LawRecord:
    """One attempt at an achievement: its action, the states around it, the outcome."""

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
            "before": self.before,
            "after": self.after,
        }

    @classmethod
    def from_json(cls, raw: Any, where: str = "record") -> LawRecord:
        if not isinstance(raw, Mapping):
            raise RecordError(f"{where}: expected an object")
        missing = [
            k for k in ("achievement", "action", "success", "before", "after") if k not in raw
        ]
        if missing:
            raise RecordError(f"{where}: missing field(s) {', '.join(missing)}")
        achievement = raw["achievement"]
        if achievement not in LAW_ACTIONS:
            raise RecordError(f"{where}.achievement: {achievement!r} is not a crafter achievement")
        if not isinstance(raw["success"], bool):
            raise RecordError(f"{where}.success: expected true or false")
        for side in ("before", "after"):
            state = raw[side]
            if not isinstance(state, Mapping) or any(k not in state for k in STATE_KEYS):
                raise RecordError(
                    f"{where}.{side}: expected an object with {', '.join(STATE_KEYS)}"
                )
            _check_state(state, f"{where}.{side}")
        return cls(achievement, str(raw["action"]), raw["success"], raw["before"], raw["after"])

    def inventory(self, side: str = "before") -> dict[str, int]:
        """Vitals, tools and materials of one side as a single item -> count map."""
        state = self.before if side == "before" else self.after
        return {**state["attributes"], **state["tools"], **state["materials"]}

    def nearby(self) -> set[str]:
        """Names in the 3x3 area before the attempt, the player left out."""
        return {cell for row in self.before["nearby"] for cell in row if cell != "player"}


_PARTS = {"attributes": ATTRIBUTES, "tools": TOOLS, "materials": MATERIALS}
_CELLS = THING_NAMES | {"player"}


def _check_state(state: Mapping[str, Any], where: str) -> None:
    """Refuse a state the learners would trip over, naming the field: counts
    that are not whole numbers, names crafter does not have, a 3x3 area that is
    not rows of names. (A learner reads every field; a bad one used to surface
    as an internal error, or as a law no experience file can hold.)"""
    for part, names in _PARTS.items():
        counts = state[part]
        if not isinstance(counts, Mapping):
            raise RecordError(f"{where}.{part}: expected an object of item -> count")
        for item, count in counts.items():
            if item not in names:
                raise RecordError(
                    f"{where}.{part}.{item}: unknown item {item!r} ({part} are: {', '.join(names)})"
                )
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise RecordError(
                    f"{where}.{part}.{item}: expected a whole number >= 0, got {count!r}"
                )
    face = state["face"]
    if not isinstance(face, str) or face not in THING_NAMES:
        raise RecordError(
            f"{where}.face: expected a name of crafter's ({', '.join(sorted(THING_NAMES))}), "
            f"got {_short(face)}"
        )
    rows = state["nearby"]
    if not (
        isinstance(rows, list)
        and all(isinstance(row, list) for row in rows)
        and all(isinstance(cell, str) and cell in _CELLS for row in rows for cell in row)
    ):
        raise RecordError(
            f"{where}.nearby: expected rows of names of crafter's (the 3x3 area), "
            f"got {_short(rows)}"
        )
    if not isinstance(state.get("sleeping", False), bool):
        raise RecordError(f"{where}.sleeping: expected true or false")


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def write_records(records: Iterable[LawRecord], path: str | Path) -> int:
    """One JSON object per line; returns how many were written."""
    return write_jsonl(records, path)


def read_records(path: str | Path) -> list[LawRecord]:
    """All records of a JSONL file; a bad line raises RecordError naming its number."""
    file = Path(path)
    if not file.exists():
        raise RecordError(f"{file}: no such records file (make one with `lorekit laws collect`)")
    if file.is_dir():
        raise RecordError(f"{file}: a folder, not a records file")
    size = file.stat().st_size
    if size > MAX_RECORDS_BYTES:
        raise RecordError(
            f"{file}: {size:,} bytes, more than a records file holds "
            f"(at most {MAX_RECORDS_BYTES:,}); is it the right file?"
        )
    out: list[LawRecord] = []
    number = 0
    try:
        with file.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    raw = jsonscan.loads(line)  # a 5,000-digit number too is malformed
                except json.JSONDecodeError as exc:
                    raise RecordError(f"{file}:{number}: not valid JSON ({exc.msg})") from None
                except RecursionError:
                    raise RecordError(f"{file}:{number}: JSON nested too deeply") from None
                out.append(LawRecord.from_json(raw, f"{file}:{number}"))
    except UnicodeDecodeError:
        raise RecordError(
            f"{file}:{number + 1}: not a text (UTF-8) file; records are JSON lines"
        ) from None
    except OSError as exc:
        raise RecordError(f"{file}: cannot read: {exc.strerror or exc}") from None
    return out


def read_nonempty_records(path: str | Path) -> list[LawRecord]:
    """:func:`read_records` for the learners: a file without a record raises
    :class:`NoRecords` (an empty file is a mistake to report, not an experience
    of no laws)."""
    records = read_records(path)
    if not records:
        raise NoRecords(
            f"{path}: no records in the file, so there is nothing to learn from; "
            "make records with `lorekit laws collect -o FILE`"
        )
    return records


def iter_attempts(records: Iterable[LawRecord], achievement: str) -> Iterator[LawRecord]:
    return (r for r in records if r.achievement == achievement)
