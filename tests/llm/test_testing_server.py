"""Tests for the local OpenAI-compatible test server, spoken to with plain stdlib HTTP.

The server is the ground truth the client tests rely on, so it is checked
here without the openai SDK: if both were wrong in the same way, SDK-based
tests alone could not tell.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlparse

import pytest

from lorekit.llm.testing import EXHAUSTED_STATUS, Fault, OpenAICompatServer


def call(
    srv: OpenAICompatServer,
    body: dict[str, Any] | None = None,
    *,
    method: str = "POST",
    path: str = "/v1/chat/completions",
    headers: dict[str, str] | None = None,
    timeout: float = 5.0,
) -> tuple[int, dict[str, str], bytes]:
    """One request on a fresh connection; returns status, headers and raw body."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def chat(text: str = "hello world", **extra: Any) -> dict[str, Any]:
    return {"model": "test-model", "messages": [{"role": "user", "content": text}], **extra}


def test_base_url_is_local_with_an_ephemeral_port() -> None:
    with OpenAICompatServer() as srv:
        url = urlparse(srv.base_url)
        assert url.scheme == "http" and url.hostname == "127.0.0.1" and url.path == "/v1"
        assert url.port == srv.port and srv.port > 0


def test_two_servers_get_different_ports() -> None:
    with OpenAICompatServer() as a, OpenAICompatServer() as b:
        assert a.port != b.port


def test_chat_completion_has_the_standard_shape() -> None:
    with OpenAICompatServer(script=["the answer"]) as srv:
        status, headers, raw = call(srv, chat("what is it"))
    assert status == 200
    assert headers["content-type"] == "application/json"
    doc = json.loads(raw)
    assert doc["object"] == "chat.completion"
    assert doc["id"].startswith("chatcmpl-")
    assert isinstance(doc["created"], int)
    assert doc["model"] == "test-model"
    assert doc["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "the answer"},
            "finish_reason": "stop",
            "logprobs": None,
        }
    ]
    assert doc["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}


def test_default_script_echoes_the_last_user_message() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "second question"},
        ],
    }
    with OpenAICompatServer() as srv:
        doc = json.loads(call(srv, body)[2])
    assert doc["choices"][0]["message"]["content"] == "second question"


def test_list_script_is_used_in_order_then_reports_exhaustion() -> None:
    with OpenAICompatServer(script=["one", "two"]) as srv:
        texts = [
            json.loads(call(srv, chat())[2])["choices"][0]["message"]["content"] for _ in range(2)
        ]
        status, _, raw = call(srv, chat())
    assert texts == ["one", "two"]
    assert status == EXHAUSTED_STATUS
    assert "exhausted" in json.loads(raw)["error"]["message"]


def test_callable_script_sees_the_request_json() -> None:
    seen: list[dict[str, Any]] = []

    def answer(req: dict[str, Any]) -> str:
        seen.append(req)
        return f"{req['model']} got {len(req['messages'])} message(s)"

    with OpenAICompatServer(script=answer) as srv:
        doc = json.loads(call(srv, chat(temperature=0.3))[2])
    assert doc["choices"][0]["message"]["content"] == "test-model got 1 message(s)"
    assert seen[0]["temperature"] == 0.3


def test_script_that_raises_gives_a_500_naming_the_problem() -> None:
    def broken(req: dict[str, Any]) -> str:
        raise RuntimeError("oops")

    with OpenAICompatServer(script=broken) as srv:
        status, _, raw = call(srv, chat())
    assert status == 500
    assert "RuntimeError: oops" in json.loads(raw)["error"]["message"]


def test_single_string_script_is_rejected() -> None:
    with pytest.raises(TypeError, match="list"):
        OpenAICompatServer(script="just one")


def test_model_name_override_and_missing_usage() -> None:
    with OpenAICompatServer(model_name="served-7b", report_usage=False) as srv:
        doc = json.loads(call(srv, chat())[2])
    assert doc["model"] == "served-7b"
    assert "usage" not in doc


def test_stop_and_max_tokens_take_effect() -> None:
    with OpenAICompatServer(script=["alpha beta END gamma", "a b c d e f"]) as srv:
        stopped = json.loads(call(srv, chat(stop=["END"]))[2])["choices"][0]
        cut = json.loads(call(srv, chat(max_tokens=3))[2])["choices"][0]
    assert stopped["message"]["content"] == "alpha beta "
    assert stopped["finish_reason"] == "stop"
    assert cut["message"]["content"] == "a b c"
    assert cut["finish_reason"] == "length"


