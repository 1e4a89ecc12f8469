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
"""

from __future__ import annotations

import json
import math
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TextIO, get_args

from lorekit.llm.calls import CallRecord

SCHEMA_VERSION = 1
RunStatus = Literal["running", "finished", "interrupted"]
EpisodeStatus = Literal["success", "failure", "error"]
_RUN_STATUSES: frozenset[str] = frozenset(get_args(RunStatus))
_EPISODE_STATUSES: frozenset[str] = frozenset(get_args(EpisodeStatus))

_SCHEMA = """
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
    FOREIGN KEY (run_id, episode_key) REFERENCES episodes(run_id, episode_key) ON DELETE CASCADE
);
CREATE INDEX llm_calls_by_episode ON llm_calls(run_id, episode_key, idx);
"""
_CALL_COLUMNS = (
    "role, model, messages, params, answer, prompt_tokens, completion_tokens, "
    "latency_s, cached, error, started_at, meta"
)


class StoreError(Exception):
    """A run store cannot be used as asked (wrong file, closed, read-only, bad argument)."""


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


def _fallback(obj: object) -> str:
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
        return {_fallback(k): _sanitise(v, inner) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_sanitise(v, inner) for v in obj]
    return _fallback(obj)


def to_json(obj: object) -> str:
    """Serialise never failing: unknown objects become strings, odd keys become text."""
    try:
        return json.dumps(obj, default=_fallback, ensure_ascii=False)
    except (TypeError, ValueError):  # non-string keys, circular references
        return json.dumps(_sanitise(obj), default=_fallback, ensure_ascii=False)


def _info_json(info: Mapping[str, Any] | None) -> str:
    """JSON of an info mapping; a dict is passed as is so a cycle is cut where it closes."""
    if info is None:
        return "{}"
    return to_json(info if isinstance(info, dict) else dict(info))


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def new_run_id() -> str:
    """A sortable id a person can read and type: local time plus a random suffix."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


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


def _call_row(record: CallRecord) -> tuple[Any, ...]:
    """Flatten a call now, so later mutation of its meta cannot change what gets stored."""
    d = record.to_dict()
    meta = dict(d["meta"])
    if d.get("finish_reason") is not None:
        meta.setdefault("finish_reason", d["finish_reason"])
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
    )


