"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests.

Mocking the ``openai`` SDK would test our assumptions about the SDK, not the
SDK. This server speaks real HTTP on an ephemeral local port, so a test
exercises the whole path: our client, the SDK, its HTTP stack, sockets,
timeouts and keep-alive. Faults (429 or 503 with Retry-After, 5xx, slow or
trickling answers, broken JSON, dropped connections, answers without text
and the reasons servers give for them, event streams and HTML where JSON was
due, error envelopes inside a 200) are injected on demand, and every request
the server saw is kept, so a test can count exactly how many attempts the
client made.

The fault and request types live in :mod:`.testing_faults` and the HTTP
plumbing in :mod:`.testing_http`; this module re-exports the public names.

Standard library only: it must run wherever the tests run, offline.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from lorekit.llm.testing_faults import Fault, FaultKind, RecordedRequest
from lorekit.llm.testing_http import ChatHandler, ChatHTTPServer, error_body

__all__ = [
    "EXHAUSTED_STATUS",
    "Embedder",
    "Fault",
    "FaultKind",
    "OpenAICompatServer",
    "RecordedRequest",
    "Script",
]

Script = Sequence[str] | Callable[[dict[str, Any]], str]
Embedder = Callable[[str], Sequence[float]]

EXHAUSTED_STATUS = 410
"""Status sent once a list script has no answers left.

A 4xx, not a 5xx, on purpose: clients do not retry it, so a test with too
short a script fails at once with a message saying so, not after a round of
pointless retries.
"""


def _count_words(text: str) -> int:
    """Token stand-in: whitespace-separated words. Deterministic and easy to predict in tests."""
    return len(text.split())


