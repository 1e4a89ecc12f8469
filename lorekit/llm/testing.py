"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests.

Mocking the ``openai`` SDK would test our assumptions about the SDK, not the
SDK. This server speaks real HTTP on an ephemeral local port, so a test
exercises the whole path: our client, the SDK, its HTTP stack, sockets,
timeouts and keep-alive. Faults (429 with Retry-After, 5xx, slow answers,
broken JSON, dropped connections) are injected on demand, and every request
the server saw is kept, so a test can count exactly how many attempts the
client made.

Standard library only: it must run wherever the tests run, offline.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, cast

FaultKind = Literal[
    "status", "slow", "malformed_json", "empty_choices", "missing_content", "disconnect"
]
Script = Sequence[str] | Callable[[dict[str, Any]], str]

EXHAUSTED_STATUS = 410
"""Status sent once a list script has no answers left.

A 4xx, not a 5xx, on purpose: clients do not retry it, so a test with too
short a script fails at once with a message saying so, not after a round of
pointless retries.
"""


@dataclass(frozen=True, slots=True)
class Fault:
    """One misbehaviour the server applies to one request.

    Build faults with the constructors (``Fault.rate_limit()``, ...) rather
    than by hand; the fields are the constructors' shared vocabulary.
    """

    kind: FaultKind
    code: int = 200
    message: str = ""
    delay_s: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    error_code: str | None = None

    @classmethod
    def rate_limit(
        cls,
        retry_after: float | str | None = None,
        message: str = "rate limit exceeded",
        error_code: str | None = None,
    ) -> Fault:
        """HTTP 429. ``retry_after`` in seconds, or a ready-made header value (an HTTP date).

        ``error_code`` fills ``error.code`` in the body (OpenAI sends
        ``"insufficient_quota"`` with a 429 when the budget is spent)."""
        headers: tuple[tuple[str, str], ...] = ()
        if retry_after is not None:
            value = retry_after if isinstance(retry_after, str) else f"{retry_after:g}"
            headers = (("Retry-After", value),)
        return cls("status", 429, message, headers=headers, error_code=error_code)

    @classmethod
    def server_error(cls, code: int = 500, message: str = "internal server error") -> Fault:
        """An HTTP 5xx answer, which clients should treat as transient."""
        if not 500 <= code <= 599:
            raise ValueError(f"server_error needs a 5xx status, got {code}")
        return cls("status", code, message)

    @classmethod
    def status(cls, code: int, message: str = "", error_code: str | None = None) -> Fault:
        """Any error status with an OpenAI-style error body (400, 401, 404 unknown model, ...)."""
        if not 400 <= code <= 599:
            raise ValueError(f"an error fault needs a 4xx or 5xx status, got {code}")
        return cls("status", code, message or f"injected HTTP {code}", error_code=error_code)

    @classmethod
    def slow(cls, delay_s: float) -> Fault:
        """Sleep ``delay_s`` before answering normally; for exercising client timeouts."""
        if delay_s < 0:
            raise ValueError(f"delay_s must be >= 0, got {delay_s}")
        return cls("slow", delay_s=delay_s)

    @classmethod
    def malformed_json(cls) -> Fault:
        """HTTP 200 labelled JSON whose body is cut off mid-document."""
        return cls("malformed_json")

    @classmethod
    def empty_choices(cls) -> Fault:
        """HTTP 200 with a well-formed completion that has no choices."""
        return cls("empty_choices")

    @classmethod
    def missing_content(cls) -> Fault:
        """HTTP 200 with one choice whose message content is null."""
        return cls("missing_content")

    @classmethod
    def disconnect(cls) -> Fault:
        """Read the request, then close the socket without answering."""
        return cls("disconnect")


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server received it; ``body`` is the parsed JSON (or None).

    Header names are lower-cased: HTTP treats them case-insensitively and
    clients differ in how they spell them, so tests should not care.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    received_at: float = field(default_factory=time.monotonic)


