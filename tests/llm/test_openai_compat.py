"""End-to-end tests of OpenAICompatLLM against a real local HTTP server.

Each test counts the requests the server actually received, so "retried",
"not retried" and "gave up after N" are facts observed on the wire, not
assumptions about the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from lorekit.llm.base import LLM, Message, RequestParams
from lorekit.llm.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMRequestError,
    LLMResponseError,
    LLMServerError,
    LLMTimeoutError,
)
from lorekit.llm.openai_compat import (
    LOCAL_PLACEHOLDER_KEY,
    OpenAICompatLLM,
    is_local_url,
    parse_retry_after,
)
from lorekit.llm.retry import RetryPolicy
from lorekit.llm.testing import Fault, OpenAICompatServer

CHAT = "/v1/chat/completions"
FAST = RetryPolicy(max_attempts=4, base_delay_s=0.01, max_delay_s=0.02, jitter=0.0)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests must not depend on the developer's OpenAI settings."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def srv() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as server:
        yield server


class Recorder:
    """Fake sleep and on_retry hook: records what the retry loop decided."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.retries: list[tuple[int, type[LLMError], float]] = []

    async def sleep(self, seconds: float) -> None:
        self.delays.append(seconds)

    def on_retry(self, attempt: int, error: LLMError, delay: float) -> None:
        self.retries.append((attempt, type(error), delay))


@contextlib.asynccontextmanager
async def client(
    srv: OpenAICompatServer, rec: Recorder | None = None, **kwargs: Any
) -> AsyncIterator[OpenAICompatLLM]:
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("timeout_s", 5.0)
    if rec is not None:
        kwargs.update(sleep=rec.sleep, on_retry=rec.on_retry)
    async with OpenAICompatLLM("test-model", base_url=srv.base_url, **kwargs) as llm:
        yield llm


# ---------------------------------------------------------------- happy path
async def test_normal_completion_text_usage_model_latency() -> None:
    with OpenAICompatServer(script=["forty two"], model_name="served-7b", latency_s=0.05) as s:
        async with client(s) as llm:
            out = await llm.complete("what is six times seven")
    assert out.text == "forty two"
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (5, 2)
    assert out.model == "served-7b"  # the model the server reports, not ours
    assert out.latency_s >= 0.05
    assert out.finish_reason == "stop"
    assert out.cached is False


async def test_usage_is_estimated_when_the_server_reports_none() -> None:
    with OpenAICompatServer(script=["abcdefgh"], report_usage=False) as s:
        async with client(s) as llm:
            out = await llm.complete("0123456789ab")
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (3, 2)


async def test_satisfies_the_llm_protocol(srv: OpenAICompatServer) -> None:
    async with client(srv) as llm:
        assert isinstance(llm, LLM)
        assert llm.model == "test-model"
        assert llm.endpoint == srv.base_url


async def test_parameters_reach_the_server_only_when_set(srv: OpenAICompatServer) -> None:
    schema = {"type": "json_object"}
    async with client(srv) as llm:
        await llm.complete("plain", RequestParams(sample=3))
        out = await llm.complete(
            "one two STOP three",
            RequestParams(temperature=0.7, max_tokens=2, stop="STOP", response_format=schema),
        )
    plain, tuned = (r.body for r in srv.requests)
    assert plain is not None and tuned is not None
    assert plain == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "plain"}],
        "temperature": 0.0,
    }  # no max_tokens/stop/response_format, and neither sample nor seed
    assert tuned["temperature"] == 0.7
    assert tuned["max_tokens"] == 2
    assert tuned["stop"] == ["STOP"]
    assert tuned["response_format"] == schema
    assert (out.text, out.finish_reason) == ("one two ", "stop")  # the server applied stop


async def test_messages_as_dicts_or_message_objects(srv: OpenAICompatServer) -> None:
    expected = [{"role": "system", "content": "be terse"}, {"role": "user", "content": "hi"}]
    async with client(srv) as llm:
        await llm.complete(expected)
        a = await llm.complete([Message("system", "be terse"), Message("user", "hi")])
    assert [r.body["messages"] for r in srv.requests if r.body] == [expected, expected]
    assert a.text == "hi"


