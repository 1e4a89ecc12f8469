"""The read side of the run store: queries and the JSONL export.

Readers never write, so they live apart from the commit logic in
:mod:`lorekit.eval.store`; :class:`~lorekit.eval.store.RunStore` inherits them
from :class:`StoreReader`. A reader takes the same lock as a writer because the
one connection is shared across threads.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TextIO

from lorekit.eval.store_lock import Holder, holder, lock_path_for
from lorekit.eval.store_rows import call_dict, episode_record, run_info, step_record
from lorekit.eval.store_schema import (
    CALL_COLUMNS,
    USAGE_KEYS,
    EpisodeRecord,
    RunInfo,
    StepRecord,
    StoreError,
    UnknownRunError,
)


class StoreReader:
    """Read queries over an open run store connection (a mixin of ``RunStore``).

    The host sets ``path``, ``_lock`` and ``_conn`` in its ``__init__``; ``_conn``
    is None once the store is closed. ``_call_columns`` is the SELECT list of
    the call columns, with defaults for columns an older file lacks.
    """

    path: Path
    _lock: threading.RLock
    _conn: sqlite3.Connection | None
    _call_columns: str = CALL_COLUMNS
    _missing_call_columns: frozenset[str] = frozenset()

    # -- plumbing -------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the run store {self.path} is closed")
        return self._conn

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cur = self.conn.cursor()
            cur.row_factory = sqlite3.Row
            return cur.execute(sql, args).fetchall()

    def _require_run(self, run_id: str) -> None:
        if not self._query("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)):
            raise UnknownRunError(run_id, self.path)

    # -- runs -----------------------------------------------------------------

    def run_writer(self, run_id: str) -> Holder | None:
        """The process writing ``run_id`` now (this one included), or None."""
        return holder(lock_path_for(self.path, run_id))

    def run_status(self, run_id: str, recorded: str) -> str:
        """A run's status as a reader should show it: ``running`` only while a process
        writes it. A run left ``running`` by a killed process, or by one whose disk
        filled before it could record more, is ``interrupted`` (and resumable)."""
        if recorded == "running" and self.run_writer(run_id) is None:
            return "interrupted"
        return recorded

    def _run_info(self, row: sqlite3.Row) -> RunInfo:
        return run_info(self.path, row)

    def get_run(self, run_id: str) -> RunInfo | None:
        rows = self._query("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        return self._run_info(rows[0]) if rows else None

    def list_runs(self) -> list[RunInfo]:
        """All runs, newest first."""
        rows = self._query("SELECT * FROM runs ORDER BY created_at DESC, rowid DESC")
        return [self._run_info(r) for r in rows]

    # -- episodes, steps, calls -------------------------------------------------

    def episodes(self, run_id: str) -> list[EpisodeRecord]:
        """Finished episodes of a run, ordered by their index."""
        self._require_run(run_id)
        rows = self._query(
            "SELECT * FROM episodes WHERE run_id = ? ORDER BY idx, episode_key", (run_id,)
        )
        return [episode_record(self.path, r) for r in rows]

    def has_run(self, run_id: str) -> bool:
        """Whether the store holds ``run_id``, without reading its row (a damaged one too)."""
        return bool(self._query("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)))

    def episode_count(self, run_id: str) -> int:
        """How many episodes the run holds, without reading them (a damaged row too)."""
        self._require_run(run_id)
        return int(self._query("SELECT count(*) FROM episodes WHERE run_id = ?", (run_id,))[0][0])

    def steps(self, run_id: str, episode_key: str) -> list[StepRecord]:
        """Steps of one episode in order; empty for a key that never finished."""
        self._require_run(run_id)
        rows = self._query(
            "SELECT idx, observation, action, reward, done, info FROM steps "
            "WHERE run_id = ? AND episode_key = ? ORDER BY idx",
            (run_id, episode_key),
        )
        return [step_record(self.path, run_id, episode_key, r) for r in rows]

    def llm_calls(self, run_id: str, episode_key: str | None = None) -> list[dict[str, Any]]:
        """Model calls of one episode, or of the whole run (episodes and outside) when None."""
        self._require_run(run_id)
        sql = f"SELECT episode_key, idx, {self._call_columns} FROM llm_calls WHERE run_id = ?"
        args: tuple[Any, ...] = (run_id,)
        if episode_key is not None:
            sql += " AND episode_key = ?"
            args = (run_id, episode_key)
        return [call_dict(self.path, run_id, r) for r in self._query(sql + " ORDER BY id", args)]

    def usage_by_role(self, run_id: str) -> dict[str, dict[str, int]]:
        """Calls and tokens per agent role (keys: :data:`USAGE_KEYS`).

        Cache hits are counted but cost no tokens. Failed calls count the
        tokens the server billed for them, also summed apart in
        ``error_tokens``; ``estimated_calls`` counts calls whose tokens were
        estimated locally rather than reported by a server.
        """
        self._require_run(run_id)
        spent = "CASE WHEN cached THEN 0 ELSE {} END"
        estimated = "0" if "usage_estimated" in self._missing_call_columns else "usage_estimated"
        rows = self._query(
            "SELECT role, count(*), "
            f"coalesce(sum({spent.format('prompt_tokens')}), 0), "
            f"coalesce(sum({spent.format('completion_tokens')}), 0), "
            "coalesce(sum(cached), 0), count(error), "
            "coalesce(sum(CASE WHEN error IS NULL THEN 0 "
            "ELSE prompt_tokens + completion_tokens END), 0), "
            f"coalesce(sum({spent.format(estimated)}), 0) "
            "FROM llm_calls WHERE run_id = ? GROUP BY role ORDER BY role",
            (run_id,),
        )
        return {
            r[0]: dict(zip(USAGE_KEYS, (int(v) for v in tuple(r)[1:]), strict=True)) for r in rows
        }

    def refused_usage(self, run_id: str) -> tuple[int, str | None]:
        """How many calls of the run reported token counts that could not be counts
        (their tokens are estimates, see :mod:`lorekit.llm.counts`), and the first note."""
        rows = self._query(
            "SELECT meta FROM llm_calls WHERE run_id = ? AND meta LIKE '%\"usage_refused\"%' "
            "ORDER BY id",
            (run_id,),
        )
        notes = [_meta_note(r[0]) for r in rows]
        found = [n for n in notes if n]
        return len(found), (found[0] if found else None)

    def tokens_by_model(
        self, run_ids: Iterable[str], *, outside_episodes: bool = False
    ) -> dict[str, tuple[int, int]]:
        """Prompt and completion tokens spent per model over ``run_ids`` (runs the
        store does not hold count nothing). Cache hits cost nothing; failed calls
        count what was billed. This is what a spending limit watches.
        ``outside_episodes``: only the calls kept outside any episode (e.g. those of
        an episode a spending limit cut short, kept so their cost is not lost)."""
        ids = list(dict.fromkeys(run_ids))
        if not ids:
            return {}
        spent = "coalesce(sum(CASE WHEN cached THEN 0 ELSE {} END), 0)"
        only = " AND episode_key IS NULL" if outside_episodes else ""
        rows = self._query(
            f"SELECT model, {spent.format('prompt_tokens')}, {spent.format('completion_tokens')} "
            f"FROM llm_calls WHERE run_id IN ({', '.join('?' * len(ids))}){only} GROUP BY model",
            tuple(ids),
        )
        return {r[0]: (int(r[1]), int(r[2])) for r in rows}

    def models_answered(self, run_ids: Iterable[str]) -> list[dict[str, Any]]:
        """Who answered the calls of ``run_ids``: per role, the model requested, the
        model the server said it was (``served``; the requested one when it said
        nothing else) and the endpoint, with the number of calls; most calls first."""
        ids = list(dict.fromkeys(run_ids))
        if not ids:
            return []
        field = "CASE WHEN json_valid(meta) THEN json_extract(meta, '$.{}') END"
        served, endpoint = field.format("served_model"), field.format("endpoint")
        rows = self._query(
            f"SELECT role, model, {served}, {endpoint}, count(*) FROM llm_calls "
            f"WHERE run_id IN ({', '.join('?' * len(ids))}) AND error IS NULL "
            "GROUP BY 1, 2, 3, 4 ORDER BY 5 DESC, 1, 2",
            tuple(ids),
        )
        return [
            {
                "role": str(r[0]),
                "model": str(r[1]),
                "served": str(r[2]) if isinstance(r[2], str) and r[2] else str(r[1]),
                "endpoint": str(r[3]) if isinstance(r[3], str) and r[3] else None,
                "calls": int(r[4]),
            }
            for r in rows
        ]

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


def _meta_note(text: str | None) -> str | None:
    try:
        meta = json.loads(text or "{}")
    except (ValueError, RecursionError):
        return None
    note = meta.get("usage_refused") if isinstance(meta, dict) else None
    return str(note) if note else None


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
