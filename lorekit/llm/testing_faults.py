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
    "status",
    "slow",
    "malformed_json",
    "empty_choices",
    "missing_content",
    "disconnect",
    "no_text",
    "sse_body",
    "no_usage",
    "error_envelope",
    "html_body",
    "trickle",
    "usage",
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
    finish_reason: str | None = None
    usage: bool = True
    fields: tuple[tuple[str, object], ...] = ()
    """Extra fields of the answer's message (``reasoning_content``, ``refusal``, ...)."""
    pieces: int = 1

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
        return cls("status", 429, message, headers=_retry_after(retry_after), error_code=error_code)

    @classmethod
    def server_error(
        cls,
        code: int = 500,
        message: str = "internal server error",
        retry_after: float | str | None = None,
    ) -> Fault:
        """An HTTP 5xx answer, which clients should treat as transient; ``retry_after``
        adds a Retry-After header (a 503 from a loading or overloaded server)."""
        if not 500 <= code <= 599:
            raise ValueError(f"server_error needs a 5xx status, got {code}")
        return cls("status", code, message, headers=_retry_after(retry_after))

    @classmethod
    def status(
        cls,
        code: int,
        message: str = "",
        error_code: str | None = None,
        *,
        retry_after: float | str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> Fault:
        """Any error status with an OpenAI-style error body (400, 401, 404 unknown model, ...),
        optionally with Retry-After and other headers (``x-should-retry``)."""
        if not 400 <= code <= 599:
            raise ValueError(f"an error fault needs a 4xx or 5xx status, got {code}")
        return cls(
            "status",
            code,
            message or f"injected HTTP {code}",
            headers=_retry_after(retry_after) + tuple(headers),
            error_code=error_code,
        )

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

    @classmethod
    def no_text(
        cls,
        finish_reason: str | None = "length",
        *,
        usage: bool = True,
        reasoning: str | None = None,
        tool_call: str | None = None,
        refusal: str | None = None,
    ) -> Fault:
        """HTTP 200, complete and well-formed, whose message content is null.

        As servers send it when the budget ran out (``length``: completion
        tokens equal ``max_tokens``), e.g. vLLM with a reasoning parser whose
        model never left its reasoning (``reasoning`` fills
        ``reasoning_content``); when the model called a tool (``tool_call``
        names it, finish ``tool_calls``); or when it refused (``refusal``).
        ``usage=False`` leaves out the usage block.
        """
        fields: list[tuple[str, object]] = []
        if reasoning is not None:
            fields.append(("reasoning_content", reasoning))
        if refusal is not None:
            fields.append(("refusal", refusal))
        if tool_call is not None:
            call = {
                "id": "call_0",
                "type": "function",
                "function": {"name": tool_call, "arguments": "{}"},
            }
            fields.append(("tool_calls", [call]))
        return cls("no_text", finish_reason=finish_reason, usage=usage, fields=tuple(fields))

    @classmethod
    def sse_body(cls, *, usage: bool = True, content_type: str = "text/event-stream") -> Fault:
        """HTTP 200 whose body is the answer as an SSE stream (``data: {...}`` chunks,
        a usage chunk unless ``usage=False``, then ``data: [DONE]``), although the
        request did not ask to stream. ``content_type`` may claim JSON, as some proxies do."""
        return cls("sse_body", usage=usage, message=content_type)

    @classmethod
    def no_usage(cls) -> Fault:
        """A normal answer without its usage block (as some local servers send)."""
        return cls("no_usage", usage=False)

    @classmethod
    def usage_block(cls, **counts: object) -> Fault:
        """A normal answer whose usage block is ``counts`` as given, e.g.
        ``prompt_tokens=10**19``, ``-5``, ``12.5`` or ``"12"`` (a broken counter)."""
        return cls("usage", fields=tuple(counts.items()))

    @classmethod
    def error_envelope(cls, code: int | str = 502, message: str = "upstream failed") -> Fault:
        """HTTP 200 whose body is an error envelope, no choices (as some gateways send)."""
        return cls("error_envelope", message=message, error_code=str(code))

    @classmethod
    def html_body(cls) -> Fault:
        """HTTP 200 with an HTML page instead of JSON (a web UI behind the wrong base URL)."""
        return cls("html_body")

    @classmethod
    def trickle(cls, delay_s: float, pieces: int = 5) -> Fault:
        """A normal answer sent in ``pieces`` parts, ``delay_s`` apart: every single
        read is quick, the whole answer is slow."""
        if delay_s < 0 or pieces < 1:
            raise ValueError(f"trickle needs delay_s >= 0 and pieces >= 1, got {delay_s}, {pieces}")
        return cls("trickle", delay_s=delay_s, pieces=pieces)


def _retry_after(value: float | str | None) -> tuple[tuple[str, str], ...]:
    """A Retry-After header from seconds or a ready-made value (an HTTP date)."""
    if value is None:
        return ()
    return (("Retry-After", value if isinstance(value, str) else f"{value:g}"),)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server received it; ``body`` is the parsed JSON (or None).

    Header names are lower-cased: HTTP treats them case-insensitively and
    clients differ in how they spell them, so tests should not care. ``peer``
    (host, port) tells connections apart: requests on one kept-alive
    connection share it.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    received_at: float = field(default_factory=time.monotonic)
    peer: tuple[str, int] | None = None  # the client's address: one per connection
