"""The reading of 200 bodies, case by case, without HTTP: each row of the table
in docs/models.md decides retryable or not and what usage is kept."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lorekit.llm.base import Message, Usage
from lorekit.llm.errors import (
    LLMAnswerError,
    LLMAuthError,
    LLMError,
    LLMLengthError,
    LLMProtocolError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMRequestError,
    LLMResponseError,
    LLMServerError,
    LLMTimeoutError,
    LLMToolCallError,
)
from lorekit.llm.openai_status import should_retry_header, status_class
from lorekit.llm.openai_wire import read_reply, reported_usage

MSGS = (Message("user", "x" * 40),)  # about 10 estimated prompt tokens


def fail(cls: type[LLMError], message: str, status: int | None = None, **kw: Any) -> LLMError:
    return cls(message, status=status, **kw)


def body(message: dict[str, Any] | None, finish: str | None = "stop", **top: Any) -> str:
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return json.dumps({"model": "m", "choices": [choice], **top})


def read(text: str, content_type: str = "application/json", max_tokens: int | None = None) -> Any:
    return read_reply(text, content_type, MSGS, max_tokens, fail)


def error_of(text: str, **kw: Any) -> LLMError:
    with pytest.raises(LLMError) as info:
        read(text, **kw)
    return info.value


USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def test_text_answer_with_usage() -> None:
    reply = read(body({"role": "assistant", "content": "hi"}, usage=USAGE))
    assert (reply.text, reply.model, reply.finish_reason) == ("hi", "m", "stop")
    assert reply.usage == Usage(11, 7) and not reply.usage.estimated


def test_content_as_a_list_of_parts_is_joined() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}]
    assert read(body({"content": parts})).text == "ab"


def test_empty_text_with_stop_is_an_answer() -> None:
    assert read(body({"content": ""})).text == ""


@pytest.mark.parametrize(
    ("message", "finish", "error"),
    [
        ({"content": None}, "length", LLMLengthError),
        ({"content": ""}, "length", LLMLengthError),
        ({"content": None, "tool_calls": [{"function": {"name": "f"}}]}, "tool_calls", None),
        ({"content": None, "function_call": {"name": "f"}}, "function_call", LLMToolCallError),
        ({"content": ""}, "content_filter", LLMRefusalError),
        ({"content": None, "refusal": "no"}, "stop", LLMRefusalError),
        ({"content": None, "reasoning_content": "thinking..."}, "stop", LLMAnswerError),
        ({"content": None}, None, LLMAnswerError),
        ({"content": 42}, "stop", LLMAnswerError),
    ],
)
def test_whole_answers_without_text_are_final(
    message: dict[str, Any], finish: str | None, error: type[LLMError] | None
) -> None:
    err = error_of(body(message, finish, usage=USAGE))
    assert type(err) is (error or LLMToolCallError)
    assert not err.retryable
    assert err.usage == Usage(11, 7) and err.finish_reason == finish


def test_estimated_usage_when_the_server_sent_none() -> None:
    err = error_of(body({"content": None}, "length"), max_tokens=32)
    assert err.usage is not None and err.usage.estimated
    assert err.usage.completion_tokens == 32 and err.usage.prompt_tokens == 10
    reply = read(body({"content": "four char"}))
    assert reply.usage.estimated and reply.usage.completion_tokens == 3


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"prompt_tokens": 3, "completion_tokens": 4}, Usage(3, 4)),
        ({"prompt_tokens": 3, "total_tokens": 10}, Usage(3, 7)),
        ({"prompt_tokens": 3}, None),
        ({"prompt_tokens": "3", "completion_tokens": 4}, None),
        ({"prompt_tokens": True, "completion_tokens": 4}, None),
        ({"prompt_tokens": -1, "completion_tokens": 4}, None),
        ({"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}, None),
        (None, None),
    ],
)
def test_reported_usage_shapes(raw: object, expected: Usage | None) -> None:
    assert reported_usage(raw) == expected


@pytest.mark.parametrize(
    ("text", "content_type", "error", "retryable"),
    [
        ('{"choices": [{"mess', "application/json", LLMResponseError, True),
        ("", "application/json", LLMResponseError, True),
        ("<html><body>login</body></html>", "text/html", LLMProtocolError, False),
        ("OK", "text/plain", LLMProtocolError, False),
        ("[1, 2]", "application/json", LLMProtocolError, False),
        ('{"object": "list", "data": []}', "application/json", LLMProtocolError, False),
        ('{"choices": "none"}', "application/json", LLMProtocolError, False),
        ('{"choices": [{"index": 0, "text": "hi"}]}', "application/json", LLMProtocolError, False),
        ('data: {"choices": []}\n\ndata: [DONE]\n\n', "application/json", LLMProtocolError, False),
        ("event: message\ndata: {}\n\n", "text/event-stream", LLMProtocolError, False),
        (": keep-alive\n\ndata: {}\n\n", "application/json", LLMProtocolError, False),
        ('{"choices": []}', "application/json", LLMResponseError, True),
        ('{"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 0}}', "", None, False),
    ],
)
def test_bodies_that_are_not_answers(
    text: str, content_type: str, error: type[LLMError] | None, retryable: bool
) -> None:
    err = error_of(text, content_type=content_type)
    assert type(err) is (error or LLMAnswerError)
    assert err.retryable is retryable


def test_leading_blank_lines_before_json_are_fine() -> None:
    # DeepSeek keeps busy non-stream connections alive with empty lines.
    assert read("\n\n\n" + body({"content": "late"})).text == "late"


def test_text_completion_shape_gets_a_hint() -> None:
    err = error_of('{"choices": [{"index": 0, "text": "hi"}]}')
    assert "chat endpoint" in str(err)


def test_event_stream_keeps_the_usage_of_its_last_chunk() -> None:
    chunks = [
        {"choices": [{"delta": {"content": "hel"}}]},
        {"choices": [{"delta": {"content": "lo"}, "finish_reason": "stop"}]},
        {"choices": [], "usage": USAGE},
    ]
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    err = error_of(text, content_type="text/event-stream")
    assert type(err) is LLMProtocolError and not err.retryable
    assert err.usage == Usage(11, 7) and err.finish_reason == "stop"
    assert "3 chunks" in str(err)


@pytest.mark.parametrize(
    ("envelope", "error"),
    [
        ({"message": "upstream", "code": 502}, LLMServerError),
        ({"message": "slow down", "code": "429"}, LLMRateLimitError),
        ({"message": "slow down", "type": "rate_limit_error"}, LLMRateLimitError),
        ({"message": "busy", "type": "overloaded_error"}, LLMServerError),
        ({"message": "who are you", "code": "invalid_api_key"}, LLMAuthError),
        ({"message": "too long", "code": "context_length_exceeded"}, LLMRequestError),
        ("plain text error", LLMRequestError),
    ],
)
def test_error_envelopes_in_a_200(envelope: object, error: type[LLMError]) -> None:
    err = error_of(json.dumps({"error": envelope}))
    assert type(err) is error and err.status == 200
    assert "answered 200 with an error" in str(err)


@pytest.mark.parametrize(
    ("status", "code", "error"),
    [
        (429, "", LLMRateLimitError),
        (429, "insufficient_quota", LLMRequestError),
        (401, "", LLMAuthError),
        (403, "", LLMAuthError),
        (408, "", LLMTimeoutError),
        (500, "", LLMServerError),
        (503, "", LLMServerError),
        (400, "", LLMRequestError),
        (409, "", LLMRequestError),
    ],
)
def test_status_classes(status: int, code: str, error: type[LLMError]) -> None:
    assert status_class(status, code) is error


def test_should_retry_header() -> None:
    assert should_retry_header({"X-Should-Retry": "true"}) is True
    assert should_retry_header({"x-should-retry": "false"}) is False
    assert should_retry_header({"x-should-retry": "maybe"}) is None
    assert should_retry_header({}) is None