async def test_bad_messages_fail_before_any_request(srv: OpenAICompatServer) -> None:
    async with client(srv) as llm:
        with pytest.raises(ValueError, match="content"):
            await llm.complete([{"role": "user"}])
        with pytest.raises(ValueError, match="temperature"):
            await llm.complete("hi", RequestParams(temperature=5.0))
    assert srv.request_count == 0


async def test_extra_body_and_default_headers_are_sent(srv: OpenAICompatServer) -> None:
    async with client(srv, extra_body={"top_k": 20}, default_headers={"X-Run": "r1"}) as llm:
        await llm.complete("hi")
    req = srv.requests[0]
    assert req.body is not None and req.body["top_k"] == 20
    assert req.headers["x-run"] == "r1"


# ------------------------------------------------------------------ API keys
async def test_local_server_without_key_gets_a_placeholder(srv: OpenAICompatServer) -> None:
    async with client(srv) as llm:
        await llm.complete("hi")
    assert srv.requests[0].headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"


async def test_key_and_base_url_come_from_the_environment(
    srv: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    async with OpenAICompatLLM("test-model") as llm:
        assert llm.endpoint == srv.base_url
        await llm.complete("hi")
    assert srv.requests[0].headers["authorization"] == "Bearer sk-from-env"


async def test_explicit_key_wins_over_the_environment(
    srv: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    async with client(srv, api_key="sk-explicit") as llm:
        await llm.complete("hi")
    assert srv.requests[0].headers["authorization"] == "Bearer sk-explicit"


def test_missing_key_for_a_remote_endpoint_fails_at_construction() -> None:
    with pytest.raises(LLMAuthError) as info:
        OpenAICompatLLM("gpt-x", base_url="https://api.example.com/v1")
    msg = str(info.value)
    assert "OPENAI_API_KEY" in msg and "gpt-x" in msg and "https://api.example.com/v1" in msg


def test_default_endpoint_is_openai_and_needs_a_key() -> None:
    with pytest.raises(LLMAuthError, match=r"api\.openai\.com"):
        OpenAICompatLLM("gpt-x")


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8000/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://localhost.evil.com/v1", False),
    ],
)
def test_is_local_url(url: str, local: bool) -> None:
    assert is_local_url(url) is local


def test_constructor_validates_arguments() -> None:
    with pytest.raises(ValueError, match="model"):
        OpenAICompatLLM("", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ValueError, match="timeout_s"):
        OpenAICompatLLM("m", base_url="http://127.0.0.1:1/v1", timeout_s=0)


# ------------------------------------------------------- retried faults
@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault.rate_limit(), LLMRateLimitError),
        (Fault.server_error(500), LLMServerError),
        (Fault.server_error(502), LLMServerError),
        (Fault.server_error(503), LLMServerError),
        (Fault.malformed_json(), LLMResponseError),
        (Fault.disconnect(), LLMConnectionError),
        (Fault.status(408, "server gave up waiting"), LLMTimeoutError),
    ],
)
async def test_transient_faults_are_retried_and_recover(
    srv: OpenAICompatServer, fault: Fault, error: type[LLMError]
) -> None:
    rec = Recorder()
    srv.inject(fault, times=2)
    async with client(srv, rec) as llm:
        out = await llm.complete("still here")
    assert out.text == "still here"
    assert srv.count(CHAT) == 3  # two faulty answers, then the good one
    assert [(a, e) for a, e, _ in rec.retries] == [(1, error), (2, error)]
    assert rec.delays == [0.01, 0.02]


async def test_permanent_500_is_bounded_by_max_attempts(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.server_error(500, "kaput"), times=None)
    rec = Recorder()
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.01, jitter=0.0)
    async with client(srv, rec, retry=policy) as llm:
        with pytest.raises(LLMServerError) as info:
            await llm.complete("hi")
    assert srv.count(CHAT) == 3
    assert len(rec.delays) == 2
    msg = str(info.value)
    assert "after 3 attempts" in msg and "kaput" in msg and "HTTP 500" in msg
    assert info.value.attempts == 3 and info.value.status == 500