class _Server(ThreadingHTTPServer):
    """ThreadingHTTPServer that remembers its open connections so close() can cut them.

    Clients keep connections alive between requests; without this, handler
    threads would sit in ``readline`` after shutdown until the client left.
    """

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # the default of 5 resets connections in concurrent bursts

    def __init__(self, owner: OpenAICompatServer) -> None:
        self.owner = owner
        self.open_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet when a client hangs up mid-answer (expected after client timeouts)."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def cut_connections(self) -> None:
        """Shut down every open client socket so idle keep-alive handlers exit."""
        with self.sockets_lock:
            sockets = list(self.open_sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    """Turns HTTP requests into calls on the owning :class:`OpenAICompatServer`."""

    protocol_version = "HTTP/1.1"  # keep-alive, as real servers and the SDK's pool expect
    timeout = 30  # an idle connection cannot pin a thread forever
    disable_nagle_algorithm = True  # headers and body go out as separate writes; no 40 ms stalls

    @property
    def owner(self) -> OpenAICompatServer:
        return cast(_Server, self.server).owner

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging; tests assert on ``srv.requests`` instead."""

    def do_GET(self) -> None:
        self._dispatch(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            self._record(None)
            self.send_json(400, _error_body("request body is not valid JSON", "invalid_request"))
            return
        if body is not None and not isinstance(body, dict):
            self._record(None)
            message = "request body must be a JSON object"
            self.send_json(400, _error_body(message, "invalid_request"))
            return
        self._dispatch(body)

    def _record(self, body: dict[str, Any] | None) -> None:
        self.owner._record(
            RecordedRequest(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
            )
        )

    def _dispatch(self, body: dict[str, Any] | None) -> None:
        self._record(body)
        try:
            self.owner._handle(self, body)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (e.g. its timeout fired during a slow fault); nothing to do.
            self.close_connection = True

    def send_json(
        self, status: int, payload: Any, headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        """Send a JSON document with an exact Content-Length (required for keep-alive)."""
        self.send_raw(status, json.dumps(payload).encode(), headers)

    def send_raw(self, status: int, data: bytes, headers: tuple[tuple[str, str], ...] = ()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def drop(self) -> None:
        """Close the connection without a byte of response."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """The OpenAI error envelope, so SDKs surface our message verbatim."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


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
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        latency_s: float = 0.0,
        model_name: str | None = None,
        models: Sequence[str] = ("test-model",),
        report_usage: bool = True,
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
        self._lock = threading.Lock()
        self._faults: deque[Fault] = deque()
        self._sticky: Fault | None = None
        self._requests: list[RecordedRequest] = []
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> OpenAICompatServer:
        """Bind an ephemeral port on 127.0.0.1 and serve in a daemon thread."""
        if self._server is not None:
            raise RuntimeError("OpenAICompatServer is already running")
        self._stopping.clear()
        self._server = _Server(self)
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
    def _handle(self, handler: _Handler, body: dict[str, Any] | None) -> None:
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
            payload = _error_body(fault.message, kind, fault.error_code)
            handler.send_json(fault.code, payload, fault.headers)
            return
        if handler.command == "GET" and path == "/v1/models":
            handler.send_json(200, self._models_body())
        elif handler.command == "POST" and path == "/v1/chat/completions":
            self._answer_chat(handler, body or {}, fault)
        else:
            message = f"no route for {handler.command} {path}"
            handler.send_json(404, _error_body(message, "not_found"))

    def _models_body(self) -> dict[str, Any]:
        created = int(time.time())
        data = [
            {"id": m, "object": "model", "created": created, "owned_by": "lorekit"}
            for m in self.models
        ]
        return {"object": "list", "data": data}

    def _answer_chat(self, handler: _Handler, body: dict[str, Any], fault: Fault | None) -> None:
        if fault is not None and fault.kind == "malformed_json":
            handler.send_raw(200, b'{"id": "chatcmpl-broken", "choices": [{"index": 0, "mess')
            return
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            handler.send_json(
                400,
                _error_body(
                    "'messages' must be a non-empty list", "invalid_request", "invalid_messages"
                ),
            )
            return
        try:
            answer = self._next_text(body)
        except _ScriptExhaustedError as exc:
            handler.send_json(EXHAUSTED_STATUS, _error_body(str(exc), "script_exhausted"))
            return
        except Exception as exc:  # a buggy test script; report it like a server would
            message = f"script raised {type(exc).__name__}: {exc}"
            handler.send_json(500, _error_body(message, "script_error"))
            return
        text, finish = _apply_limits(answer, body.get("stop"), body.get("max_tokens"))
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": finish,
            "logprobs": None,
        }
        if fault is not None and fault.kind == "missing_content":
            choice["message"]["content"] = None
        payload: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name or str(body.get("model", "")),
            "choices": [] if fault is not None and fault.kind == "empty_choices" else [choice],
        }
        if self.report_usage:
            prompt = sum(
                _count_words(str(m.get("content") or "")) for m in messages if isinstance(m, dict)
            )
            completion = _count_words(text)
            payload["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
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


def _apply_limits(text: str, stop: Any, max_tokens: Any) -> tuple[str, str]:
    """Honour ``stop`` and ``max_tokens`` the way real servers do, in word units."""
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    for s in stops:
        if isinstance(s, str) and s and s in text:
            text = text[: text.index(s)]
    if isinstance(max_tokens, int) and _count_words(text) > max_tokens:
        return " ".join(text.split()[:max_tokens]), "length"
    return text, "stop"
