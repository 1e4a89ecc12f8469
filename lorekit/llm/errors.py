"""Typed model errors that say what went wrong, with which model and where.

Every error carries ``retryable``: the retry loop consults only that flag, so
the decision of what is worth retrying lives in one place (the class, or a
server's explicit ``x-should-retry`` header), not in scattered ``except``
clauses. The rule behind the classes: retry what may change on its own (the
server was busy, the connection dropped, the bytes arrived cut off); never
retry an answer that arrived whole, because the same request gets the same
answer and every try is billed again.

An error may also carry what the failed call cost (``usage``: the tokens the
server billed, e.g. for an answer cut off at ``max_tokens`` before any text),
the server's ``retry_after`` hint and the answer's ``finish_reason``, so
accounting counts failed calls too.
"""

from __future__ import annotations

import copy

from lorekit.llm.base import Usage


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
        retry_after: float | None = None,
        usage: Usage | None = None,
        finish_reason: str | None = None,
    ) -> None:
        self.reason = message
        self.model = model
        self.endpoint = endpoint
        self.status = status
        self.attempts = attempts
        self.retry_after = retry_after
        """Seconds the server asked us to wait (``Retry-After``), on any status."""
        self.usage = usage
        """Tokens the server billed for this failed call; None when nothing is known."""
        self.finish_reason = finish_reason
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

    def with_reason(self, reason: str) -> LLMError:
        """Replace the explanation (e.g. to add why the retry loop stopped)."""
        self.reason = reason
        self.args = (self._render(),)
        return self

    def without_usage(self) -> LLMError:
        """A copy that bills nothing: handed to callers that shared another
        caller's failed request (the cache's followers), so the tokens are
        counted once, by the caller that made the request."""
        twin = copy.copy(self)
        twin.usage = None
        return twin


class LLMConnectionError(LLMError):
    """The server could not be reached (refused, reset, DNS)."""

    retryable = True


class LLMTimeoutError(LLMError):
    """The server did not answer within the client timeout (or sent 408)."""

    retryable = True


class LLMRateLimitError(LLMError):
    """HTTP 429. ``retry_after`` holds the server's Retry-After hint in seconds."""

    retryable = True


class LLMServerError(LLMError):
    """HTTP 5xx: the server failed; trying again may help."""

    retryable = True


class LLMResponseError(LLMError):
    """The server answered 200 with something that is not a usable completion.

    This class itself is for answers that did not arrive whole (JSON cut off
    mid-document, as a dropped proxy connection leaves it): retried, since
    the next try may well arrive intact. Answers that arrived whole but are
    unusable are :class:`LLMAnswerError` s and are not retried.
    """

    retryable = True


class LLMAnswerError(LLMResponseError):
    """A complete, well-formed 200 answer with no usable text.

    Not retried: the server finished its work and would do the same again for
    the same request (and bill it again). ``usage`` keeps what it billed.
    This class covers an empty answer (no text, no choices) itself; the
    subclasses name the common causes.
    """

    retryable = False


class LLMLengthError(LLMAnswerError):
    """``finish_reason: length`` before any text: the token budget ran out
    (often spent on reasoning). Raise ``max_tokens``."""


class LLMToolCallError(LLMAnswerError):
    """The model answered with a tool call instead of text (``finish_reason:
    tool_calls``), although LoreKit offers no tools."""


class LLMRefusalError(LLMAnswerError):
    """The answer was withheld: a content filter (``finish_reason:
    content_filter``) or the model's own ``refusal``."""


class LLMProtocolError(LLMAnswerError):
    """The 200 body is not a chat completion at all: an event stream (SSE)
    sent to a non-streaming request, an HTML page, JSON of another shape.
    A server or proxy setting, not a passing fault."""


class LLMRequestError(LLMError):
    """HTTP 4xx other than 429 (bad request, unknown model, context too long).
    Not retryable: the same request would fail the same way."""


class LLMAuthError(LLMRequestError):
    """HTTP 401/403: the API key is missing, wrong or lacks permission."""


class CacheMiss(LLMError):
    """Replay mode found no recorded answer for a request."""


class ScriptExhausted(LLMError):
    """A scripted model was asked more often than its script allows."""
