"""Start a build from another one: copy its rules, libraries and manuals.

AutoManual builds MiniWoB++ in two steps (paper, appendix): rules on the 9
task types with feedback, then only the skill and reflection libraries on the
other 44. The second step is a new build that starts from the first one's
state. Why a copy and not a shared reference: the second build's own rows
(its skills and reflections, tagged with its episodes) must be droppable on
resume without touching the first build, and the second build must be a
complete build on its own, so ``formulate``, ``rules`` and ``lorekit run
--agent automanual --agent-opt manual=BUILD`` work on it unchanged. The first
build is only read.

Copied rows keep their ``seq`` (so rule versions mean the same in both
builds) and their ``episode_id`` (the first build's episode keys; the new build
keeps them as inherited episodes when it resumes).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from dataclasses import dataclass

from lorekit.agents.automanual.store import AutoManualStoreError, transaction

__all__ = ["COPIED_TABLES", "Copied", "copy_build"]

COPIED_TABLES = ("automanual_rule_events", "automanual_library", "automanual_manuals")


@dataclass(frozen=True, slots=True)
class Copied:
    """How many rows of each kind a :func:`copy_build` wrote (all zero: done before)."""

    rule_events: int
    library: int
    manuals: int


def _count(conn: sqlite3.Connection, table: str, build_id: str) -> int:
    row = conn.execute(f"SELECT count(*) FROM {table} WHERE build_id = ?", (build_id,)).fetchone()
    return int(row[0])


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")]


def copy_build(
    conn: sqlite3.Connection, source: str, target: str, *, episodes: Collection[str]
) -> Copied:
    """Copy ``source``'s rule events, library rows and manuals to ``target``, once.

    ``episodes`` are the episode keys the run store committed for ``source``:
    a row written by any other episode (one killed before it was committed)
    means ``source`` was never resumed after a crash, and nothing is copied.
    All rows go in one transaction; a ``target`` that already has rows of its
    own was copied before (the copy always comes first), so this does nothing.
    """
    if source == target:
        raise AutoManualStoreError(f"build {source!r} cannot start from itself")
    kept = set(episodes)
    with transaction(conn):
        if any(_count(conn, table, target) for table in COPIED_TABLES):
            return Copied(0, 0, 0)
        for table in COPIED_TABLES[:2]:
            stray = [
                str(ep)
                for (ep,) in conn.execute(
                    f"SELECT DISTINCT episode_id FROM {table} WHERE build_id = ?"
                    " AND episode_id IS NOT NULL",
                    (source,),
                )
                if ep not in kept
            ]
            if stray:
                raise AutoManualStoreError(
                    f"build {source!r} holds rows of episodes it never committed "
                    f"({', '.join(sorted(stray)[:3])}); resume it once with --run-id {source} "
                    "so they are dropped, then start from it"
                )
        counts = []
        for table in COPIED_TABLES:
            cols = [c for c in _columns(conn, table) if c != "build_id"]
            names = ", ".join(cols)
            cur = conn.execute(
                f"INSERT INTO {table} (build_id, {names})"
                f" SELECT ?, {names} FROM {table} WHERE build_id = ?",
                (target, source),
            )
            counts.append(cur.rowcount)
    return Copied(*counts)
