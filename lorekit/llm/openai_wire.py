"""Reading what an OpenAI-compatible server sent: bodies, statuses, headers.

Servers that claim the chat-completions format differ in the details, and a
200 status says little: the body may be a cut-off document, an event stream
the client did not ask for, an error envelope, or a well-formed completion
with no text because the budget ran out. This module turns each into a
:class:`Reply` or a typed error, deciding *once* whether trying again could
help (see the table in docs/models.md):

- bytes that did not arrive whole (JSON cut off mid-document, an empty body)
  are :class:`LLMResponseError`, retried;
- a body that arrived whole but is unusable (no text and ``finish_reason``
  ``length``/``tool_calls``/``content_filter``, a refusal, an SSE stream, an
  HTML page) is an :class:`LLMAnswerError` subclass, not retried, carrying the
  tokens the server billed (reported, or estimated and flagged as such);
- an error envelope inside a 200 is classified like the status it names
  (:mod:`lorekit.llm.openai_status`).

Pure functions over text and mappings; no HTTP client in here, so every case
can be tested from a string.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lorekit.llm.base import Message, Usage, estimate_tokens
from lorekit.llm.counts import MAX_CALL_TOKENS, is_token_count, refused_counts
from lorekit.llm.errors import (
    LLMAnswerError,
    LLMError,
    LLMLengthError,
    LLMProtocolError,
    LLMRefusalError,
    LLMResponseError,
    LLMToolCallError,
)
from lorekit.llm.openai_status import as_status, server_message, status_class

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where requests go when neither ``base_url`` nor ``OPENAI_BASE_URL`` says otherwise."""

Fail = Callable[..., LLMError]
"""``fail(cls, message, *, usage=None, finish_reason=None, status=None,
retry_after=None)``: builds an error that names the model and the endpoint."""

_SNIPPET = 160
_SSE_STARTS = ("data:", "event:", "id:", "retry:", ":")


@dataclass(frozen=True, slots=True)
class Reply:
    """The usable part of a chat completion."""

    text: str
    usage: Usage
    model: str
    finish_reason: str | None


# ------------------------------------------------------------------ bodies
def read_reply(
    body: str,
    content_type: str,
    msgs: Sequence[Message],
    max_tokens: int | None,
    fail: Fail,
) -> Reply:
    """Interpret the body of a 200 answer to a non-streaming chat request."""
    stripped = body.lstrip()
    # JSON never starts with an SSE field name or an SSE comment (":").
    if "event-stream" in content_type or stripped.startswith(_SSE_STARTS):
        raise _stream_error(stripped, msgs, fail)
    try:
        data = json.loads(body)
    except ValueError as exc:
        if not stripped or stripped.startswith(("{", "[")):
            # Started as JSON and stopped: a connection cut mid-answer. May pass.
            what = "an empty body" if not stripped else f"malformed JSON ({exc})"
            raise fail(LLMResponseError, f"the response is {what}") from None
        raise fail(
            LLMProtocolError,
            f"the response is {content_type or 'untyped'} text, not JSON "
            f"(is base_url the API root, usually ending in /v1?): {_snippet(stripped)}",
        ) from None
    if not isinstance(data, dict):
        raise fail(LLMProtocolError, f"the response is JSON but not an object: {_snippet(body)}")
    return read_completion(data, msgs, max_tokens, fail)


def read_completion(
    data: Mapping[str, Any],
    msgs: Sequence[Message],
    max_tokens: int | None,
    fail: Fail,
) -> Reply:
    """Interpret a parsed chat-completion object (see the module docstring)."""
    reported = reported_usage(data.get("usage"))
    refused = refused_counts(data.get("usage"))  # kept on the estimate that replaces them
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise _no_choices(data, choices, reported, fail)
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, Mapping) else None
    if not isinstance(message, Mapping):
        hint = " (a text-completion answer: use the chat endpoint)" if _has_text(choice) else ""
        raise fail(LLMProtocolError, f"the response's first choice has no message{hint}")
    raw_finish = choice.get("finish_reason")
    finish = str(raw_finish) if raw_finish is not None else None
    text = _content_text(message.get("content"))
    tool_calls = _tool_names(message)
    refusal = message.get("refusal")
    usable = text is not None and (
        text != "" or (finish not in _EMPTY_IS_FAILURE and not tool_calls and not refusal)
    )
    model = data.get("model")
    model_name = model if isinstance(model, str) else ""
    if usable:
        assert text is not None
        usage = reported or _estimate(msgs, text, refused=refused)
        return Reply(text, usage, model_name, finish)
    spent = _emitted_text(message)
    floor = max_tokens if finish == "length" else None
    usage = reported or _estimate(msgs, spent, floor, refused=refused)
    cls, reason = _why_no_text(finish, message, tool_calls, spent, max_tokens)
    raise fail(cls, reason, usage=usage, finish_reason=finish)


_EMPTY_IS_FAILURE = frozenset({"length", "tool_calls", "function_call", "content_filter"})


def _why_no_text(
    finish: str | None,
    message: Mapping[str, Any],
    tool_calls: list[str],
    spent: str,
    max_tokens: int | None,
) -> tuple[type[LLMAnswerError], str]:
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        return LLMRefusalError, f"the model refused to answer: {_snippet(refusal)}"
    if finish == "content_filter":
        return LLMRefusalError, "a content filter withheld the answer"
    if finish == "length":
        budget = f"max_tokens={max_tokens}" if max_tokens is not None else "the token limit"
        thought = _reasoning(message)
        why = f" (spent on {len(thought)} characters of reasoning)" if thought else ""
        return (
            LLMLengthError,
            f"the answer hit {budget} before any text{why}; raise max_tokens",
        )
    if tool_calls or finish in ("tool_calls", "function_call"):
        named = f" ({', '.join(tool_calls)})" if tool_calls else ""
        return (
            LLMToolCallError,
            f"the model answered with a tool call{named} instead of text; LoreKit offers no "
            "tools: check the server's chat template or tool-call parser",
        )
    extra = f", reasoning only: {len(spent)} characters" if spent else ""
    return LLMAnswerError, f"the answer has no text (finish_reason {finish!r}{extra})"