class OpenAICompatServer:
    """A scripted OpenAI-compatible chat server with fault injection.

    ``script`` decides the answers: a list of strings (used in order; once
    used up, requests get HTTP 410 naming the exhaustion), a callable taking
    the request JSON, or ``None`` to echo the last user message.
    ``model_name`` overrides the model reported in answers (by default the
    requested one is echoed); ``report_usage=False`` omits the usage block,
    as some local servers do; ``latency_s`` delays every answer.

    The server honours ``stop`` (cuts the answer at the first stop string)
    and ``max_tokens`` (keeps that many words, finish_reason ``"length"``), so
    tests can see those parameters take effect.

    ``embed`` (a function from text to vector) turns on ``POST /v1/embeddings``;
    faults apply to it as to chat requests.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        latency_s: float = 0.0,
        model_name: str | None = None,
        models: Sequence[str] = ("test-model",),
        report_usage: bool = True,
        embed: Embedder | None = None,
    ) -> None:
        if latency_s < 0:
            raise ValueError(f"latency_s must be >= 0, got {latency_s}")
        if script is not None and not callable(script) and isinstance(script, str):
            raise TypeError("script must be a list of answers, not a single string")
        self._script = script
        self._answers: list[str] | None = (
            list(script) if script is not None and not callable(script) else None
        )
        self._next_answer = 0
        self.latency_s = latency_s
        self.model_name = model_name
        self.models = tuple(models)
        self.report_usage = report_usage
        self.embed = embed
        self._lock = threading.Lock()
        self._faults: deque[Fault] = deque()
        self._sticky: Fault | None = None
        self._requests: list[RecordedRequest] = []
        self._stopping = threading.Event()
        self._server: ChatHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> OpenAICompatServer:
        """Bind an ephemeral port on 127.0.0.1 and serve in a daemon thread."""
        if self._server is not None:
            raise RuntimeError("OpenAICompatServer is already running")
        self._stopping.clear()
        self._server = ChatHTTPServer(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"OpenAICompatServer:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake sleeping handlers, cut open connections, free the port."""
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.cut_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> OpenAICompatServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("OpenAICompatServer is not running; use it as a context manager")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The URL to hand to a client, e.g. ``http://127.0.0.1:54321/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------ fault control
    def inject(self, fault: Fault, times: int | None = 1) -> None:
        """Apply ``fault`` to the next ``times`` requests; ``None`` means every request
        until :meth:`clear_faults`. Queued faults are used in the order injected."""
        if times is None:
            with self._lock:
                self._sticky = fault
            return
        if times < 1:
            raise ValueError(f"times must be >= 1 (or None for always), got {times}")
        with self._lock:
            self._faults.extend([fault] * times)

    def clear_faults(self) -> None:
        """Drop queued and permanent faults; later requests are answered normally."""
        with self._lock:
            self._faults.clear()
            self._sticky = None

    @property
    def pending_faults(self) -> int:
        """How many queued (one-shot) faults have not been used yet."""
        with self._lock:
            return len(self._faults)

    def _take_fault(self) -> Fault | None:
        with self._lock:
            if self._faults:
                return self._faults.popleft()
            return self._sticky

    # ----------------------------------------------------------- observations
    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    def count(self, path: str | None = None) -> int:
        """Requests received, optionally only those to ``path`` (e.g. ``/v1/chat/completions``)."""
        with self._lock:
            return sum(1 for r in self._requests if path is None or r.path == path)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    # -------------------------------------------------------------- answering
    def _handle(self, handler: ChatHandler, body: dict[str, Any] | None) -> None:
        """Route one request: faults first, then the endpoint's normal answer."""
        path = handler.path.split("?", 1)[0]
        fault = self._take_fault()
        if self.latency_s:
            self._stopping.wait(self.latency_s)
        if fault is not None and fault.kind == "slow":
            self._stopping.wait(fault.delay_s)
            fault = None
        if fault is not None and fault.kind == "disconnect":
            handler.drop()
            return
        if fault is not None and fault.kind == "status":
            kind = "rate_limit_exceeded" if fault.code == 429 else "injected_fault"
            payload = error_body(fault.message, kind, fault.error_code)
            handler.send_json(fault.code, payload, fault.headers)
            return
        if handler.command == "GET" and path == "/v1/models":
            handler.send_json(200, self._models_body())
        elif handler.command == "POST" and path == "/v1/chat/completions":
            self._answer_chat(handler, body or {}, fault)
        elif handler.command == "POST" and path == "/v1/embeddings" and self.embed is not None:
            self._answer_embeddings(handler, body or {}, self.embed)
        else:
            message = f"no route for {handler.command} {path}"
            handler.send_json(404, error_body(message, "not_found"))

    def _models_body(self) -> dict[str, Any]:
        created = int(time.time())
        data = [
            {"id": m, "object": "model", "created": created, "owned_by": "lorekit"}
            for m in self.models
        ]
        return {"object": "list", "data": data}

    def _answer_embeddings(
        self, handler: ChatHandler, body: dict[str, Any], embed: Embedder
    ) -> None:
        """Vectors from ``embed`` for a string or a list of strings, as floats."""
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            message = "'input' must be a string or a non-empty list of strings"
            handler.send_json(400, error_body(message, "invalid_request"))
            return
        try:
            vectors = [[float(x) for x in embed(t)] for t in texts]
        except Exception as exc:  # a buggy test function; report it like a server would
            problem = f"embed raised {type(exc).__name__}: {exc}"
            handler.send_json(500, error_body(problem, "script_error"))
            return
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        words = sum(_count_words(t) for t in texts)
        usage = {"prompt_tokens": words, "total_tokens": words}
        model = str(body.get("model", ""))
        handler.send_json(200, {"object": "list", "data": data, "model": model, "usage": usage})

    def _answer_chat(self, handler: ChatHandler, body: dict[str, Any], fault: Fault | None) -> None:
        kind = fault.kind if fault is not None else None
        if kind == "malformed_json":
            handler.send_raw(200, b'{"id": "chatcmpl-broken", "choices": [{"index": 0, "mess')
            return
        if kind == "html_body":
            page = b"<!doctype html><html><head><title>Chat UI</title></head><body>Hi</body></html>"
            handler.send_raw(200, page, content_type="text/html; charset=utf-8")
            return
        if fault is not None and kind == "error_envelope":
            code: int | str | None = fault.error_code
            code = int(code) if isinstance(code, str) and code.isdigit() else code
            handler.send_json(200, {"error": {"message": fault.message, "code": code}})
            return
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            handler.send_json(
                400,
                error_body(
                    "'messages' must be a non-empty list", "invalid_request", "invalid_messages"
                ),
            )
            return
        try:
            answer = self._next_text(body)
        except _ScriptExhaustedError as exc:
            handler.send_json(EXHAUSTED_STATUS, error_body(str(exc), "script_exhausted"))
            return
        except Exception as exc:  # a buggy test script; report it like a server would
            problem = f"script raised {type(exc).__name__}: {exc}"
            handler.send_json(500, error_body(problem, "script_error"))
            return
        text, finish = _apply_limits(answer, body.get("stop"), body.get("max_tokens"))
        message: dict[str, Any] = {"role": "assistant", "content": text}
        completion = _count_words(text)
        if kind in ("missing_content", "no_text"):
            message["content"] = None
            if fault is not None and kind == "no_text":
                message.update(dict(fault.fields))
                finish = fault.finish_reason or "stop"
                completion = _emitted_words(message, finish, body.get("max_tokens"))
        choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "finish_reason": finish,
            "logprobs": None,
        }
        payload: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name or str(body.get("model", "")),
            "choices": [] if kind == "empty_choices" else [choice],
        }
        if self.report_usage and (fault is None or fault.usage):
            prompt = sum(
                _count_words(str(m.get("content") or "")) for m in messages if isinstance(m, dict)
            )
            payload["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        if fault is not None and kind == "usage":
            payload["usage"] = dict(fault.fields)
        if fault is not None and kind == "sse_body":
            handler.send_raw(200, _as_event_stream(payload, text), content_type=fault.message)
        elif fault is not None and kind == "trickle":
            data = json.dumps(payload).encode()
            delay = fault.delay_s
            handler.send_raw(
                200, data, pieces=fault.pieces, pause=lambda: self._stopping.wait(delay)
            )
        else:
            handler.send_json(200, payload)

    def _next_text(self, body: dict[str, Any]) -> str:
        """The scripted answer for this request (thread-safe for list scripts)."""
        if self._answers is not None:
            with self._lock:
                if self._next_answer >= len(self._answers):
                    raise _ScriptExhaustedError(
                        f"OpenAICompatServer script exhausted: all {len(self._answers)} "
                        f"scripted answers were used; add answers or pass a callable"
                    )
                answer = self._answers[self._next_answer]
                self._next_answer += 1
            return answer
        if callable(self._script):
            return str(self._script(body))
        users = [m for m in body["messages"] if isinstance(m, dict) and m.get("role") == "user"]
        last = users[-1] if users else body["messages"][-1]
        return str(last.get("content") or "") if isinstance(last, dict) else ""


class _ScriptExhaustedError(Exception):
    """Internal signal: a list script has no answers left."""


def _emitted_words(message: dict[str, Any], finish: str, max_tokens: Any) -> int:
    """Completion tokens of an answer without text: the whole budget when it ran
    out, else the words of whatever the model did emit (reasoning, refusal)."""
    if finish == "length" and isinstance(max_tokens, int):
        return max_tokens
    said = [v for k, v in message.items() if k != "role" and isinstance(v, str)]
    return sum(_count_words(v) for v in said) + len(message.get("tool_calls") or [])


def _as_event_stream(payload: dict[str, Any], text: str) -> bytes:
    """A completion re-sent as streaming chunks (one per word), as an SSE body."""
    base = {k: payload[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    words = text.split(" ")
    for i, word in enumerate(words):
        piece = word if i == 0 else " " + word
        events.append({**base, "choices": [{"index": 0, "delta": {"content": piece}}]})
    finish = payload["choices"][0]["finish_reason"] if payload["choices"] else "stop"
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if "usage" in payload:
        events.append({**base, "choices": [], "usage": payload["usage"]})
    lines = [f"data: {json.dumps(e)}\n\n" for e in events] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


def _apply_limits(text: str, stop: Any, max_tokens: Any) -> tuple[str, str]:
    """Honour ``stop`` and ``max_tokens`` the way real servers do, in word units."""
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    for s in stops:
        if isinstance(s, str) and s and s in text:
            text = text[: text.index(s)]
    if isinstance(max_tokens, int) and _count_words(text) > max_tokens:
        return " ".join(text.split()[:max_tokens]), "length"
    return text, "stop"
