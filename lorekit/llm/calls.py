"""A record of one model call, for the run store and for accounting.

The model layer knows nothing of stores or episodes; it hands a
:class:`CallRecord` to whatever sink the caller plugged in (a ``CallSink``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lorekit.llm.base import Completion, Message, RequestParams, Usage


@dataclass(frozen=True, slots=True)
class CallRecord:
    """Everything about one ``complete`` call: what was asked, what came back.

    Exactly one of ``completion`` and ``error`` is set. ``error`` is the
    rendered message of the exception (type name first), so a record stays
    plain data that serialises without the exception object. A failed call
    may still have cost tokens (an answer cut off before any text is billed):
    ``error_usage`` holds them, and :attr:`usage` reports them.
    """

    role: str
    model: str
    messages: tuple[Message, ...]
    params: RequestParams
    started_at: float
    latency_s: float
    completion: Completion | None = None
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    error_usage: Usage | None = None

    @property
    def ok(self) -> bool:
        return self.completion is not None

    @property
    def cached(self) -> bool:
        return self.completion is not None and self.completion.cached

    @property
    def usage(self) -> Usage:
        """Tokens of the answer, or those billed for a failed call (zero if none)."""
        if self.completion is not None:
            return self.completion.usage
        return self.error_usage if self.error_usage is not None else Usage()

    def to_dict(self) -> dict[str, Any]:
        c = self.completion
        u = self.usage
        return {
            "role": self.role,
            "model": self.model,
            "messages": [m.to_dict() for m in self.messages],
            "params": self.params.to_dict(),
            "started_at": self.started_at,
            "latency_s": self.latency_s,
            "answer": c.text if c is not None else None,
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "usage_estimated": u.estimated,
            "usage_refused": u.refused,
            "cached": self.cached,
            "finish_reason": c.finish_reason if c is not None else None,
            "error": self.error,
            "meta": dict(self.meta),
        }


CallSink = Callable[[CallRecord], None]
"""A synchronous callback that receives every finished call (success or error)."""