class EpisodeWriter:
    """Buffers one episode in memory and commits it whole on :meth:`finish`.

    Nothing reaches the file before ``finish``, which is what makes a crash
    harmless: a half-played episode simply does not exist. The writer is also a
    ``CallSink`` (call it with a :class:`CallRecord`), so it can be plugged
    straight into a model wrapper. As a context manager it abandons the episode
    if the block leaves without finishing it.
    """

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        episode_key: str,
        *,
        index: int,
        task_id: str | None,
        task_group: str | None,
        seed: int | None,
    ) -> None:
        self._store = store
        self.run_id = run_id
        self.episode_key = episode_key
        self.index = index
        self.task_id = task_id
        self.task_group = task_group
        self.seed = seed
        self.started_at = time.time()
        self._t0 = time.monotonic()
        self._steps: list[tuple[Any, ...]] = []
        self._calls: list[tuple[Any, ...]] = []
        self._closed: str | None = None

    @property
    def step_count(self) -> int:
        return len(self._steps)

    @property
    def call_count(self) -> int:
        return len(self._calls)

    def _check_open(self) -> None:
        if self._closed is not None:
            raise StoreError(
                f"episode {self.episode_key!r} of run {self.run_id!r} is already {self._closed}"
            )

    def add_step(
        self,
        observation: str,
        action: str,
        reward: float = 0.0,
        done: bool = False,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        """Record one step; its index is its position in the episode."""
        self._check_open()
        obs = observation if isinstance(observation, str) else _fallback(observation)
        act = action if isinstance(action, str) else _fallback(action)
        self._steps.append(
            (len(self._steps), obs, act, float(reward), int(bool(done)), _info_json(info))
        )

    def add_llm_call(self, record: CallRecord) -> None:
        """Record one model call made during this episode (success or error)."""
        self._check_open()
        self._calls.append(_call_row(record))

    __call__ = add_llm_call

    def finish(
        self,
        *,
        success: bool,
        reward: float,
        status: str | None = None,
        error: str | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> EpisodeRecord:
        """Commit the episode, its steps and its calls in one transaction.

        ``status`` defaults to ``error`` when an error is given, else to
        ``success``/``failure``. An earlier copy of the same key is replaced.
        """
        self._check_open()
        if status is None:
            status = "error" if error is not None else ("success" if success else "failure")
        if status not in _EPISODE_STATUSES:
            raise StoreError(
                f"episode status must be one of {sorted(_EPISODE_STATUSES)}, got {status!r}"
            )
        wall = time.monotonic() - self._t0
        record = EpisodeRecord(
            self.run_id,
            self.episode_key,
            self.index,
            self.task_id,
            self.task_group,
            self.seed,
            status,
            bool(success),
            float(reward),
            len(self._steps),
            self.started_at,
            self.started_at + wall,
            wall,
            error,
            json.loads(_info_json(info)),
        )
        self._store._commit_episode(record, self._steps, self._calls)
        self._closed = "finished"
        self._steps, self._calls = [], []
        return record

    def abandon(self) -> None:
        """Drop everything buffered; the episode leaves no trace in the store."""
        if self._closed is None:
            self._closed = "abandoned"
        self._steps, self._calls = [], []

    def __enter__(self) -> EpisodeWriter:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.abandon()


class RunStore:
    """Runs, episodes, steps and model calls of evaluations, in one SQLite file.

    One instance holds one connection shared by every episode of a process
    (asyncio tasks or threads); a lock serialises its use. Other processes may
    open the same file at the same time, typically with :meth:`open_readonly`.
    """

    def __init__(self, path: str | Path, *, timeout_s: float = 30.0, _readonly: bool = False):
        self.path = Path(path)
        self.readonly = _readonly
        self._lock = threading.RLock()
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
                return
            with self._transaction():  # inside the write lock: two processes may race here
                if self._check_version(conn):
                    return
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot use {self.path} as a run store: {exc}") from exc

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
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables or self.readonly:
            raise StoreError(f"{self.path} is not a LoreKit run store (no schema version)")
        return False

    # -- plumbing -------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the run store {self.path} is closed")
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE takes the write lock up front, so a busy file waits, not fails."""
        if self.readonly:
            raise StoreError(f"the run store {self.path} was opened read-only")
        with self._lock:
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:  # SQLite may have rolled back already (disk full)
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cur = self.conn.cursor()
            cur.row_factory = sqlite3.Row
            return cur.execute(sql, args).fetchall()

    def _require_run(self, run_id: str) -> None:
        if not self._query("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)):
            raise UnknownRunError(run_id, self.path)

    def close(self) -> None:
        """Close the connection; safe to call twice."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

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
                continue  # a generated id collided: draw another
            if tuple(row) == (env, agent):
                return rid
            raise RunMismatchError(
                f"run {rid!r} in {self.path} is env={row[0]!r} agent={row[1]!r}; cannot resume it "
                f"as env={env!r} agent={agent!r} (choose another run id)"
            )
        raise StoreError(f"could not draw a fresh run id in {self.path}")  # pragma: no cover

    @staticmethod
    def _run_info(row: sqlite3.Row) -> RunInfo:
        return RunInfo(
            row["run_id"],
            row["created_at"],
            row["updated_at"],
            row["status"],
            row["env"],
            row["agent"],
            _loads(row["config"]),
            _loads(row["meta"]),
            _loads(row["summary"]),
        )

    def get_run(self, run_id: str) -> RunInfo | None:
        rows = self._query("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        return self._run_info(rows[0]) if rows else None

    def list_runs(self) -> list[RunInfo]:
        """All runs, newest first."""
        rows = self._query("SELECT * FROM runs ORDER BY created_at DESC, rowid DESC")
        return [self._run_info(r) for r in rows]

    def set_run_status(
        self, run_id: str, status: str, summary: Mapping[str, Any] | None = None
    ) -> None:
        """Mark a run running/finished/interrupted; a given summary replaces the old one."""
        if status not in _RUN_STATUSES:
            raise StoreError(f"run status must be one of {sorted(_RUN_STATUSES)}, got {status!r}")
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
                ),
            )
            conn.executemany(
                "INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [(*key, *s) for s in steps]
            )
            conn.executemany(
                f"INSERT INTO llm_calls (run_id, episode_key, idx, {_CALL_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(*key, i, *c) for i, c in enumerate(calls)],
            )
            conn.execute(
                "UPDATE runs SET updated_at = ? WHERE run_id = ?", (time.time(), ep.run_id)
            )

    def add_run_llm_call(self, run_id: str, record: CallRecord) -> None:
        """Record a model call made outside any episode (e.g. a ``models check``)."""
        row = _call_row(record)
        with self._transaction() as conn:
            if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
                raise UnknownRunError(run_id, self.path)
            idx = conn.execute(
                "SELECT coalesce(max(idx), -1) + 1 FROM llm_calls "
                "WHERE run_id = ? AND episode_key IS NULL",
                (run_id,),
            ).fetchone()[0]
            conn.execute(
                f"INSERT INTO llm_calls (run_id, episode_key, idx, {_CALL_COLUMNS}) "
                "VALUES (?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, idx, *row),
            )

    # -- readers --------------------------------------------------------------

    def episodes(self, run_id: str) -> list[EpisodeRecord]:
        """Finished episodes of a run, ordered by their index."""
        self._require_run(run_id)
        rows = self._query(
            "SELECT * FROM episodes WHERE run_id = ? ORDER BY idx, episode_key", (run_id,)
        )
        return [
            EpisodeRecord(
                r["run_id"],
                r["episode_key"],
                r["idx"],
                r["task_id"],
                r["task_group"],
                r["seed"],
                r["status"],
                bool(r["success"]),
                r["reward"],
                r["steps"],
                r["started_at"],
                r["ended_at"],
                r["wall_s"],
                r["error"],
                _loads(r["info"]),
            )
            for r in rows
        ]

    def steps(self, run_id: str, episode_key: str) -> list[StepRecord]:
        """Steps of one episode in order; empty for a key that never finished."""
        self._require_run(run_id)
        rows = self._query(
            "SELECT idx, observation, action, reward, done, info FROM steps "
            "WHERE run_id = ? AND episode_key = ? ORDER BY idx",
            (run_id, episode_key),
        )
        return [StepRecord(r[0], r[1], r[2], r[3], bool(r[4]), _loads(r[5])) for r in rows]

    def llm_calls(self, run_id: str, episode_key: str | None = None) -> list[dict[str, Any]]:
        """Model calls of one episode, or of the whole run (episodes and outside) when None."""
        self._require_run(run_id)
        sql = f"SELECT episode_key, idx, {_CALL_COLUMNS} FROM llm_calls WHERE run_id = ?"
        args: tuple[Any, ...] = (run_id,)
        if episode_key is not None:
            sql += " AND episode_key = ?"
            args = (run_id, episode_key)
        out = []
        for r in self._query(sql + " ORDER BY id", args):
            d = dict(r)
            for name in ("messages", "params", "meta"):
                d[name] = _loads(d[name])
            d["cached"] = bool(d["cached"])
            out.append(d)
        return out

    def usage_by_role(self, run_id: str) -> dict[str, dict[str, int]]:
        """Calls and tokens per agent role; cache hits are counted but cost no tokens."""
        self._require_run(run_id)
        rows = self._query(
            "SELECT role, count(*), "
            "coalesce(sum(CASE WHEN cached THEN 0 ELSE prompt_tokens END), 0), "
            "coalesce(sum(CASE WHEN cached THEN 0 ELSE completion_tokens END), 0), "
            "coalesce(sum(cached), 0), count(error) "
            "FROM llm_calls WHERE run_id = ? GROUP BY role ORDER BY role",
            (run_id,),
        )
        keys = ("calls", "prompt_tokens", "completion_tokens", "cache_hits", "errors")
        return {r[0]: dict(zip(keys, (int(v) for v in tuple(r)[1:]), strict=True)) for r in rows}

    def export_jsonl(self, run_id: str, out: TextIO) -> int:
        """Write the run as JSON lines; returns the number of lines written.

        First a ``{"type": "run"}`` line, then one ``{"type": "episode"}`` line per
        episode (by index) with its ``steps`` and ``llm_calls`` inlined and the step
        count under ``step_count``, and last, only if there are any, a
        ``{"type": "run_llm_calls"}`` line with the calls made outside episodes.
        """
        run = self.get_run(run_id)
        if run is None:
            raise UnknownRunError(run_id, self.path)
        out.write(_line({"type": "run", **run.to_dict()}))
        calls: dict[str | None, list[dict[str, Any]]] = {}
        for call in self.llm_calls(run_id):
            calls.setdefault(call.pop("episode_key"), []).append(call)
        n = 1
        for ep in self.episodes(run_id):
            line = {"type": "episode", **ep.to_dict()}
            line["step_count"] = line.pop("steps")  # the name "steps" holds the list below
            line["steps"] = [s.to_dict() for s in self.steps(run_id, ep.episode_key)]
            line["llm_calls"] = calls.get(ep.episode_key, [])
            out.write(_line(line))
            n += 1
        if None in calls:
            out.write(_line({"type": "run_llm_calls", "run_id": run_id, "llm_calls": calls[None]}))
            n += 1
        return n


def _line(obj: Mapping[str, Any]) -> str:
    """One JSONL line; non-finite floats become null so every line is strict JSON."""
    return json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False) + "\n"


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj
