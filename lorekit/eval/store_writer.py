"""Buffering one episode and committing it whole: :class:`EpisodeWriter`.

Kept apart from :mod:`lorekit.eval.store` because it holds no connection: it
only collects rows in memory and hands them to the store in one call, which is
what makes a crashed episode leave no trace. Import it from
:mod:`lorekit.eval.store`, which re-exports it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Protocol

from lorekit.eval.store_schema import (
    CALL_COLUMN_NAMES,
    EPISODE_STATUSES,
    EpisodeRecord,
    StoreError,
    call_row,
    info_json,
    json_fallback,
)
from lorekit.llm.calls import CallRecord

_META_AT = CALL_COLUMN_NAMES.index("meta")


class EpisodeCommitter(Protocol):
    """Where a finished episode goes: the run store (:class:`~lorekit.eval.store.RunStore`),
    which writes it and its rows in one transaction. A protocol, so this module
    stays below the store that builds writers."""

    def _commit_episode(
        self, ep: EpisodeRecord, steps: list[tuple[Any, ...]], calls: list[tuple[Any, ...]]
    ) -> None: ...

    def _commit_calls(self, run_id: str, calls: list[tuple[Any, ...]]) -> None: ...


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
        store: EpisodeCommitter,
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
        self.live: Any = None  # the agent's trajectory while it plays, see attach()
        self._steps: list[tuple[Any, ...]] = []
        self._calls: list[tuple[Any, ...]] = []
        self._closed: str | None = None
        self.stopped: str | None = None
        """Why a call of this episode was refused before it was sent (a spending
        limit's ``call_meta["stopped"]``); such an episode is kept out of the run."""

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
        obs = observation if isinstance(observation, str) else json_fallback(observation)
        act = action if isinstance(action, str) else json_fallback(action)
        self._steps.append(
            (len(self._steps), obs, act, float(reward), int(bool(done)), info_json(info))
        )

    def add_llm_call(self, record: CallRecord) -> None:
        """Record one model call made during this episode (success or error)."""
        self._check_open()
        self._calls.append(call_row(record))
        if record.error is not None and record.meta.get("stopped"):
            self.stopped = self.stopped or str(record.meta["stopped"])

    __call__ = add_llm_call

    def keep_calls_only(self) -> int:
        """Store this episode's calls outside any episode (each naming it in its meta as
        ``deferred_episode``) and nothing else, so a resumed run plays the episode again
        while what it spent stays counted. Returns how many calls were kept."""
        self._check_open()
        calls = [self._deferred(row) for row in self._calls]
        if calls:
            self._store._commit_calls(self.run_id, calls)
        self._closed = "deferred"
        self._steps, self._calls = [], []
        return len(calls)

    def _deferred(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        at = _META_AT
        meta = json.loads(row[at]) if isinstance(row[at], str) else {}
        meta = meta if isinstance(meta, dict) else {}
        meta["deferred_episode"] = self.episode_key
        return (*row[:at], info_json(meta), *row[at + 1 :])

    def attach(self, trajectory: Any) -> None:
        """Keep a reference to the agent's live trajectory.

        ``Episode.start`` calls this, so when an exception ends the episode
        the harness can still store what the agent had built so far (an
        ADaPT decomposition tree, trials) instead of losing it with the stack.
        """
        self.live = trajectory

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
        if status not in EPISODE_STATUSES:
            raise StoreError(
                f"episode status must be one of {sorted(EPISODE_STATUSES)}, got {status!r}"
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
            json.loads(info_json(info)),
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
