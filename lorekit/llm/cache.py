"""A SQLite cache of model answers, keyed by the canonical request.

Why: re-running an evaluation should not pay for the same calls twice, and a
recorded run should replay bit for bit without a server. The key is a SHA-256
of the canonical JSON of (model, messages, parameters, sample), so two
requests that differ only in ``sample`` are cached apart: that is how a caller
asks for several independent draws at temperature > 0.

Modes:
- ``read-write``: hits answer from the cache, misses call the model and store.
- ``replay``: hits answer from the cache, a miss raises :class:`CacheMiss`.
- ``off``: every call goes to the model; nothing is read or written.

Identical requests made concurrently share one model call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, get_args

from lorekit.llm.base import (
    DEFAULT_PARAMS,
    LLM,
    Completion,
    Message,
    MessageLike,
    RequestParams,
    Usage,
    as_messages,
)
from lorekit.llm.errors import CacheMiss, LLMError
from lorekit.textsafe import storable_row

CacheMode = Literal["read-write", "replay", "off"]
CACHE_MODES: tuple[str, ...] = get_args(CacheMode)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    finish_reason TEXT,
    latency_s REAL NOT NULL,
    created_at REAL NOT NULL,
    usage_estimated INTEGER NOT NULL DEFAULT 0
)
"""
_ADDED_COLUMNS = {"usage_estimated": "INTEGER NOT NULL DEFAULT 0"}
"""Columns newer than the first cache files; added in place when missing."""


def request_json(model: str, messages: Sequence[Message], params: RequestParams) -> str:
    """The canonical JSON text of a request: sorted keys, no spaces."""
    body = {
        "model": model,
        "messages": [m.to_dict() for m in messages],
        "params": params.to_dict(),
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(model: str, messages: Sequence[Message], params: RequestParams) -> str:
    """The cache key of a request (hex SHA-256 of its canonical JSON)."""
    # surrogatepass: a prompt may quote a model answer holding a lone surrogate
    return hashlib.sha256(
        request_json(model, messages, params).encode("utf-8", "surrogatepass")
    ).hexdigest()


class SQLiteCache:
    """The storage half of the cache: a SQLite file (WAL), safe to share
    between processes and between the coroutines of one process."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            str(self.path), check_same_thread=False, isolation_level=None, timeout=30.0
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        present = {row[1] for row in self._db.execute("PRAGMA table_info(completions)")}
        for name, decl in _ADDED_COLUMNS.items():
            if name not in present:
                self._db.execute(f"ALTER TABLE completions ADD COLUMN {name} {decl}")

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens, model, latency_s, finish_reason,"
                " usage_estimated FROM completions WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        text, pt, ct, model, latency, finish, estimated = row
        return Completion(text, Usage(pt, ct, bool(estimated)), model, latency, True, finish)

    def put(self, key: str, request: str, completion: Completion) -> None:
        c = completion
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO completions (key, model, request, text, prompt_tokens,"
                " completion_tokens, finish_reason, latency_s, created_at, usage_estimated)"
                " VALUES (?,?,?,?,?,?,?,?,?,?)",
                storable_row(
                    (
                        key,
                        c.model,
                        request,
                        c.text,
                        c.usage.prompt_tokens,
                        c.usage.completion_tokens,
                        c.finish_reason,
                        c.latency_s,
                        time.time(),
                        int(c.usage.estimated),
                    )
                ),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedLLM:
    """Wraps a model with a :class:`SQLiteCache`. Hits come back with
    ``cached=True`` and the usage of the original call."""

    def __init__(
        self, inner: LLM, cache: SQLiteCache | str | Path, mode: CacheMode = "read-write"
    ) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode must be one of {CACHE_MODES}, got {mode!r}")
        self.inner = inner
        self.cache = cache if isinstance(cache, SQLiteCache) else SQLiteCache(cache)
        self.mode: CacheMode = mode
        self.hits = 0
        self.misses = 0
        self._pending: dict[str, asyncio.Future[Completion]] = {}

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(
        self, messages: Sequence[MessageLike] | str, params: RequestParams | None = None
    ) -> Completion:
        params = params if params is not None else DEFAULT_PARAMS
        if self.mode == "off":
            return await self.inner.complete(messages, params=params)
        msgs = as_messages(messages)
        body = request_json(self.model, msgs, params)
        key = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            return hit
        if self.mode == "replay":
            self.misses += 1
            raise CacheMiss(
                f"replay mode has no recorded answer for request {key[:12]} "
                f"(last message: {msgs[-1].content[:80]!r})",
                model=self.model,
                endpoint=str(self.cache.path),
            )
        pending = self._pending.get(key)
        if pending is not None:
            # Someone is already asking exactly this; share their answer. If the
            # leader was cancelled, this caller was not: it asks for itself.
            try:
                done = await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise
            except LLMError as exc:
                # The leader's caller is billed for the failed request; a
                # follower only shared it and must not count its tokens again.
                raise exc.without_usage() from None
            else:
                self.hits += 1
                return Completion(
                    done.text, done.usage, done.model, done.latency_s, True, done.finish_reason
                )
            return await self.complete(msgs, params=params)
        self.misses += 1
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            out = await self.inner.complete(msgs, params=params)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: there may be no followers
            raise
        finally:
            del self._pending[key]
        future.set_result(out)
        self.cache.put(key, body, out)
        return out
