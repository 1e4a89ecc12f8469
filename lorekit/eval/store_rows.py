"""Rows read back from the run store, checked: each value has the type its column means.

SQLite does not hold a column to its declared type: a file edited by hand, by a
script or by a buggy tool can keep ``'abc'`` in ``episodes.reward``, ``{`` in
``runs.config`` or a JSON list where an object belongs. Unchecked, such a value
surfaced far from the store as a ``TypeError`` in a summary, a ``RecursionError``
in the report or a ``ValueError`` from ``json.loads``, each an "internal error"
of whatever command read the run. Every reader builds its records here instead,
and a bad value is one :class:`~lorekit.eval.store_schema.StoreCorruptError`
naming the file, the table, the column and the row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lorekit import jsonscan
from lorekit.eval.store_schema import EpisodeRecord, RunInfo, StepRecord, StoreCorruptError

MAX_JSON_DEPTH = 200
"""Deepest nesting a stored JSON value may have. LoreKit writes a few levels (an
agent's notes, a decomposition tree a few dozen); a deeper one is damage, and the
report and ``show`` walk values recursively."""


class _Row:
    """One row being read: where it is, for messages."""

    def __init__(self, path: Path, table: str, key: str, row: sqlite3.Row) -> None:
        self.path, self.table, self.key, self.row = path, table, key, row

    def fail(self, column: str, got: object, expected: str) -> StoreCorruptError:
        shown = repr(got)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return StoreCorruptError(
            f"the run store {self.path} is damaged: {self.table}.{column} of {self.key} holds "
            f"{shown}, not {expected} (repair or delete that row, or remove the run with "
            "`lorekit runs rm`)"
        )

    def get(self, column: str, check: Callable[[Any], bool], expected: str) -> Any:
        value = self.row[column]
        if not check(value):
            raise self.fail(column, value, expected)
        return value

    def text(self, column: str, *, null: bool = False) -> Any:
        return self.get(column, lambda v: isinstance(v, str) or (null and v is None), "text")

    def integer(self, column: str, *, null: bool = False) -> Any:
        return self.get(
            column,
            lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (null and v is None),
            "an integer",
        )

    def number(self, column: str) -> float:
        value = self.get(
            column,
            lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            "a number",
        )
        return float(value)

    def json(self, column: str, kind: type, *, null: bool = False) -> Any:
        raw = self.row[column]
        if raw is None and null:
            return None
        if not isinstance(raw, str):
            raise self.fail(column, raw, "JSON text")
        try:
            value = jsonscan.loads(raw)
        except json.JSONDecodeError as exc:
            raise self.fail(column, raw, f"JSON ({exc.msg})") from None
        if not isinstance(value, kind):
            raise self.fail(column, raw, f"a JSON {'object' if kind is dict else 'list'}")
        if json_depth(value) > MAX_JSON_DEPTH:
            raise self.fail(column, raw, f"JSON nested at most {MAX_JSON_DEPTH} deep")
        return value


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """How deeply ``value`` nests, counted up to just past ``limit`` (iteratively: the
    value may be thousands deep, past what a recursive walk survives)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > limit:
            return level
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def run_info(path: Path, row: sqlite3.Row) -> RunInfo:
    r = _Row(path, "runs", f"run {row['run_id']!r}", row)
    return RunInfo(
        r.text("run_id"),
        r.number("created_at"),
        r.number("updated_at"),
        r.text("status"),
        r.text("env"),
        r.text("agent"),
        r.json("config", dict),
        r.json("meta", dict),
        r.json("summary", dict, null=True),
    )


_INFO_KINDS: dict[str, tuple[type, ...]] = {
    "notes": (dict,),
    "usage": (dict,),
    "stop_reason": (str,),
    "initial_observation": (str,),
    "wall_s": (int, float),
}
"""What the harness writes into ``episodes.info`` (None aside), which readers rely on."""


def episode_record(path: Path, row: sqlite3.Row) -> EpisodeRecord:
    r = _Row(path, "episodes", f"run {row['run_id']!r} episode {row['episode_key']!r}", row)
    info = r.json("info", dict)
    for key, kinds in _INFO_KINDS.items():
        value = info.get(key)
        if value is not None and (not isinstance(value, kinds) or isinstance(value, bool)):
            raise r.fail(f"info.{key}", value, " or ".join(k.__name__ for k in kinds))
    return EpisodeRecord(
        r.text("run_id"),
        r.text("episode_key"),
        r.integer("idx"),
        r.text("task_id", null=True),
        r.text("task_group", null=True),
        r.integer("seed", null=True),
        r.text("status"),
        bool(r.integer("success")),
        r.number("reward"),
        r.integer("steps"),
        r.number("started_at"),
        r.number("ended_at"),
        r.number("wall_s"),
        r.text("error", null=True),
        info,
    )


def step_record(path: Path, run_id: str, episode_key: str, row: sqlite3.Row) -> StepRecord:
    where = f"run {run_id!r} episode {episode_key!r} step {row['idx']!r}"
    r = _Row(path, "steps", where, row)
    return StepRecord(
        r.integer("idx"),
        r.text("observation"),
        r.text("action"),
        r.number("reward"),
        bool(r.integer("done")),
        r.json("info", dict),
    )


def call_dict(path: Path, run_id: str, row: sqlite3.Row) -> dict[str, Any]:
    """A model call as the readers hand it out (JSON columns parsed, flags as bools)."""
    where = f"run {run_id!r} call {row['idx']!r} of episode {row['episode_key']!r}"
    r = _Row(path, "llm_calls", where, row)
    out = dict(row)
    out["episode_key"] = r.text("episode_key", null=True)
    for name in ("idx", "prompt_tokens", "completion_tokens"):
        out[name] = r.integer(name)
    for name in ("role", "model"):
        out[name] = r.text(name)
    out["answer"], out["error"] = r.text("answer", null=True), r.text("error", null=True)
    out["latency_s"], out["started_at"] = r.number("latency_s"), r.number("started_at")
    out["messages"] = r.json("messages", list)
    out["params"], out["meta"] = r.json("params", dict), r.json("meta", dict)
    out["cached"] = bool(r.integer("cached"))
    out["usage_estimated"] = bool(r.integer("usage_estimated"))
    if not all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in out["messages"]):
        raise r.fail("messages", row["messages"], "a list of messages with text content")
    return out
