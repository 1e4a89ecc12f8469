"""Typed model errors that say what went wrong, with which model and where.

Every error carries ``retryable``: the retry loop consults only that flag, so
the decision of what is worth retrying lives in one place (the class), not in
scattered ``except`` clauses.
"""

from __future__ import annotations


class LLMError(Exception):
    """Base class of every model failure LoreKit raises."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        model: str = "",
        endpoint: str = "",
        status: int | None = None,
        attempts: int = 1,
    ) -> None:
        self.reason = message
        self.model = model
        self.endpoint = endpoint
        self.status = status
        self.attempts = attempts
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.model:
            where.append(f"model {self.model!r}")
        if self.endpoint:
            where.append(f"at {self.endpoint}")
        head = f"{' '.join(where)}: " if where else ""
        tail = f" (HTTP {self.status})" if self.status is not None else ""
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{head}{self.reason}{tail}{tries}"

    def with_attempts(self, attempts: int) -> LLMError:
        """Record how many attempts were spent before giving up."""
        self.attempts = attempts
        self.args = (self._render(),)
        return self


class LLMConnectionError(LLMError):
    """The server could not be reached (refused, reset, DNS)."""

    retryable = True


class LLMTimeoutError(LLMError):
    """The server did not answer within the client timeout."""

    retryable = True


class LLMRateLimitError(LLMError):
    """HTTP 429. ``retry_after`` holds the server's Retry-After hint in seconds."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: object) -> None:
        self.retry_after = retry_after
        super().__init__(message, **kw)  # type: ignore[arg-type]


class LLMServerError(LLMError):
    """HTTP 5xx: the server failed; trying again may help."""

    retryable = True


class LLMResponseError(LLMError):
    """The server answered 200 with something that is not a usable completion
    (malformed JSON, no choices). Retried: proxies and overloaded servers
    produce these transiently, and a bounded retry costs little."""

    retryable = True


class LLMRequestError(LLMError):
    """HTTP 4xx other than 429 (bad request, unknown model, context too long).
    Not retryable: the same request would fail the same way."""


class LLMAuthError(LLMRequestError):
    """HTTP 401/403: the API key is missing, wrong or lacks permission."""


class CacheMiss(LLMError):
    """Replay mode found no recorded answer for a request."""


class ScriptExhausted(LLMError):
    """A scripted model was asked more often than its script allows."""
