"""The run store: everything an evaluation does, in one SQLite file.

Why SQLite in WAL mode: a run is written by one process (many asyncio episodes
sharing one connection) while the CLI reads progress from another process; WAL
lets readers see every committed episode without blocking the writer. Why whole
episodes in one transaction: an episode is buffered in memory by
:class:`EpisodeWriter` and committed with its steps and model calls at once, so a
crash (even SIGKILL) leaves either the complete episode or no trace of it, and
resuming a run only has to skip the keys that :meth:`RunStore.finished_episode_keys`
reports. ``synchronous=NORMAL`` keeps commits cheap; with WAL it can lose the last
commits on power loss, never on a process crash, and never corrupts the file.

Layout: the schema, errors and record types live in :mod:`.store_schema`, the
episode buffer in :mod:`.store_writer` and the queries and export in
:mod:`.store_read`; this module holds the connection and every write, and
re-exports the public names so callers import them all from here.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from lorekit.eval.store_lock import RunLocking
from lorekit.eval.store_read import StoreReader
from lorekit.eval.store_schema import (
    ADDED_CALL_COLUMNS,
    CALL_COLUMNS,
    CALL_PLACEHOLDERS,
    RUN_STATUSES,
    SCHEMA_SQL,
    SCHEMA_VERSION,
    EpisodeRecord,
    EpisodeStatus,
    RunInfo,
    RunMismatchError,
    RunStatus,
    SchemaVersionError,
    StepRecord,
    StoreError,
    StoreWriteError,
    UnknownRunError,
    call_row,
    call_select,
    to_json,
    write_failure,
)
from lorekit.eval.store_writer import EpisodeWriter
from lorekit.ids import new_run_id
from lorekit.llm.calls import CallRecord
from lorekit.registry import REGISTRY, StoreTables
from lorekit.textsafe import storable_row

__all__ = [
    "SCHEMA_VERSION",
    "EpisodeRecord",
    "EpisodeStatus",
    "EpisodeWriter",
    "RunInfo",
    "RunMismatchError",
    "RunStatus",
    "RunStore",
    "SchemaVersionError",
    "StepRecord",
    "StoreError",
    "StoreWriteError",
    "UnknownRunError",
    "new_run_id",
    "to_json",
]


class RunStore(RunLocking, StoreReader):
    """Runs, episodes, steps and model calls of evaluations, in one SQLite file.

    One instance holds one connection shared by every episode of a process
    (asyncio tasks or threads); a lock serialises its use. Other processes may
    open the same file at the same time, typically with :meth:`open_readonly`.
    """

    def __init__(self, path: str | Path, *, timeout_s: float = 30.0, _readonly: bool = False):
        self.path = Path(path)
        self.readonly = _readonly
        self._lock = threading.RLock()
        self._run_locks: set[str] = set()
        self.last_writer = {}
        try:
            if _readonly:
                uri = self.path.resolve().as_uri() + "?mode=ro"
                conn = sqlite3.connect(
                    uri, uri=True, timeout=timeout_s, check_same_thread=False, isolation_level=None
                )
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(
                    self.path, timeout=timeout_s, check_same_thread=False, isolation_level=None
                )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the run store {self.path}: {exc}") from exc
        self._conn: sqlite3.Connection | None = conn
        try:
            self._setup(conn, timeout_s)
        except BaseException:
            conn.close()
            self._conn = None
            raise

    @classmethod
    def open_readonly(cls, path: str | Path, *, timeout_s: float = 30.0) -> RunStore:
        """Open an existing store for reading (the CLI), safe while a run writes to it."""
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"no run store at {p}")
        return cls(p, timeout_s=timeout_s, _readonly=True)

    def _setup(self, conn: sqlite3.Connection, timeout_s: float) -> None:
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            if self.readonly:
                conn.execute("PRAGMA query_only = ON")
            else:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
            if self.readonly:
                self._check_version(conn)
            else:
                with self._transaction():  # inside the write lock: two processes may race here
                    if self._check_version(conn):
                        self._add_missing_columns(conn)
                    else:
                        for statement in SCHEMA_SQL.split(";"):
                            if statement.strip():
                                conn.execute(statement)
                        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            present = self._columns(conn, "llm_calls")
            self._call_columns = call_select(present)
            self._missing_call_columns = frozenset(ADDED_CALL_COLUMNS) - present
        except sqlite3.DatabaseError as exc:
            failure = write_failure(self.path, exc)  # a full disk, not a wrong file
            raise failure or StoreError(f"cannot use {self.path} as a run store: {exc}") from exc

    @staticmethod
    def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
        return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}

    def _add_missing_columns(self, conn: sqlite3.Connection) -> None:
        """Bring a file written before an additive column existed up to date, in place."""
        present = self._columns(conn, "llm_calls")
        for name, (decl, _) in ADDED_CALL_COLUMNS.items():
            if name not in present:
                conn.execute(f"ALTER TABLE llm_calls ADD COLUMN {name} {decl}")

    def _check_version(self, conn: sqlite3.Connection) -> bool:
        """True when the schema is current, False when the file is empty and needs one."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"the run store {self.path} has schema version {version}, but this LoreKit "
                f"reads up to version {SCHEMA_VERSION}; upgrade LoreKit to read it"
            )
        if version == SCHEMA_VERSION:
            return True
        # Plugins' own tables (registered with ``add_tables``) may share the file and
        # may have been created first: a file of only those is still an empty store.
        owned = plugin_tables()
        names = [row[0] for row in conn.execute("SELECT tbl_name FROM sqlite_master")]
        tables = [n for n in names if not any(n.startswith(t.prefix) for t in owned)]
        if tables or self.readonly:
            raise StoreError(f"{self.path} is not a LoreKit run store (no schema version)")
        return False

    def delete_run(self, run_id: str) -> dict[str, int]:
        """Remove a run with its episodes, steps and model calls, and the rows other
        tables of the file keep for it: by their column ``run_id``, or for a plugin's
        registered tables by the column it named (AutoManual's rules: ``build_id``).
        Returns the rows removed per table."""
        self._require_run(run_id)
        self.lock_run(run_id)  # never under a process that is writing the run
        removed: dict[str, int] = {}
        with self._transaction() as conn:
            tables = [
                row[0]
                for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            order = ["llm_calls", "steps", "episodes"]
            others = [t for t in tables if t not in (*order, "runs")]
            owned = plugin_tables()
            for table in [*order, *others]:
                quoted = '"' + table.replace('"', '""') + '"'
                columns = {c[1] for c in conn.execute(f"PRAGMA table_info({quoted})")}
                owner = next((t for t in owned if table.startswith(t.prefix)), None)
                column = "run_id" if owner is None else owner.run_column
                if column not in columns:
                    continue
                where = '"' + column.replace('"', '""') + '"'
                cur = conn.execute(f"DELETE FROM {quoted} WHERE {where} = ?", (run_id,))
                if cur.rowcount:
                    removed[table] = cur.rowcount
            cur = conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
            removed["runs"] = cur.rowcount
        return removed

    # -- plumbing -------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE takes the write lock up front, so a busy file waits, not fails."""
        if self.readonly:
            raise StoreError(f"the run store {self.path} was opened read-only")
        with self._lock:
            conn = self.conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    if conn.in_transaction:  # SQLite may have rolled back already (disk full)
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except (sqlite3.OperationalError, OSError) as exc:
                failure = write_failure(self.path, exc)
                if failure is None:
                    raise
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise failure from exc

    def close(self) -> None:
        """Close the connection and give back the runs it locked; safe to call twice."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._release_runs()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- runs -----------------------------------------------------------------

    def create_run(
        self,
        run_id: str | None = None,
        *,
        env: str,
        agent: str,
        config: Mapping[str, Any],
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        """Create a run, or return an existing one with the same env and agent (resume)."""
        if run_id is not None and (not isinstance(run_id, str) or not run_id.strip()):
            raise StoreError(f"run_id must be a non-empty string, got {run_id!r}")
        for _ in range(100):
            rid = run_id if run_id is not None else new_run_id()
            self.lock_run(rid)  # before anything is read or written: one writer per run
            with self._transaction() as conn:
                sql = "SELECT env, agent FROM runs WHERE run_id = ?"
                row = conn.execute(sql, (rid,)).fetchone()
                if row is None:
                    now = time.time()
                    conn.execute(
                        "INSERT INTO runs VALUES (?, ?, ?, 'running', ?, ?, ?, ?, NULL)",
                        (
                            rid,
                            now,
                            now,
                            env,
                            agent,
                            to_json(dict(config)),
                            to_json(dict(meta or {})),
                        ),
                    )
                    return rid
            if run_id is None:
                self._release_runs(rid)
                continue  # a generated id collided: draw another
            if tuple(row) == (env, agent):
                return rid
            self._release_runs(rid)
            raise RunMismatchError(
                f"run {rid!r} in {self.path} is env={row[0]!r} agent={row[1]!r}; cannot resume it "
                f"as env={env!r} agent={agent!r} (choose another run id)"
            )
        raise StoreError(f"could not draw a fresh run id in {self.path}")  # pragma: no cover

    def set_run_status(
        self, run_id: str, status: str, summary: Mapping[str, Any] | None = None
    ) -> None:
        """Mark a run running/finished/interrupted; a given summary replaces the old one."""
        if status not in RUN_STATUSES:
            raise StoreError(f"run status must be one of {sorted(RUN_STATUSES)}, got {status!r}")
        with self._transaction() as conn:
            cur = conn.execute(
                "UPDATE runs SET status = ?, updated_at = ?, summary = coalesce(?, summary) "
                "WHERE run_id = ?",
                (status, time.time(), None if summary is None else to_json(dict(summary)), run_id),
            )
            if cur.rowcount == 0:
                raise UnknownRunError(run_id, self.path)

    # -- episodes -------------------------------------------------------------

    def finished_episode_keys(self, run_id: str, *, include_errors: bool = True) -> set[str]:
        """Keys a resumed run may skip; pass ``include_errors=False`` to retry errored ones."""
        self._require_run(run_id)
        sql = "SELECT episode_key FROM episodes WHERE run_id = ?"
        if not include_errors:
            sql += " AND status != 'error'"
        return {r[0] for r in self._query(sql, (run_id,))}

    def episode(
        self,
        run_id: str,
        episode_key: str,
        *,
        index: int,
        task_id: str | None = None,
        task_group: str | None = None,
        seed: int | None = None,
    ) -> EpisodeWriter:
        """Start buffering an episode; nothing is written until its ``finish``."""
        if self.readonly:
            raise StoreError(f"the run store {self.path} was opened read-only")
        self._require_run(run_id)
        return EpisodeWriter(
            self,
            run_id,
            episode_key,
            index=index,
            task_id=task_id,
            task_group=task_group,
            seed=seed,
        )

    def _commit_episode(
        self, ep: EpisodeRecord, steps: list[tuple[Any, ...]], calls: list[tuple[Any, ...]]
    ) -> None:
        key = (ep.run_id, ep.episode_key)
        with self._transaction() as conn:
            conn.execute("DELETE FROM llm_calls WHERE run_id = ? AND episode_key = ?", key)
            conn.execute("DELETE FROM steps WHERE run_id = ? AND episode_key = ?", key)
            conn.execute("DELETE FROM episodes WHERE run_id = ? AND episode_key = ?", key)
            conn.execute(
                "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                storable_row(
                    (
                        *key,
                        ep.index,
                        ep.task_id,
                        ep.task_group,
                        ep.seed,
                        ep.status,
                        int(ep.success),
                        ep.reward,
                        ep.steps,
                        ep.started_at,
                        ep.ended_at,
                        ep.wall_s,
                        ep.error,
                        to_json(ep.info),
                    )
                ),
            )
            conn.executemany(
                "INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [storable_row((*key, *s)) for s in steps],
            )
            conn.executemany(
                f"INSERT INTO llm_calls (run_id, episode_key, idx, {CALL_COLUMNS}) "
                f"VALUES (?, ?, ?, {CALL_PLACEHOLDERS})",
                [storable_row((*key, i, *c)) for i, c in enumerate(calls)],
            )
            conn.execute(
                "UPDATE runs SET updated_at = ? WHERE run_id = ?", (time.time(), ep.run_id)
            )

    def _commit_calls(self, run_id: str, calls: list[tuple[Any, ...]]) -> None:
        """Keep flattened calls outside any episode, in one transaction (what an
        episode a spending limit cut short had spent: it is not stored, its cost is)."""
        with self._transaction() as conn:
            idx = conn.execute(
                "SELECT coalesce(max(idx), -1) + 1 FROM llm_calls "
                "WHERE run_id = ? AND episode_key IS NULL",
                (run_id,),
            ).fetchone()[0]
            conn.executemany(
                f"INSERT INTO llm_calls (run_id, episode_key, idx, {CALL_COLUMNS}) "
                f"VALUES (?, NULL, ?, {CALL_PLACEHOLDERS})",
                [storable_row((run_id, idx + i, *c)) for i, c in enumerate(calls)],
            )

    def add_run_llm_call(self, run_id: str, record: CallRecord) -> None:
        """Record a model call made outside any episode (e.g. a ``models check``)."""
        row = call_row(record)
        with self._transaction() as conn:
            if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
                raise UnknownRunError(run_id, self.path)
            idx = conn.execute(
                "SELECT coalesce(max(idx), -1) + 1 FROM llm_calls "
                "WHERE run_id = ? AND episode_key IS NULL",
                (run_id,),
            ).fetchone()[0]
            conn.execute(
                f"INSERT INTO llm_calls (run_id, episode_key, idx, {CALL_COLUMNS}) "
                f"VALUES (?, NULL, ?, {CALL_PLACEHOLDERS})",
                storable_row((run_id, idx, *row)),
            )


def plugin_tables() -> list[StoreTables]:
    """The tables plugins keep in the store's file (:meth:`Registry.add_tables`), longest
    prefix first, so a table is counted as its most particular owner's."""
    tables = [e.target for e in REGISTRY.entries("tables") if isinstance(e.target, StoreTables)]
    return sorted(tables, key=lambda t: -len(t.prefix))
