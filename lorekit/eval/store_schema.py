"""The run store's vocabulary: its SQL schema, errors, record types and JSON helpers.

Why a module of its own: the writer (:mod:`lorekit.eval.store_writer`), the
readers (:mod:`lorekit.eval.store_read`) and :class:`~lorekit.eval.store.RunStore`
all speak in these terms, and none of it needs a connection. Import the public
names from :mod:`lorekit.eval.store`, which re-exports them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from lorekit.llm.calls import CallRecord
from lorekit.textsafe import storable

SCHEMA_VERSION = 1
RunStatus = Literal["running", "finished", "interrupted"]
EpisodeStatus = Literal["success", "failure", "error"]
RUN_STATUSES: frozenset[str] = frozenset(get_args(RunStatus))
EPISODE_STATUSES: frozenset[str] = frozenset(get_args(EpisodeStatus))

SCHEMA_SQL = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'interrupted')),
    env TEXT NOT NULL,
    agent TEXT NOT NULL,
    config TEXT NOT NULL,
    meta TEXT NOT NULL,
    summary TEXT
);
CREATE TABLE episodes (
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    episode_key TEXT NOT NULL,
    idx INTEGER NOT NULL,
    task_id TEXT,
    task_group TEXT,
    seed INTEGER,
    status TEXT NOT NULL CHECK (status IN ('success', 'failure', 'error')),
    success INTEGER NOT NULL,
    reward REAL NOT NULL,
    steps INTEGER NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL NOT NULL,
    wall_s REAL NOT NULL,
    error TEXT,
    info TEXT NOT NULL,
    PRIMARY KEY (run_id, episode_key)
);
CREATE INDEX episodes_by_index ON episodes(run_id, idx);
CREATE TABLE steps (
    run_id TEXT NOT NULL,
    episode_key TEXT NOT NULL,
    idx INTEGER NOT NULL,
    observation TEXT NOT NULL,
    action TEXT NOT NULL,
    reward REAL NOT NULL,
    done INTEGER NOT NULL,
    info TEXT NOT NULL,
    PRIMARY KEY (run_id, episode_key, idx),
    FOREIGN KEY (run_id, episode_key) REFERENCES episodes(run_id, episode_key) ON DELETE CASCADE
);
CREATE TABLE llm_calls (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    episode_key TEXT,
    idx INTEGER NOT NULL,
    role TEXT NOT NULL,
    model TEXT NOT NULL,
    messages TEXT NOT NULL,
    params TEXT NOT NULL,
    answer TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    cached INTEGER NOT NULL,
    error TEXT,
    started_at REAL NOT NULL,
    meta TEXT NOT NULL,
    usage_estimated INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (run_id, episode_key) REFERENCES episodes(run_id, episode_key) ON DELETE CASCADE
);
CREATE INDEX llm_calls_by_episode ON llm_calls(run_id, episode_key, idx);
"""
CALL_COLUMN_NAMES = (
    "role",
    "model",
    "messages",
    "params",
    "answer",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "cached",
    "error",
    "started_at",
    "meta",
    "usage_estimated",
)
CALL_COLUMNS = ", ".join(CALL_COLUMN_NAMES)
CALL_PLACEHOLDERS = ", ".join("?" * len(CALL_COLUMN_NAMES))

ADDED_CALL_COLUMNS: dict[str, tuple[str, str]] = {
    "usage_estimated": ("INTEGER NOT NULL DEFAULT 0", "0"),
}
"""Columns of ``llm_calls`` newer than schema version 1's first files: name ->
(declaration, value to read when absent). Additive columns with a default keep
the schema version: a writable open adds them in place, a read-only open reads
the default, and an older LoreKit still reads and writes the file (it names
its columns). Only a change an older reader would misread bumps the version."""


USAGE_KEYS = (
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "cache_hits",
    "errors",
    "error_tokens",
    "estimated_calls",
)
"""The per-role usage counts the store reports (names shared with ``RoleUsage``)."""


def call_select(present: set[str]) -> str:
    """The call columns for a SELECT over a table that has the ``present`` columns."""
    return ", ".join(
        name
        if name in present or name not in ADDED_CALL_COLUMNS
        else f"{ADDED_CALL_COLUMNS[name][1]} AS {name}"
        for name in CALL_COLUMN_NAMES
    )


class StoreError(Exception):
    """A run store cannot be used as asked (wrong file, closed, read-only, bad argument)."""


class StoreCorruptError(StoreError):
    """A row of the file holds a value its column cannot mean (text where a number
    belongs, broken JSON); the message names the table, the column and the row."""