def test_models_endpoint_lists_models() -> None:
    with OpenAICompatServer(models=("a", "b")) as srv:
        status, _, raw = call(srv, method="GET", path="/v1/models")
    assert status == 200
    doc = json.loads(raw)
    assert doc["object"] == "list"
    assert [m["id"] for m in doc["data"]] == ["a", "b"]


def test_unknown_route_and_bad_bodies_are_client_errors() -> None:
    with OpenAICompatServer() as srv:
        assert call(srv, chat(), path="/v1/nope")[0] == 404
        assert call(srv, {"model": "m", "messages": []})[0] == 400
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        conn.request(
            "POST",
            "/v1/chat/completions",
            body=b"{not json",
            headers={"Content-Type": "application/json"},
        )
        assert conn.getresponse().status == 400
        conn.close()
        assert srv.request_count == 3


def test_requests_are_recorded_with_path_headers_and_body() -> None:
    with OpenAICompatServer() as srv:
        call(srv, chat("hi"), headers={"Authorization": "Bearer k", "X-Trace": "42"})
        call(srv, method="GET", path="/v1/models")
        reqs = srv.requests
    assert [(r.method, r.path) for r in reqs] == [
        ("POST", "/v1/chat/completions"),
        ("GET", "/v1/models"),
    ]
    assert reqs[0].body == chat("hi")
    assert reqs[0].headers["authorization"] == "Bearer k"
    assert reqs[0].headers["x-trace"] == "42"
    assert reqs[1].body is None
    assert srv.count("/v1/chat/completions") == 1 and srv.count() == 2


def test_rate_limit_fault_sends_429_with_retry_after() -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.rate_limit(retry_after=0.05))
        status, headers, raw = call(srv, chat())
        after = call(srv, chat())[0]
    assert status == 429
    assert headers["retry-after"] == "0.05"
    assert json.loads(raw)["error"]["message"] == "rate limit exceeded"
    assert after == 200  # a fault applies to one request by default


def test_rate_limit_fault_can_carry_an_http_date() -> None:
    date = "Wed, 21 Oct 2037 07:28:00 GMT"
    with OpenAICompatServer() as srv:
        srv.inject(Fault.rate_limit(retry_after=date))
        assert call(srv, chat())[1]["retry-after"] == date


@pytest.mark.parametrize("code", [500, 502, 503])
def test_server_error_fault(code: int) -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.server_error(code, "overloaded"))
        status, _, raw = call(srv, chat())
    assert status == code
    assert json.loads(raw)["error"]["message"] == "overloaded"


def test_status_fault_carries_the_message() -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.status(404, "model 'nope' does not exist"))
        status, _, raw = call(srv, chat())
    assert status == 404
    assert json.loads(raw)["error"]["message"] == "model 'nope' does not exist"


def test_status_fault_can_carry_an_error_code() -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.status(429, "quota", error_code="insufficient_quota"))
        srv.inject(Fault.status(400, "plain"))
        coded = json.loads(call(srv, chat())[2])["error"]
        plain = json.loads(call(srv, chat())[2])["error"]
    assert (coded["code"], coded["message"]) == ("insufficient_quota", "quota")
    assert plain["code"] is None


def test_fault_constructors_validate() -> None:
    with pytest.raises(ValueError):
        Fault.server_error(404)
    with pytest.raises(ValueError):
        Fault.status(200)
    with pytest.raises(ValueError):
        Fault.slow(-1)


def test_slow_fault_delays_then_answers_normally() -> None:
    with OpenAICompatServer(script=["late"]) as srv:
        srv.inject(Fault.slow(0.3))
        t0 = time.perf_counter()
        status, _, raw = call(srv, chat())
        elapsed = time.perf_counter() - t0
    assert status == 200 and elapsed >= 0.3
    assert json.loads(raw)["choices"][0]["message"]["content"] == "late"


def test_slow_fault_past_a_client_timeout_times_out() -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.slow(1.0))
        with pytest.raises(TimeoutError):
            call(srv, chat(), timeout=0.2)
        assert call(srv, chat())[0] == 200


def test_malformed_json_fault_is_not_parseable() -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.malformed_json())
        status, headers, raw = call(srv, chat())
    assert status == 200 and headers["content-type"] == "application/json"
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)


def test_empty_choices_and_missing_content_faults() -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.empty_choices())
        srv.inject(Fault.missing_content())
        empty = json.loads(call(srv, chat())[2])
        missing = json.loads(call(srv, chat())[2])
    assert empty["choices"] == []
    assert missing["choices"][0]["message"]["content"] is None


def test_disconnect_fault_closes_without_answering() -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.disconnect())
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            call(srv, chat())
        assert call(srv, chat())[0] == 200
        assert srv.request_count == 2