def _no_choices(
    data: Mapping[str, Any], choices: object, reported: Usage | None, fail: Fail
) -> LLMError:
    envelope = data.get("error")
    if envelope is not None:
        return envelope_error(envelope, fail, usage=reported)
    if choices is None or not isinstance(choices, list):
        keys = ", ".join(sorted(str(k) for k in data)[:8]) or "none"
        return fail(LLMProtocolError, f"the response is not a chat completion (keys: {keys})")
    if reported is not None:
        # Finished and billed, yet nothing to show: the same request would do the same.
        return fail(LLMAnswerError, "the response has no choices", usage=reported)
    return fail(LLMResponseError, "the response has no choices")


def envelope_error(envelope: object, fail: Fail, *, usage: Usage | None = None) -> LLMError:
    """An ``{"error": ...}`` object sent with status 200 (some proxies do this),
    classified by the status or code it names, as if it had been the status."""
    message = server_message({"error": envelope}) or "no details"
    inner = envelope if isinstance(envelope, Mapping) else {}
    code = inner.get("code") or inner.get("status")
    kind = str(inner.get("type") or "")
    status = as_status(code)
    label = " ".join(str(x) for x in (code, kind) if x)
    detail = f"the server answered 200 with an error: {message}" + (f" ({label})" if label else "")
    cls = status_class(status, f"{code or ''} {kind}")
    return fail(cls, detail, usage=usage, status=200)


def _stream_error(body: str, msgs: Sequence[Message], fail: Fail) -> LLMError:
    """An SSE stream sent to a request that asked for one JSON document."""
    text: list[str] = []
    reported: Usage | None = None
    finish: str | None = None
    chunks = 0
    for line in body.splitlines():
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            continue
        try:
            chunk = json.loads(payload)
        except ValueError:
            continue
        if not isinstance(chunk, Mapping):
            continue
        chunks += 1
        reported = reported_usage(chunk.get("usage")) or reported
        for choice in chunk.get("choices") or []:
            if isinstance(choice, Mapping):
                delta = choice.get("delta") or choice.get("message") or {}
                piece = _content_text(delta.get("content")) if isinstance(delta, Mapping) else None
                text.append(piece or "")
                finish = str(choice.get("finish_reason") or "") or finish
    answer = "".join(text)
    usage = reported or _estimate(msgs, answer)
    return fail(
        LLMProtocolError,
        "the server sent an event stream (SSE) to a non-streaming request: it or a proxy "
        f'ignores "stream": false; fix that setting ({chunks} chunks discarded)',
        usage=usage,
        finish_reason=finish,
    )


# ------------------------------------------------------------------ pieces
def reported_usage(raw: object) -> Usage | None:
    """The server's token counts, or None when it sent none we can trust."""
    if not isinstance(raw, Mapping):
        return None
    prompt = _count(raw.get("prompt_tokens"))
    completion = _count(raw.get("completion_tokens"))
    total = _count(raw.get("total_tokens"))
    if prompt is not None and completion is None and total is not None and total >= prompt:
        completion = total - prompt
    if prompt is None or completion is None or prompt + completion == 0:
        # All zeros is a placeholder, not a count: no prompt costs 0 tokens.
        return None
    return Usage(prompt, completion)


def _count(value: object) -> int | None:
    """A count we can use (:func:`~lorekit.llm.counts.is_token_count`), else None."""
    return value if is_token_count(value) else None


def _estimate(
    msgs: Sequence[Message], answer: str, floor: int | None = None, *, refused: str | None = None
) -> Usage:
    """Estimated usage; ``floor`` is a completion count known to be spent
    (``max_tokens`` when the answer stopped at the limit); ``refused`` notes the
    server's counts this estimate stands in for."""
    completion = min(max(estimate_tokens(answer), floor or 0), MAX_CALL_TOKENS)
    prompt = min(sum(estimate_tokens(m.content) for m in msgs), MAX_CALL_TOKENS)
    return Usage(prompt, completion, estimated=True, refused=refused)


def _content_text(content: object) -> str | None:
    """Message content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p["text"]
            for p in content
            if isinstance(p, Mapping) and p.get("type", "text") == "text"
            if isinstance(p.get("text"), str)
        ]
        return "".join(parts) if parts else None
    return None


def _reasoning(message: Mapping[str, Any]) -> str:
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _tool_names(message: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        fn = call.get("function") if isinstance(call, Mapping) else None
        names.append(str(fn.get("name") or "?") if isinstance(fn, Mapping) else "?")
    legacy = message.get("function_call")
    if isinstance(legacy, Mapping):
        names.append(str(legacy.get("name") or "?"))
    return names


def _emitted_text(message: Mapping[str, Any]) -> str:
    """Everything the model generated besides content, for estimating its tokens."""
    parts = [_reasoning(message)]
    refusal = message.get("refusal")
    if isinstance(refusal, str):
        parts.append(refusal)
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        fn = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(fn, Mapping):
            parts.append(f"{fn.get('name') or ''}{fn.get('arguments') or ''}")
    return "".join(parts)


def _has_text(choice: object) -> bool:
    return isinstance(choice, Mapping) and isinstance(choice.get("text"), str)


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat[:_SNIPPET] + ("..." if len(flat) > _SNIPPET else ""))
