"""What cannot change is not retried, and what the server billed is kept.

Every case goes through the real local fault server and the real SDK; the
request count on the wire is the proof of "retried" or "not retried", and the
error's ``usage`` is compared with the usage block the server sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from lorekit.llm.base import RequestParams
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
from lorekit.llm.openai_compat import OpenAICompatLLM
from lorekit.llm.retry import RetryPolicy
from lorekit.llm.testing import Fault, OpenAICompatServer

CHAT = "/v1/chat/completions"
FAST = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.02, jitter=0.0)
PROMPT = "one two three four"  # four words: the test server's prompt_tokens


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def srv() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer(["alpha beta gamma delta epsilon"] * 8) as server:
        yield server


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@contextlib.asynccontextmanager
async def client(srv: OpenAICompatServer, **kwargs: Any) -> AsyncIterator[OpenAICompatLLM]:
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("timeout_s", 5.0)
    kwargs.setdefault("sleep", Sleeps())
    async with OpenAICompatLLM("test-model", base_url=srv.base_url, **kwargs) as llm:
        yield llm


async def fail_once(srv: OpenAICompatServer, fault: Fault, **kw: Any) -> LLMError:
    srv.inject(fault)
    async with client(srv) as llm:
        with pytest.raises(LLMError) as info:
            await llm.complete(PROMPT, RequestParams(**kw))
    return info.value


# -------------------------------------------- whole answers without text
@pytest.mark.parametrize(
    ("fault", "error", "finish", "completion_tokens"),
    [
        # vLLM with a reasoning parser and a small max_tokens: all spent thinking.
        (Fault.no_text("length", reasoning="hmm let me think"), LLMLengthError, "length", 50),
        (Fault.no_text("tool_calls", tool_call="lookup"), LLMToolCallError, "tool_calls", 1),
        (Fault.no_text("content_filter"), LLMRefusalError, "content_filter", 0),
        (Fault.no_text("stop", refusal="I will not"), LLMRefusalError, "stop", 3),
        (Fault.missing_content(), LLMAnswerError, "stop", 5),
    ],
    ids=["length", "tool_calls", "content_filter", "refusal", "null_with_stop"],
)
async def test_whole_answer_without_text_is_not_retried_and_keeps_usage(
    srv: OpenAICompatServer,
    fault: Fault,
    error: type[LLMError],
    finish: str,
    completion_tokens: int,
) -> None:
    err = await fail_once(srv, fault, max_tokens=50)
    assert type(err) is error
    assert not err.retryable and isinstance(err, LLMResponseError)
    assert srv.count(CHAT) == 1  # one request on the wire: nothing was retried
    assert err.finish_reason == finish
    assert err.usage is not None and not err.usage.estimated
    # Exactly the server's usage block (for "length": the whole max_tokens=50 budget).
    assert (err.usage.prompt_tokens, err.usage.completion_tokens) == (4, completion_tokens)
    assert "after" not in str(err)  # no "after N attempts"


async def test_length_error_says_how_to_fix_it(srv: OpenAICompatServer) -> None:
    err = await fail_once(srv, Fault.no_text("length", reasoning="a b c d"), max_tokens=7)
    assert isinstance(err, LLMLengthError)
    assert err.usage is not None and err.usage.completion_tokens == 7
    msg = str(err)
    assert "max_tokens=7" in msg and "raise max_tokens" in msg and "reasoning" in msg
    assert "'test-model'" in msg and srv.base_url in msg


async def test_tool_call_error_names_the_tool(srv: OpenAICompatServer) -> None:
    err = await fail_once(srv, Fault.no_text("tool_calls", tool_call="get_weather"))
    assert isinstance(err, LLMToolCallError) and "get_weather" in str(err)


async def test_no_usage_block_gives_a_flagged_estimate(srv: OpenAICompatServer) -> None:
    err = await fail_once(srv, Fault.no_text("length", usage=False), max_tokens=50)
    assert isinstance(err, LLMLengthError)
    assert err.usage is not None and err.usage.estimated
    # The budget is known to be spent even though the server did not say so.
    assert err.usage.completion_tokens == 50 and err.usage.prompt_tokens > 0


async def test_answer_without_usage_block_is_marked_estimated(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.no_usage())
    async with client(srv) as llm:
        estimated = await llm.complete(PROMPT)
        reported = await llm.complete(PROMPT)
    assert estimated.text == reported.text == "alpha beta gamma delta epsilon"
    assert estimated.usage.estimated and not reported.usage.estimated
    assert (reported.usage.prompt_tokens, reported.usage.completion_tokens) == (4, 5)


async def test_partial_text_cut_at_length_is_still_an_answer(srv: OpenAICompatServer) -> None:
    async with client(srv) as llm:
        out = await llm.complete(PROMPT, RequestParams(max_tokens=2))
    assert (out.text, out.finish_reason) == ("alpha beta", "length")
    assert srv.count(CHAT) == 1


# ---------------------------------------------- bodies that are not JSON
@pytest.mark.parametrize("content_type", ["text/event-stream", "application/json"])
async def test_event_stream_to_a_non_stream_request(
    srv: OpenAICompatServer, content_type: str
) -> None:
    err = await fail_once(srv, Fault.sse_body(content_type=content_type))
    assert type(err) is LLMProtocolError and not err.retryable
    assert srv.count(CHAT) == 1
    assert '"stream": false' in str(err)
    assert err.usage is not None and not err.usage.estimated
    assert (err.usage.prompt_tokens, err.usage.completion_tokens) == (4, 5)
    sent = srv.requests[0].body
    assert sent is not None and not sent.get("stream")


async def test_event_stream_without_usage_estimates_from_the_chunks(
    srv: OpenAICompatServer,
) -> None:
    err = await fail_once(srv, Fault.sse_body(usage=False))
    assert isinstance(err, LLMProtocolError)
    assert err.usage is not None and err.usage.estimated and err.usage.completion_tokens > 0


async def test_html_page_is_a_protocol_error_with_a_hint(srv: OpenAICompatServer) -> None:
    err = await fail_once(srv, Fault.html_body())
    assert type(err) is LLMProtocolError and srv.count(CHAT) == 1
    assert "/v1" in str(err) and "text/html" in str(err)
    assert err.usage is None  # nothing says the server billed anything


async def test_truncated_json_is_still_retried(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.malformed_json(), times=2)
    async with client(srv) as llm:
        out = await llm.complete(PROMPT)
    assert out.text.startswith("alpha") and srv.count(CHAT) == 3


# ------------------------------------------------------------ no choices
async def test_empty_choices_with_usage_is_final(srv: OpenAICompatServer) -> None:
    err = await fail_once(srv, Fault.empty_choices())
    assert type(err) is LLMAnswerError and srv.count(CHAT) == 1
    assert err.usage is not None and err.usage.prompt_tokens == 4


async def test_empty_choices_without_usage_is_retried() -> None:
    with OpenAICompatServer(report_usage=False) as srv:
        srv.inject(Fault.empty_choices())
        async with client(srv) as llm:
            out = await llm.complete(PROMPT)
        assert out.text == PROMPT and srv.count(CHAT) == 2


@pytest.mark.parametrize(
    ("code", "error", "requests"),
    [
        (502, LLMServerError, 2),
        (429, LLMRateLimitError, 2),
        ("overloaded_error", LLMServerError, 2),
        (401, LLMAuthError, 1),
        (400, LLMRequestError, 1),
    ],
)
async def test_error_envelope_in_a_200_is_classified_like_its_status(
    srv: OpenAICompatServer, code: int | str, error: type[LLMError], requests: int
) -> None:
    srv.inject(Fault.error_envelope(code, "upstream said no"))
    async with client(srv) as llm:
        if requests == 1:
            with pytest.raises(error) as info:
                await llm.complete(PROMPT)
            assert type(info.value) is error and "upstream said no" in str(info.value)
        else:
            await llm.complete(PROMPT)
    assert srv.count(CHAT) == requests


# ----------------------------------------------------------- Retry-After
@pytest.mark.parametrize(
    "fault",
    [
        Fault.server_error(503, "loading model", retry_after=0.5),
        Fault.server_error(502, "bad gateway", retry_after=0.5),
        Fault.status(408, "slow", retry_after=0.5),
        Fault.rate_limit(retry_after=0.5),
    ],
    ids=["503", "502", "408", "429"],
)
async def test_retry_after_is_honoured_on_any_retryable_status(
    srv: OpenAICompatServer, fault: Fault
) -> None:
    sleeps = Sleeps()
    srv.inject(fault)
    async with client(srv, sleep=sleeps) as llm:
        await llm.complete(PROMPT)
    assert srv.count(CHAT) == 2
    assert sleeps.delays == [0.5]  # the server's hint, not the 0.01 s backoff


async def test_retry_after_on_503_beyond_the_cap_gives_up_at_once(
    srv: OpenAICompatServer,
) -> None:
    srv.inject(Fault.server_error(503, "down for maintenance", retry_after=600), times=None)
    policy = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_retry_after_s=30)
    async with client(srv, retry=policy) as llm:
        with pytest.raises(LLMServerError) as info:
            await llm.complete(PROMPT)
    assert srv.count(CHAT) == 1
    assert info.value.retry_after == 600
    assert "max_retry_after_s=30" in str(info.value) and "600" in str(info.value)


async def test_retry_after_on_503_really_waits(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.server_error(503, retry_after=0.2))
    async with client(srv, sleep=asyncio.sleep) as llm:
        await llm.complete(PROMPT)
    times = [r.received_at for r in srv.requests]
    assert times[1] - times[0] >= 0.19


async def test_x_should_retry_header_overrides_the_status(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.status(500, "final", headers=(("x-should-retry", "false"),)), None)
    async with client(srv) as llm:
        with pytest.raises(LLMServerError):
            await llm.complete(PROMPT)
    assert srv.count(CHAT) == 1
    srv.clear_faults()
    srv.inject(Fault.status(409, "busy", headers=(("x-should-retry", "true"),)))
    async with client(srv) as llm:
        await llm.complete(PROMPT)
    assert srv.count(CHAT) == 3


# -------------------------------------------------------------- deadline
async def test_trickling_answer_hits_the_whole_request_deadline(
    srv: OpenAICompatServer,
) -> None:
    # Each piece arrives well within the timeout; the whole answer (20 x 0.2 s
    # = 4 s) does not. A per-read timeout would wait all 4 s; the deadline
    # ends it at 0.5 s. The 2.5 s bound leaves 2 s for a loaded machine and
    # still tells the two apart.
    srv.inject(Fault.trickle(0.2, pieces=20))
    async with client(srv, retry=None, timeout_s=0.5) as llm:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(LLMTimeoutError, match=r"within 0\.5s"):
            await llm.complete(PROMPT)
        assert loop.time() - t0 < 2.5
    assert srv.count(CHAT) == 1  # one request: the deadline is not retried here


async def test_quick_trickle_within_the_deadline_is_fine(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.trickle(0.01, pieces=3))
    async with client(srv, timeout_s=5.0) as llm:
        out = await llm.complete(PROMPT)
    assert out.text.startswith("alpha")
