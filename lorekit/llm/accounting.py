"""Usage and cost accounting, per run and per role.

``MeteredLLM`` is the outermost wrapper of a role's model: it sees every call,
including cache hits, so it can count them apart. Cache hits add to
``cache_hits`` but not to tokens or cost, because nothing was spent on them.
Failed calls count what the server billed for them (an answer cut off at
``max_tokens`` costs as much as a good one): their tokens are in the totals
and, apart, in ``error_tokens``. Calls whose counts were estimated locally
are counted in ``estimated_calls`` so reports can mark their totals.
Each finished call is also handed to an optional sink (the run store's
episode writer), which is how every LLM call ends up recorded.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from lorekit.llm.base import (
    DEFAULT_PARAMS,
    LLM,
    Completion,
    MessageLike,
    RequestParams,
    Usage,
    as_messages,
)
from lorekit.llm.calls import CallRecord, CallSink
from lorekit.llm.errors import LLMError


def tokens_label(tokens: int, estimated: bool) -> str:
    """A token count for people: ``1,234``, or ``~1,234`` when any of it is an estimate."""
    return f"{'~' if estimated else ''}{tokens:,}"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    prompt: float = 0.0
    completion: float = 0.0

    def __post_init__(self) -> None:
        if self.prompt < 0 or self.completion < 0:
            raise ValueError(f"prices must be >= 0, got {self.prompt}, {self.completion}")

    def cost(self, usage: Usage) -> float:
        return (usage.prompt_tokens * self.prompt + usage.completion_tokens * self.completion) / 1e6


PriceTable = Mapping[str, Price]
"""Prices by model name."""


@dataclass(slots=True)
class RoleUsage:
    """What one role spent. Tokens and cost exclude cache hits and include the
    billed tokens of failed calls (also counted apart in ``error_tokens``).
    ``estimated_calls`` counts calls whose tokens were estimated, not reported."""

    calls: int = 0
    errors: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error_tokens: int = 0
    estimated_calls: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def tokens_text(self) -> str:
        """Total tokens for display, marked ``~`` when any call's count is an estimate."""
        return tokens_label(self.total_tokens, self.estimated_calls > 0)

    def add(self, other: RoleUsage) -> None:
        self.calls += other.calls
        self.errors += other.errors
        self.cache_hits += other.cache_hits
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.error_tokens += other.error_tokens
        self.estimated_calls += other.estimated_calls
        self.cost_usd += other.cost_usd
        self.latency_s += other.latency_s

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_tokens": self.total_tokens}


class UsageLedger:
    """Totals per role for one run (or one episode). Not thread-safe by
    design: it is updated from the event loop thread only."""

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.prices: dict[str, Price] = dict(prices or {})
        self.by_role: dict[str, RoleUsage] = {}

    def record(
        self,
        role: str,
        model: str,
        completion: Completion | None,
        latency_s: float,
        *,
        billed: Usage | None = None,
    ) -> None:
        """Count one call. ``completion`` is None for a failed call, whose
        ``billed`` usage (the error's, if the server charged for it) is counted."""
        row = self.by_role.get(role)
        if row is None:
            row = self.by_role[role] = RoleUsage()
        row.calls += 1
        row.latency_s += latency_s
        if completion is None:
            row.errors += 1
            if billed is not None:
                self._spend(row, model, billed)
                row.error_tokens += billed.total_tokens
        elif completion.cached:
            row.cache_hits += 1
        else:
            self._spend(row, model, completion.usage)

    def _spend(self, row: RoleUsage, model: str, usage: Usage) -> None:
        row.prompt_tokens += usage.prompt_tokens
        row.completion_tokens += usage.completion_tokens
        row.estimated_calls += int(usage.estimated)
        price = self.prices.get(model)
        if price is not None:
            row.cost_usd += price.cost(usage)

    def merge(self, other: UsageLedger) -> None:
        """Add another ledger's rows (an episode's) into this one (the run's)."""
        for role, row in other.by_role.items():
            self.by_role.setdefault(role, RoleUsage()).add(row)

    def total(self) -> RoleUsage:
        out = RoleUsage()
        for row in self.by_role.values():
            out.add(row)
        return out

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {role: row.to_dict() for role, row in sorted(self.by_role.items())}


def endpoint_of(llm: object, depth: int = 8) -> str | None:
    """The base URL ``llm``'s requests go to: its own ``endpoint``, or that of the model
    it wraps (wrappers keep theirs in ``inner``); None for a model with no endpoint."""
    for _ in range(depth):
        endpoint = getattr(llm, "endpoint", None)
        if isinstance(endpoint, str) and endpoint:
            return endpoint
        llm = getattr(llm, "inner", None)
        if llm is None:
            return None
    return None


class MeteredLLM:
    """Counts a role's calls into a ledger and hands each call to a sink.

    Each record's ``meta`` names the endpoint the request went to and, when the
    server answered as another model than the one requested (an alias, a served
    checkpoint), the ``served_model``: a run names the model that answered, not
    only the one its config asked for."""

    def __init__(
        self,
        inner: LLM,
        role: str,
        ledger: UsageLedger | None = None,
        sink: CallSink | None = None,
    ) -> None:
        self.inner = inner
        self.role = role
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.sink = sink
        endpoint = endpoint_of(inner)
        self._where: dict[str, Any] = {"endpoint": endpoint} if endpoint else {}

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(
        self, messages: Sequence[MessageLike] | str, params: RequestParams | None = None
    ) -> Completion:
        msgs = as_messages(messages)
        params = params if params is not None else DEFAULT_PARAMS
        started = time.time()
        t0 = time.perf_counter()
        try:
            out = await self.inner.complete(msgs, params=params)
        except Exception as exc:
            latency = time.perf_counter() - t0
            billed = exc.usage if isinstance(exc, LLMError) else None
            self.ledger.record(self.role, self.model, None, latency, billed=billed)
            if self.sink is not None:
                error = f"{type(exc).__name__}: {exc}"
                meta = {**self._where, **dict(getattr(exc, "call_meta", None) or {})}
                self.sink(
                    CallRecord(
                        self.role,
                        self.model,
                        msgs,
                        params,
                        started,
                        latency,
                        None,
                        error,
                        meta=meta,
                        error_usage=billed,
                    )
                )
            raise
        latency = time.perf_counter() - t0
        self.ledger.record(self.role, self.model, out, latency)
        if self.sink is not None:
            meta = dict(self._where)
            if out.model and out.model != self.model:
                meta["served_model"] = out.model
            self.sink(
                CallRecord(self.role, self.model, msgs, params, started, latency, out, meta=meta)
            )
        return out
