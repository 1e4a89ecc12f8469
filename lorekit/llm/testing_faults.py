"""What a test asks of :class:`~lorekit.llm.testing.OpenAICompatServer` and what it sees.

:class:`Fault` is one injected misbehaviour, :class:`RecordedRequest` one request
as the server received it. They are plain values with no HTTP in them, so they
live apart from the server; import them from :mod:`lorekit.llm.testing`, which
re-exports them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

FaultKind = Literal[
    "status", "slow", "malformed_json", "empty_choices", "missing_content", "disconnect"
]


@dataclass(frozen=True, slots=True)
class Fault:
    """One misbehaviour the server applies to one request.

    Build faults with the constructors (``Fault.rate_limit()``, ...) rather
    than by hand; the fields are the constructors' shared vocabulary.
    """

    kind: FaultKind
    code: int = 200
    message: str = ""
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    error_code: str | None = None

    @classmethod
    def rate_limit(
        cls,
        retry_after: float | str | None = None,
        message: str = "rate limit exceeded",
        error_code: str | None = None,
    ) -> Fault:
        """HTTP 429. ``retry_after`` in seconds, or a ready-made header value (an HTTP date).

        ``error_code`` fills ``error.code`` in the body (OpenAI sends
        ``"insufficient_quota"`` with a 429 when the budget is spent)."""
        headers: tuple[tuple[str, str], ...] = ()
        if retry_after is not None:
            value = retry_after if isinstance(retry_after, str) else f"{retry_after:g}"
            headers = (("Retry-After", value),)
        return cls("status", 429, message, headers=headers, error_code=error_code)

    @classmethod
    def server_error(cls, code: int = 500, message: str = "internal server error") -> Fault:
        """An HTTP 5xx answer, which clients should treat as transient."""
        if not 500 <= code <= 599:
            raise ValueError(f"server_error needs a 5xx status, got {code}")
        return cls("status", code, message)

    @classmethod
    def status(cls, code: int, message: str = "", error_code: str | None = None) -> Fault:
        """Any error status with an OpenAI-style error body (400, 401, 404 unknown model, ...)."""
        if not 400 <= code <= 599:
            raise ValueError(f"an error fault needs a 4xx or 5xx status, got {code}")
        return cls("status", code, message or f"injected HTTP {code}", error_code=error_code)

    @classmethod
    def slow(cls, delay_s: float) -> Fault:
        """Sleep ``delay_s`` before answering normally; for exercising client timeouts."""
        if delay_s < 0:
            raise ValueError(f"delay_s must be >= 0, got {delay_s}")
        return cls("slow", delay_s=delay_s)

    @classmethod
    def malformed_json(cls) -> Fault:
        """HTTP 200 labelled JSON whose body is cut off mid-document."""
        return cls("malformed_json")

    @classmethod
    def empty_choices(cls) -> Fault:
        """HTTP 200 with a well-formed completion that has no choices."""
        return cls("empty_choices")

    @classmethod
    def missing_content(cls) -> Fault:
        """HTTP 200 with one choice whose message content is null."""
        return cls("missing_content")

    @classmethod
    def disconnect(cls) -> Fault:
        """Read the request, then close the socket without answering."""
        return cls("disconnect")


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server received it; ``body`` is the parsed JSON (or None).

    Header names are lower-cased: HTTP treats them case-insensitively and
    clients differ in how they spell them, so tests should not care.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    received_at: float = field(default_factory=time.monotonic)
