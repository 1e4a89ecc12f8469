"""Reading an OpenAI-compatible server's error statuses and headers.

Which error class a status stands for (the same table serves real statuses
and the error envelopes some gateways send inside a 200), the server's own
message from an error body, ``Retry-After`` in both its forms, and the
``x-should-retry`` override. Pure functions, no HTTP client.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime

from lorekit.llm.errors import (
    LLMAuthError,
    LLMError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
    LLMTimeoutError,
)


def as_status(code: object) -> int | None:
    """An HTTP status from an error envelope's ``code`` (502 or "502"), else None."""
    if isinstance(code, int) and not isinstance(code, bool):
        return code if 100 <= code <= 599 else None
    if isinstance(code, str) and code.isdigit():
        return as_status(int(code))
    return None


def status_class(status: int | None, code: str = "") -> type[LLMError]:
    """The error class for an HTTP status (or, without one, an error code's words)."""
    words = code.lower()
    if status == 429 or (status is None and "rate_limit" in words):
        return LLMRequestError if "insufficient_quota" in words else LLMRateLimitError
    if status in (401, 403) or (status is None and ("auth" in words or "api_key" in words)):
        return LLMAuthError
    if status == 408:
        return LLMTimeoutError
    if (status is not None and status >= 500) or (
        status is None and any(w in words for w in ("server_error", "overloaded", "unavailable"))
    ):
        return LLMServerError
    return LLMRequestError


def should_retry_header(headers: Mapping[str, str]) -> bool | None:
    """The server's explicit ``x-should-retry: true|false``, or None when absent."""
    value = {k.lower(): v for k, v in headers.items()}.get("x-should-retry", "").strip().lower()
    return {"true": True, "false": False}.get(value)


def server_message(body: object) -> str:
    """The human-readable message from an error body, in its common shapes."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            message = inner.get("message") or inner.get("detail")
            if message:
                return str(message)
        elif isinstance(inner, str) and inner:
            return inner
        detail = body.get("detail") or body.get("message")
        if detail:
            return str(detail)
        return json.dumps(dict(body), default=str)[:300]
    if isinstance(body, str):
        return body.strip()[:300]
    return ""


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds the server asks us to wait, from ``retry-after-ms`` or ``Retry-After``.

    ``Retry-After`` may be seconds or an HTTP date (RFC 9110); a date in the
    past means "now" (0). Unparseable values are ignored (None) rather than
    failing the request: the backoff curve is a fine fallback.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        with contextlib.suppress(ValueError):
            value = float(ms) / 1000.0
            if math.isfinite(value) and value >= 0:
                return value
    raw = lowered.get("retry-after")
    if raw is None or not raw.strip():
        return None
    try:
        seconds = float(raw)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = now if now is not None else datetime.now(UTC)
    return max(0.0, (when - current).total_seconds())