async def test_retry_none_makes_exactly_one_attempt(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.server_error(503))
    async with client(srv, retry=None) as llm:
        with pytest.raises(LLMServerError):
            await llm.complete("hi")
    assert srv.count(CHAT) == 1


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (400, LLMRequestError),
        (401, LLMAuthError),
        (403, LLMAuthError),
        (404, LLMRequestError),
        (422, LLMRequestError),
    ],
)
async def test_client_errors_are_not_retried(
    srv: OpenAICompatServer, code: int, error: type[LLMError]
) -> None:
    srv.inject(Fault.status(code, f"server says no ({code})"), times=None)
    rec = Recorder()
    async with client(srv, rec) as llm:
        with pytest.raises(error) as info:
            await llm.complete("hi")
    assert type(info.value) is error
    assert srv.count(CHAT) == 1
    assert rec.delays == []
    assert f"server says no ({code})" in str(info.value)
    assert info.value.status == code
    assert "attempts" not in str(info.value)


async def test_unknown_model_404_names_the_model(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.status(404, "The model `nope` does not exist"))
    async with client(srv) as llm:
        with pytest.raises(LLMRequestError, match="does not exist"):
            await llm.complete("hi")


async def test_exhausted_quota_429_is_not_retried(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.rate_limit(0.01, "You exceeded your quota", "insufficient_quota"), None)
    async with client(srv) as llm:
        with pytest.raises(LLMRequestError, match="exceeded your quota") as info:
            await llm.complete("hi")
    assert not isinstance(info.value, LLMRateLimitError)
    assert srv.count(CHAT) == 1


# ---------------------------------------------------------------- Retry-After
async def test_retry_after_seconds_are_honoured(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.rate_limit(retry_after=0.5))
    srv.inject(Fault.rate_limit(retry_after=0.25))
    rec = Recorder()
    async with client(srv, rec) as llm:
        out = await llm.complete("ok")
    assert out.text == "ok"
    assert srv.count(CHAT) == 3
    assert rec.delays == [0.5, 0.25]  # the server's hints, not the 0.01s backoff


async def test_retry_after_really_waits_with_the_default_sleep(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.rate_limit(retry_after=0.2))
    async with client(srv) as llm:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await llm.complete("ok")
        elapsed = loop.time() - t0
    assert elapsed >= 0.2
    times = [r.received_at for r in srv.requests]
    assert times[1] - times[0] >= 0.19


async def test_retry_after_http_date_is_honoured(srv: OpenAICompatServer) -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    srv.inject(Fault.rate_limit(retry_after=format_datetime(when, usegmt=True)))
    rec = Recorder()
    async with client(srv, rec) as llm:
        await llm.complete("ok")
    assert srv.count(CHAT) == 2
    assert 27.0 <= rec.delays[0] <= 30.0


async def test_retry_after_beyond_the_cap_gives_up_at_once(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.rate_limit(retry_after=120), times=None)
    rec = Recorder()
    async with client(srv, rec) as llm:
        with pytest.raises(LLMRateLimitError) as info:
            await llm.complete("hi")
    assert srv.count(CHAT) == 1
    assert rec.delays == []
    assert info.value.retry_after == 120.0
    assert "120" in str(info.value)


def test_parse_retry_after_forms() -> None:
    now = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"Retry-After": "3"}, now) == 3.0
    assert parse_retry_after({"retry-after": "0.05"}, now) == 0.05
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}, now) == 0.25
    assert parse_retry_after({"Retry-After": "Tue, 01 Jan 2030 12:00:10 GMT"}, now) == 10.0
    assert parse_retry_after({"Retry-After": "Tue, 01 Jan 2030 11:00:00 GMT"}, now) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}, now) is None
    assert parse_retry_after({"Retry-After": "-4"}, now) is None
    assert parse_retry_after({}, now) is None


# ----------------------------------------------------------------- timeouts
async def test_slow_answer_times_out_then_recovers(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.slow(5.0))
    rec = Recorder()
    async with client(srv, rec, timeout_s=1.0) as llm:
        out = await llm.complete("after the wait")
    assert out.text == "after the wait"
    assert srv.count(CHAT) == 2
    assert [e for _, e, _ in rec.retries] == [LLMTimeoutError]
    # the successful attempt only: the timed-out one alone took 1 s
    assert out.latency_s < 1.0


async def test_slow_answer_without_retries_raises_timeout(srv: OpenAICompatServer) -> None:
    srv.inject(Fault.slow(2.0))
    async with client(srv, retry=None, timeout_s=0.3) as llm:
        with pytest.raises(LLMTimeoutError) as info:
            await llm.complete("hi")
    assert "timed out" in str(info.value)
    assert srv.count(CHAT) == 1