class StoreWriteError(StoreError):
    """The file could not take a write (the disk is full, or failed): nothing of the
    write was kept, everything committed before is intact, and the run can resume
    once there is room."""


def write_failure(path: Path, exc: BaseException) -> StoreWriteError | None:
    """The :class:`StoreWriteError` that ``exc`` stands for when it is a full or failing
    disk under the store at ``path`` (SQLite's FULL and IOERR codes, ``ENOSPC``), else None."""
    import errno
    import sqlite3

    name = str(getattr(exc, "sqlite_errorname", "") or "")
    if isinstance(exc, sqlite3.OperationalError) and name.startswith("SQLITE_FULL"):
        why = "the disk is full"
    elif isinstance(exc, sqlite3.OperationalError) and name.startswith("SQLITE_IOERR"):
        why = f"the disk failed a write ({exc})"
    elif isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        why = f"the disk is full ({exc.strerror or exc})"
    else:
        return None
    return StoreWriteError(
        f"cannot write the run store {path.resolve()}: {why}; free space on its disk and "
        "resume the run: every episode stored so far is kept"
    )


class SchemaVersionError(StoreError):
    """The file was written by a newer LoreKit; reading it with this one would misread it."""


class RunMismatchError(StoreError, ValueError):
    """``create_run`` was given an existing run id that belongs to another env or agent."""


class UnknownRunError(LookupError):
    """A reader or writer named a run the store does not hold."""

    def __init__(self, run_id: str, path: Path) -> None:
        self.run_id = run_id
        self.path = path
        super().__init__(f"no run {run_id!r} in the run store {path}")


def json_fallback(obj: object) -> str:
    """Make any value JSON-able: info dicts come from envs and agents we do not control."""
    try:
        return str(obj)
    except Exception:  # a broken __str__ must not lose the episode
        return f"<unprintable {type(obj).__name__}>"


def _sanitise(obj: object, seen: frozenset[int] = frozenset()) -> Any:
    """Rebuild a value as plain JSON data (string keys, no cycles) when dumps refused it."""
    if obj is None or isinstance(obj, str | bool | int | float):
        return obj
    if id(obj) in seen:
        return "<cycle>"
    inner = seen | {id(obj)}
    if isinstance(obj, Mapping):
        return {json_fallback(k): _sanitise(v, inner) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_sanitise(v, inner) for v in obj]
    return json_fallback(obj)


def to_json(obj: object) -> str:
    """Serialise never failing: unknown objects become strings, odd keys become text."""
    try:
        text = json.dumps(obj, default=json_fallback, ensure_ascii=False)
    except (TypeError, ValueError):  # non-string keys, circular references
        text = json.dumps(_sanitise(obj), default=json_fallback, ensure_ascii=False)
    return storable(text)  # SQLite stores UTF-8: no lone surrogates


def info_json(info: Mapping[str, Any] | None) -> str:
    """JSON of an info mapping; a dict is passed as is so a cycle is cut where it closes."""
    if info is None:
        return "{}"
    return to_json(info if isinstance(info, dict) else dict(info))


def loads_or_none(text: str | None) -> Any:
    """Parse a stored JSON column; SQL NULL (a run without a summary) stays None."""
    return None if text is None else json.loads(text)


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run: what was evaluated, how it is going, and its final summary."""

    run_id: str
    created_at: float
    updated_at: float
    status: str
    env: str
    agent: str
    config: dict[str, Any]
    meta: dict[str, Any]
    summary: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class EpisodeRecord:
    """A finished episode. ``steps`` is how many step rows were committed with it."""

    run_id: str
    episode_key: str
    index: int
    task_id: str | None
    task_group: str | None
    seed: int | None
    status: str
    success: bool
    reward: float
    steps: int
    started_at: float
    ended_at: float
    wall_s: float
    error: str | None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One environment step: the action taken and what the environment answered."""

    idx: int
    observation: str
    action: str
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def call_row(record: CallRecord) -> tuple[Any, ...]:
    """Flatten a call now, so later mutation of its meta cannot change what gets stored."""
    d = record.to_dict()
    meta = dict(d["meta"])
    if d.get("finish_reason") is not None:
        meta.setdefault("finish_reason", d["finish_reason"])
    if d.get("usage_refused"):  # counts that could not be tokens; an estimate stands in
        meta.setdefault("usage_refused", d["usage_refused"])
    return (
        d["role"],
        d["model"],
        to_json(d["messages"]),
        to_json(d["params"]),
        d["answer"],
        int(d["prompt_tokens"]),
        int(d["completion_tokens"]),
        float(d["latency_s"]),
        int(bool(d["cached"])),
        d["error"],
        float(d["started_at"]),
        to_json(meta),
        int(bool(d["usage_estimated"])),
    )
