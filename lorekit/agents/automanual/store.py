"""AutoManual's SQLite tables: one schema for rules, libraries and manuals.

Why one file, and by default the run store's own: a build is a run, every rule
change, skill and reflection comes from one of its episodes, and keeping them
next to the episodes lets ``lorekit show`` link them and lets a resumed build
drop exactly what the never-committed episodes wrote (:func:`truncate_episodes`).

This module opens its own ``sqlite3`` connection beside the run store's. It
touches only tables named ``automanual_*`` and never ``PRAGMA user_version``,
which belongs to the run store. AutoManual's plugin registers these tables
with the run store (``registry.add_tables("automanual_", ..., run_column="build_id")``):
the store then ignores them when it decides whether a file is empty, so either
may open a fresh file first, and ``lorekit runs rm BUILD`` removes a build's rows.

Every table that records what episodes did has the columns ``build_id``
(the build's run id), ``seq`` (1, 2, ... per build, in the order written) and
``episode_id`` (the run store's episode key; NULL for the human seed and user
actions, which are always kept).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from lorekit.agents.automanual.rulediff import RuleEvent, rule_from_json, rule_json
from lorekit.textsafe import storable_row

__all__ = [
    "EPISODE_TABLES",
    "RULE_EVENTS",
    "SCHEMA_VERSION",
    "AutoManualStoreError",
    "insert_rule_event",
    "last_rule_event",
    "load_rule_events",
    "open_db",
    "transaction",
    "truncate_episodes",
]

SCHEMA_VERSION = 1
"""Bumped when a table changes incompatibly; kept in ``automanual_schema``."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS automanual_schema (
        version INTEGER NOT NULL
    )""",
    # One row per change of the rule system; the current rules are a replay.
    """CREATE TABLE IF NOT EXISTS automanual_rule_events (
        build_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        episode_id TEXT,
        actor TEXT NOT NULL,
        op TEXT NOT NULL CHECK (op IN ('write', 'update', 'delete', 'restore')),
        rule_id TEXT NOT NULL,
        before_json TEXT,
        after_json TEXT,
        at REAL NOT NULL,
        PRIMARY KEY (build_id, seq)
    )""",
    # Skills and reflections, appended; the newest of a task type wins.
    """CREATE TABLE IF NOT EXISTS automanual_library (
        build_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        episode_id TEXT,
        kind TEXT NOT NULL CHECK (kind IN ('skill', 'reflection')),
        task_type TEXT NOT NULL,
        goal TEXT NOT NULL,
        text TEXT NOT NULL,
        meta TEXT NOT NULL DEFAULT '{}',
        at REAL NOT NULL,
        PRIMARY KEY (build_id, seq)
    )""",
    # Formulated manuals: each formulation is a new version, made from one rule version.
    """CREATE TABLE IF NOT EXISTS automanual_manuals (
        build_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        rules_version INTEGER NOT NULL,
        markdown TEXT NOT NULL,
        meta TEXT NOT NULL DEFAULT '{}',
        at REAL NOT NULL,
        PRIMARY KEY (build_id, version)
    )""",
    """CREATE INDEX IF NOT EXISTS automanual_rule_events_by_episode
        ON automanual_rule_events(build_id, episode_id)""",
    """CREATE INDEX IF NOT EXISTS automanual_library_by_type
        ON automanual_library(build_id, kind, task_type)""",
)

RULE_EVENTS = "automanual_rule_events"
EPISODE_TABLES = frozenset({RULE_EVENTS, "automanual_library"})
"""Tables with ``(build_id, seq, episode_id)`` rows that :func:`truncate_episodes` can cut."""


class AutoManualStoreError(RuntimeError):
    """The AutoManual tables cannot be used as asked (newer schema, non-tail truncation)."""


def open_db(path: str | Path | None, *, timeout_s: float = 30.0) -> sqlite3.Connection:
    """A connection with every AutoManual table present; ``None`` means in memory.

    The connection is in autocommit mode (``isolation_level=None``): writers
    group their statements with :func:`transaction`. A file gets WAL (the run
    store's mode too, so the CLI can read while a build writes) and a busy
    timeout, so two connections on one file wait for each other instead of
    failing. It may be used from several threads, one at a time.
    """
    if path is None:
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    else:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(p, timeout=timeout_s, check_same_thread=False, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        if path is not None:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        with transaction(conn):
            for statement in _SCHEMA:
                conn.execute(statement)
            row = conn.execute("SELECT max(version) FROM automanual_schema").fetchone()
            if row[0] is None:
                conn.execute("INSERT INTO automanual_schema(version) VALUES (?)", (SCHEMA_VERSION,))
            elif row[0] > SCHEMA_VERSION:
                raise AutoManualStoreError(
                    f"{path} holds AutoManual tables of schema version {row[0]}, but this "
                    f"LoreKit reads up to version {SCHEMA_VERSION}; upgrade LoreKit to read it"
                )
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise AutoManualStoreError(f"cannot use {path} for AutoManual tables: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Commit everything inside at once, or nothing if it raises.

    Outside a transaction this takes the write lock up front (``BEGIN
    IMMEDIATE``: a busy file waits, it does not fail half-way); inside one it
    nests as a savepoint, so helpers compose.
    """
    if conn.in_transaction:
        conn.execute("SAVEPOINT automanual")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK TO automanual")
            conn.execute("RELEASE automanual")
            raise
        conn.execute("RELEASE automanual")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def truncate_episodes(
    conn: sqlite3.Connection, table: str, build_id: str, kept_episode_ids: Collection[str]
) -> int:
    """Drop the rows of ``build_id`` written by episodes not in ``kept_episode_ids``.

    Used on resume: an episode killed before the run store committed it may
    have written rules or skills already; the resumed build runs it again.
    A build is sequential, so those rows must form a tail (every row from the
    first dropped one on is dropped); anything else means the kept rows were
    built on the dropped ones, and this raises instead of leaving a history
    that never happened. Rows with a NULL ``episode_id`` (seed, user) are kept,
    so one after a dropped row raises too. Returns the number of rows dropped.
    """
    if table not in EPISODE_TABLES:
        raise ValueError(f"unknown AutoManual table {table!r}; use one of {sorted(EPISODE_TABLES)}")
    kept = set(kept_episode_ids)
    with transaction(conn):
        rows = conn.execute(
            f"SELECT seq, episode_id FROM {table} WHERE build_id = ? ORDER BY seq", (build_id,)
        ).fetchall()
        first: tuple[int, str] | None = None
        for seq, episode_id in rows:
            dropped = episode_id is not None and episode_id not in kept
            if dropped and first is None:
                first = (seq, episode_id)
            elif not dropped and first is not None:
                whose = (
                    f"episode {episode_id!r}" if episode_id is not None else "a seed/user action"
                )
                raise AutoManualStoreError(
                    f"cannot drop the rows of episode {first[1]!r} from {table} of build "
                    f"{build_id!r}: row {seq} of {whose}, which is kept, comes after its row "
                    f"{first[0]}; only a tail of uncommitted episodes can be dropped"
                )
        if first is None:
            return 0
        cur = conn.execute(
            f"DELETE FROM {table} WHERE build_id = ? AND seq >= ?", (build_id, first[0])
        )
        return cur.rowcount


# -- rule events (the rule system's rows) ----------------------------------------------


def insert_rule_event(conn: sqlite3.Connection, build_id: str, event: RuleEvent) -> None:
    """Append one change of the rule system; ``event.version`` is its ``seq``."""
    conn.execute(
        f"INSERT INTO {RULE_EVENTS} (build_id, seq, episode_id, actor, op, rule_id, before_json,"
        " after_json, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        storable_row(
            (
                build_id,
                event.version,
                event.episode_id,
                event.actor,
                event.op,
                event.rule_id,
                rule_json(event.before),
                rule_json(event.after),
                event.at,
            )
        ),
    )


def load_rule_events(conn: sqlite3.Connection, build_id: str) -> list[RuleEvent]:
    """Every change of ``build_id``'s rules, oldest first."""
    rows = conn.execute(
        f"SELECT seq, episode_id, actor, op, rule_id, before_json, after_json, at"
        f" FROM {RULE_EVENTS} WHERE build_id = ? ORDER BY seq",
        (build_id,),
    )
    return [
        RuleEvent(seq, ep, actor, op, rid, rule_from_json(before), rule_from_json(after), at)
        for seq, ep, actor, op, rid, before, after, at in rows
    ]


def last_rule_event(conn: sqlite3.Connection, build_id: str) -> tuple[int, float] | None:
    """``(seq, at)`` of the newest change: enough to tell whether a copy is current."""
    row = conn.execute(
        f"SELECT seq, at FROM {RULE_EVENTS} WHERE build_id = ? ORDER BY seq DESC LIMIT 1",
        (build_id,),
    ).fetchone()
    return None if row is None else (int(row[0]), float(row[1]))
