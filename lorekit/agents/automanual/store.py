"""TEMPORARY stand-in for helper amrules' ``store.py`` (the lead keeps amrules' version).

Only the two tables the libraries and the manual storage use, with the
shared schema, and ``open_db``. Written so ``libraries.py`` and ``manuals.py``
can be built and tested in parallel with the rule system.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS automanual_library (
    build_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    episode_id TEXT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('skill', 'reflection')),
    task_type TEXT NOT NULL,
    goal TEXT NOT NULL,
    text TEXT NOT NULL,
    meta TEXT NOT NULL DEFAULT '{}',
    at REAL NOT NULL,
    PRIMARY KEY (build_id, seq)
);
CREATE TABLE IF NOT EXISTS automanual_manuals (
    build_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    rules_version INTEGER NOT NULL,
    markdown TEXT NOT NULL,
    meta TEXT NOT NULL DEFAULT '{}',
    at REAL NOT NULL,
    PRIMARY KEY (build_id, version)
);
"""


def open_db(path: str | Path | None) -> sqlite3.Connection:
    """A connection to the AutoManual tables in ``path`` (``None``: in memory)."""
    target = ":memory:" if path is None else str(path)
    conn = sqlite3.connect(target, timeout=30.0, isolation_level=None)
    if path is not None:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.executescript(SCHEMA)
    return conn
