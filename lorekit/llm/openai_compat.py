"""A backend for every server that speaks the OpenAI chat-completions API.

OpenAI itself, vLLM, Ollama, the llama.cpp server, DeepSeek and many others
share one wire format, so one backend built on the official ``openai`` SDK
covers them all. What this module adds on top of the SDK:

- **One retry loop.** The SDK's own retries are switched off
  (``max_retries=0``); retries happen in :func:`lorekit.llm.retry.call_with_retries`
  so the policy, the attempt count in error messages and the limiter all see
  every attempt.
- **Typed errors.** Every SDK failure becomes a :mod:`lorekit.llm.errors`
  error naming the model and the endpoint, with the server's own message, so
  a user knows what failed, where, and whether retrying could help.
- **Its own reading of 200 answers.** The raw body is interpreted by
  :mod:`lorekit.llm.openai_wire`, which tells a cut-off document (retried)
  from a whole but unusable answer (not retried, its billed tokens kept).
- **A deadline per attempt.** ``timeout_s`` bounds the whole exchange, not
  only each network read.
- **Local-server convenience.** Servers on localhost need no key; we send a
  placeholder so users do not have to invent one.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any
from urllib.parse import urlparse

import openai

from lorekit.llm.base import (
    DEFAULT_PARAMS,
    Completion,
    Message,
    MessageLike,
    RequestParams,
    Usage,
    as_messages,
)
from lorekit.llm.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMError,
    LLMProtocolError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
    LLMTimeoutError,
)
from lorekit.llm.limits import SlotLimiter
from lorekit.llm.openai_status import (
    parse_retry_after,
    server_message,
    should_retry_header,
    status_class,
)
from lorekit.llm.openai_wire import DEFAULT_BASE_URL, read_reply
from lorekit.llm.retry import RetryPolicy, call_with_retries

__all__ = [
    "DEFAULT_BASE_URL",
    "LOCAL_PLACEHOLDER_KEY",
    "OpenAICompatLLM",
    "SlotLimiter",
    "is_local_url",
    "parse_retry_after",
]

LOCAL_PLACEHOLDER_KEY = "lorekit-local-no-key"
"""Sent to local servers when no key is configured: they ignore it, the SDK needs one."""
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})
DEFAULT_RETRY = RetryPolicy()


def is_local_url(url: str) -> bool:
    """True for servers on this machine (vLLM, Ollama, llama.cpp), which need no API key."""
    host = (urlparse(url).hostname or "").lower()
    return host in _LOCAL_HOSTS or host.endswith(".localhost")


class OpenAICompatLLM:
    """An :class:`~lorekit.llm.base.LLM` backed by an OpenAI-compatible HTTP server.

    ``retry=None`` makes exactly one attempt per call. ``limiter`` (if given)
    is entered around each attempt, not around the backoff sleeps, so a
    request waiting to retry does not hold a slot other requests could use.
    ``extra_body`` is merged into every request body (e.g. vLLM's
    ``{"top_k": 20}``); ``default_headers`` go with every request.
    ``on_retry``, ``sleep`` and ``rng`` are handed to the retry loop: a hook
    to log retries, and the means to observe or seed backoff in tests.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        limiter: SlotLimiter | None = None,
        extra_body: Mapping[str, Any] | None = None,
        default_headers: Mapping[str, str] | None = None,
        on_retry: Callable[[int, LLMError, float], None] | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if not model:
            raise ValueError("OpenAICompatLLM needs a model name")
        if not (isinstance(timeout_s, int | float) and math.isfinite(timeout_s) and timeout_s > 0):
            raise ValueError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
        url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if not is_local_url(url):
                raise LLMAuthError(
                    "no API key: set the OPENAI_API_KEY environment variable or pass "
                    "api_key=... (only servers on localhost may run without one)",
                    model=model,
                    endpoint=url,
                )
            key = LOCAL_PLACEHOLDER_KEY
        self._model = model
        self._endpoint = url
        self._timeout_s = float(timeout_s)
        self._retry = retry if retry is not None else RetryPolicy(max_attempts=1)
        self._limiter = limiter
        self._on_retry = on_retry
        self._sleep = sleep
        self._rng = rng
        self._extra_body = dict(extra_body) if extra_body else None
        self._client_options: dict[str, Any] = {
            "api_key": key,
            "base_url": url,
            "timeout": float(timeout_s),
            "max_retries": 0,
            "default_headers": dict(default_headers) if default_headers else None,
        }
        self._client = openai.AsyncOpenAI(**self._client_options)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._retired: list[openai.AsyncOpenAI] = []

    @property
    def model(self) -> str:
        """The model name we request (the server may report a more specific one)."""
        return self._model

    @property
    def endpoint(self) -> str:
        """The base URL requests go to, as named in every error message."""
        return self._endpoint

    @property
    def retry_policy(self) -> RetryPolicy:
        return self._retry

    def __repr__(self) -> str:
        return f"OpenAICompatLLM(model={self._model!r}, endpoint={self._endpoint!r})"

    async def complete(
        self, messages: Sequence[MessageLike] | str, params: RequestParams | None = None
    ) -> Completion:
        """Ask the server for one chat completion, retrying transient failures.

        ``params.sample`` is not sent: it only tells caches apart repeated
        draws, and servers have no use for it.
        """
        msgs = as_messages(messages)
        params = params if params is not None else DEFAULT_PARAMS
        request = self._request_kwargs(msgs, params)
        return await call_with_retries(
            lambda: self._attempt(msgs, request),
            self._retry,
            sleep=self._sleep,
            rng=self._rng,
            on_retry=self._on_retry,
        )

    def _request_kwargs(self, msgs: tuple[Message, ...], params: RequestParams) -> dict[str, Any]:
        """The create() arguments; optional parameters are sent only when set,
        since some servers reject keys they do not know."""
        kwargs: dict[str, Any] = {
            "model": self._model,
            "messages": [m.to_dict() for m in msgs],
            "temperature": params.temperature,
        }
        if params.max_tokens is not None:
            kwargs["max_tokens"] = params.max_tokens
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if params.response_format:
            kwargs["response_format"] = dict(params.response_format)
        if self._extra_body:
            kwargs["extra_body"] = dict(self._extra_body)
        return kwargs

    async def _attempt(self, msgs: tuple[Message, ...], request: dict[str, Any]) -> Completion:
        """One HTTP attempt, inside a limiter slot when there is a limiter."""
        if self._limiter is None:
            return await self._send(msgs, request)
        async with self._limiter.acquire():
            return await self._send(msgs, request)

    async def _send(self, msgs: tuple[Message, ...], request: dict[str, Any]) -> Completion:
        """One request with a deadline on the whole exchange.

        The SDK's timeout bounds each network read, so a server trickling a
        byte now and then would never time out; ``asyncio.timeout`` bounds the
        attempt as a whole, which is what ``timeout_s`` promises.
        """
        started = time.perf_counter()
        client = self._client_here()
        try:
            async with asyncio.timeout(self._timeout_s):
                raw = await client.chat.completions.with_raw_response.create(**request)
        except openai.OpenAIError as exc:
            raise self._map_error(exc) from exc
        except TimeoutError:
            message = f"request timed out: no complete answer within {self._timeout_s:g}s"
            raise self._error(LLMTimeoutError, message) from None
        latency = time.perf_counter() - started
        content_type = raw.headers.get("content-type", "")
        reply = read_reply(
            raw.text, content_type.lower(), msgs, request.get("max_tokens"), self._error
        )
        return Completion(
            text=reply.text,
            usage=reply.usage,
            model=reply.model or self._model,
            latency_s=latency,
            cached=False,
            finish_reason=reply.finish_reason,
        )

    def _client_here(self) -> openai.AsyncOpenAI:
        """The HTTP client of the running event loop. Its connections belong to the loop
        that opened them, so a model used again under a new loop (a command that runs a
        build, then a formulation, each with ``asyncio.run``) gets a client of its own
        instead of failing with "Event loop is closed" on a pooled connection."""
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop is not loop:
            # The old client is kept, not closed: closing it needs its own (closed) loop,
            # and the SDK's finaliser would try on this one and fail with the same error.
            self._retired.append(self._client)
            self._client = openai.AsyncOpenAI(**self._client_options)
        self._loop = loop
        return self._client

    def _error(
        self,
        cls: type[LLMError],
        message: str,
        status: int | None = None,
        *,
        usage: Usage | None = None,
        finish_reason: str | None = None,
        retry_after: float | None = None,
    ) -> LLMError:
        return cls(
            message,
            model=self._model,
            endpoint=self._endpoint,
            status=status,
            usage=usage,
            finish_reason=finish_reason,
            retry_after=retry_after,
        )

    def _map_error(self, exc: openai.OpenAIError) -> LLMError:
        """Translate an SDK exception into our typed error, keeping the server's message."""
        if isinstance(exc, openai.APITimeoutError):
            return self._error(LLMTimeoutError, "request timed out (client timeout)")
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            detail = f": {cause}" if cause is not None and str(cause) else ""
            return self._error(LLMConnectionError, f"connection failed{detail}")
        if isinstance(exc, openai.APIResponseValidationError):
            return self._error(
                LLMProtocolError, f"invalid response: {exc.message}", exc.status_code
            )
        if isinstance(exc, openai.APIStatusError):
            return self._map_status(exc)
        return self._error(LLMError, f"{type(exc).__name__}: {exc}")

    def _map_status(self, exc: openai.APIStatusError) -> LLMError:
        """An error status as a typed error. ``Retry-After`` is read on every
        status (429, 503, ...) and an explicit ``x-should-retry`` header
        overrides the class's own judgement, as OpenAI's servers intend."""
        status = exc.status_code
        detail = server_message(exc.body)
        headers = exc.response.headers
        retry_after = parse_retry_after(headers)
        code = str(exc.code or "")
        cls = status_class(status, code)
        if cls is LLMRequestError and status == 429:
            # OpenAI reports an exhausted budget as 429 too; waiting will not refill it.
            message = f"quota exhausted: {detail}"
        elif cls is LLMRateLimitError:
            message = f"rate limited: {detail or 'too many requests'}"
        elif cls is LLMAuthError:
            message = f"not authorised: {detail or 'check the API key'} (is OPENAI_API_KEY right?)"
        elif cls is LLMServerError:
            message = f"server error: {detail or 'no details'}"
        elif cls is LLMTimeoutError:
            # 408 Request Timeout is the server's timeout, as transient as ours.
            message = f"server timed out: {detail or 'no details'}"
        else:
            message = f"request rejected: {detail or 'no details'}"
        if retry_after is not None and cls.retryable:
            message += f"; server asks to retry after {retry_after:g}s"
        error = self._error(cls, message, status, retry_after=retry_after)
        override = should_retry_header(headers)
        if override is not None and not (cls is LLMRequestError and status == 429):
            error.retryable = override
        return error

    async def aclose(self) -> None:
        """Close the HTTP connection pool of this loop's client. A client opened under an
        earlier (now closed) loop cannot be closed from this one: its connections died
        with that loop, so it is retired instead of closed."""
        if self._loop is None or self._loop is asyncio.get_running_loop():
            await self._client.close()
        else:
            self._retired.append(self._client)
            self._client = openai.AsyncOpenAI(**self._client_options)
        self._loop = None

    async def __aenter__(self) -> OpenAICompatLLM:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