def test_faults_queue_in_order_and_times_counts() -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.server_error(503), times=2)
        srv.inject(Fault.status(400, "bad"))
        assert srv.pending_faults == 3
        statuses = [call(srv, chat())[0] for _ in range(4)]
        assert srv.pending_faults == 0
    assert statuses == [503, 503, 400, 200]


def test_permanent_fault_until_cleared() -> None:
    with OpenAICompatServer() as srv:
        srv.inject(Fault.server_error(500), times=None)
        assert [call(srv, chat())[0] for _ in range(3)] == [500, 500, 500]
        srv.clear_faults()
        assert call(srv, chat())[0] == 200


def test_inject_rejects_non_positive_times() -> None:
    with OpenAICompatServer() as srv, pytest.raises(ValueError, match="times"):
        srv.inject(Fault.server_error(), times=0)


def test_latency_applies_to_every_answer() -> None:
    with OpenAICompatServer(latency_s=0.1) as srv:
        t0 = time.perf_counter()
        call(srv, chat())
        call(srv, method="GET", path="/v1/models")
        assert time.perf_counter() - t0 >= 0.2


def test_concurrent_requests_are_all_answered_and_counted() -> None:
    answers = [f"answer {i}" for i in range(40)]
    with OpenAICompatServer(script=answers, latency_s=0.02) as srv:
        with ThreadPoolExecutor(max_workers=16) as pool:
            results = list(pool.map(lambda _: call(srv, chat()), range(40)))
        texts = sorted(json.loads(r[2])["choices"][0]["message"]["content"] for r in results)
        assert srv.request_count == 40
    # Each scripted answer is handed out exactly once, even under concurrency.
    assert texts == sorted(answers)


def test_keep_alive_connection_serves_several_requests() -> None:
    with OpenAICompatServer(script=["a", "b", "c"]) as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        texts = []
        for _ in range(3):
            conn.request(
                "POST",
                "/v1/chat/completions",
                body=json.dumps(chat()),
                headers={"Content-Type": "application/json"},
            )
            texts.append(json.loads(conn.getresponse().read())["choices"][0]["message"]["content"])
        conn.close()
    assert texts == ["a", "b", "c"]


def test_close_frees_the_port_and_stops_threads_even_with_open_connections() -> None:
    srv = OpenAICompatServer()
    before = set(threading.enumerate())
    with srv:
        port = srv.port
        idle = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        idle.request("GET", "/v1/models")
        idle.getresponse().read()  # the keep-alive connection stays open
        srv.inject(Fault.slow(30))  # a handler asleep when we close
        sleeper = threading.Thread(target=lambda: _ignore_errors(srv, port), daemon=True)
        sleeper.start()
        time.sleep(0.1)
        t0 = time.perf_counter()
    # the slow handler was woken, not waited out (30 s); 10 s leaves room for a loaded machine
    assert time.perf_counter() - t0 < 10.0
    sleeper.join(timeout=2)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=0.5)
    with pytest.raises(RuntimeError, match="not running"):
        _ = srv.base_url
    time.sleep(0.1)
    lingering = [t for t in set(threading.enumerate()) - before if t.is_alive()]
    assert lingering == []
    idle.close()


def _ignore_errors(srv: OpenAICompatServer, port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("POST", "/v1/chat/completions", body=json.dumps(chat()))
        conn.getresponse().read()
    except (OSError, http.client.HTTPException):
        pass
    finally:
        conn.close()


def test_cannot_start_twice_and_close_is_idempotent() -> None:
    srv = OpenAICompatServer().start()
    try:
        with pytest.raises(RuntimeError, match="already running"):
            srv.start()
    finally:
        srv.close()
    srv.close()


def test_embeddings_route_answers_only_when_an_embed_function_is_given() -> None:
    with OpenAICompatServer(embed=lambda text: [float(len(text)), 1.0]) as srv:
        status, _, raw = call(srv, {"model": "m", "input": ["ab", "abcd"]}, path="/v1/embeddings")
        body = json.loads(raw)
        assert status == 200 and body["model"] == "m"
        assert [d["embedding"] for d in body["data"]] == [[2.0, 1.0], [4.0, 1.0]]
        assert [d["index"] for d in body["data"]] == [0, 1]
        status, _, raw = call(srv, {"model": "m", "input": "abc"}, path="/v1/embeddings")
        assert status == 200 and json.loads(raw)["data"][0]["embedding"] == [3.0, 1.0]
        status, _, _ = call(srv, {"model": "m", "input": []}, path="/v1/embeddings")
        assert status == 400
    with OpenAICompatServer() as srv:
        status, _, _ = call(srv, {"model": "m", "input": "abc"}, path="/v1/embeddings")
        assert status == 404