async def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    rec = Recorder()
    policy = RetryPolicy(max_attempts=2, base_delay_s=0.01)
    async with OpenAICompatLLM("m", base_url=url, retry=policy, sleep=rec.sleep) as llm:
        with pytest.raises(LLMConnectionError) as info:
            await llm.complete("hi")
    assert len(rec.delays) == 1
    assert "after 2 attempts" in str(info.value) and url in str(info.value)


# ------------------------------------------------------- error messages
@pytest.mark.parametrize(
    "fault",
    [
        Fault.rate_limit(retry_after=0.01),
        Fault.server_error(503),
        Fault.slow(2.0),
        Fault.malformed_json(),
        Fault.empty_choices(),
        Fault.missing_content(),
        Fault.no_text("length"),
        Fault.no_text("tool_calls", tool_call="search"),
        Fault.sse_body(),
        Fault.html_body(),
        Fault.error_envelope(),
        Fault.status(400, "bad request"),
        Fault.status(401, "bad key"),
        Fault.status(404, "no such model"),
        Fault.disconnect(),
    ],
    ids=lambda f: f"{f.kind}-{f.code}",
)
async def test_every_error_names_the_model_and_the_endpoint(
    srv: OpenAICompatServer, fault: Fault
) -> None:
    srv.inject(fault)
    async with client(srv, retry=None, timeout_s=0.3) as llm:
        with pytest.raises(LLMError) as info:
            await llm.complete("hi")
    msg = str(info.value)
    assert "'test-model'" in msg, msg
    assert srv.base_url in msg, msg
    assert info.value.model == "test-model" and info.value.endpoint == srv.base_url


# --------------------------------------------------------------- limiter
class CountingLimiter:
    """A minimal limiter: at most ``limit`` holders, counting the peak."""

    def __init__(self, limit: int) -> None:
        self._sem = asyncio.Semaphore(limit)
        self.active = 0
        self.peak = 0
        self.entered = 0

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        async with self._sem:
            self.active += 1
            self.entered += 1
            self.peak = max(self.peak, self.active)
            try:
                yield
            finally:
                self.active -= 1

    def acquire(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self._slot()


async def test_limiter_bounds_requests_in_flight() -> None:
    limiter = CountingLimiter(2)
    with OpenAICompatServer(latency_s=0.05) as s:
        async with client(s, limiter=limiter) as llm:
            outs = await asyncio.gather(*(llm.complete(f"q{i}") for i in range(8)))
        received = sorted(r.received_at for r in s.requests)
    assert sorted(o.text for o in outs) == sorted(f"q{i}" for i in range(8))
    assert limiter.peak == 2
    assert limiter.entered == 8
    # On the wire: never more than two requests within one server latency window.
    for i in range(len(received) - 2):
        assert received[i + 2] - received[i] >= 0.04


async def test_limiter_wraps_each_attempt_but_not_the_backoff(srv: OpenAICompatServer) -> None:
    limiter = CountingLimiter(1)
    held_while_sleeping: list[int] = []

    async def sleep(seconds: float) -> None:
        held_while_sleeping.append(limiter.active)

    srv.inject(Fault.server_error(503), times=2)
    async with client(srv, limiter=limiter, sleep=sleep) as llm:
        await llm.complete("hi")
    assert limiter.entered == 3  # one slot per attempt
    assert held_while_sleeping == [0, 0]  # the slot was free during both backoffs


# ------------------------------------------------------------- lifecycle
async def test_async_context_manager_closes_the_client(srv: OpenAICompatServer) -> None:
    llm = OpenAICompatLLM("test-model", base_url=srv.base_url)
    async with llm as same:
        assert same is llm
        await llm.complete("hi")
    assert llm._client.is_closed()


async def test_aclose_is_safe_to_call_twice(srv: OpenAICompatServer) -> None:
    llm = OpenAICompatLLM("test-model", base_url=srv.base_url)
    await llm.aclose()
    await llm.aclose()
    assert "test-model" in repr(llm)


async def test_works_with_the_project_limiter() -> None:
    from lorekit.llm.limits import Limiter

    with OpenAICompatServer(latency_s=0.05) as s:
        async with client(s, limiter=Limiter(max_in_flight=1)) as llm:
            await asyncio.gather(*(llm.complete(f"q{i}") for i in range(3)))
        received = sorted(r.received_at for r in s.requests)
    assert received[1] - received[0] >= 0.04 and received[2] - received[1] >= 0.04
