"""The HTTP plumbing of the test server: socket bookkeeping and request handling.

The handler only parses and records requests and writes answers; deciding what
to answer (scripts, faults, limits) is :class:`~lorekit.llm.testing.OpenAICompatServer`'s
job. Split out so the server module reads as behaviour, not as ``http.server``
boilerplate.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, cast

from lorekit.llm.testing_faults import RecordedRequest


class RequestOwner(Protocol):
    """What the handler hands requests to: the server that decides the answers
    (:class:`~lorekit.llm.testing.OpenAICompatServer`). A protocol, so the
    plumbing stays below the server that uses it."""

    def _record(self, request: RecordedRequest) -> None: ...

    def _handle(self, handler: ChatHandler, body: dict[str, Any] | None) -> None: ...


class ChatHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer that remembers its open connections so close() can cut them.

    Clients keep connections alive between requests; without this, handler
    threads would sit in ``readline`` after shutdown until the client left.
    """

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # the default of 5 resets connections in concurrent bursts

    def __init__(self, owner: RequestOwner) -> None:
        self.owner = owner
        self.open_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), ChatHandler)

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


class ChatHandler(BaseHTTPRequestHandler):
    """Turns HTTP requests into calls on the owning :class:`OpenAICompatServer`."""

    protocol_version = "HTTP/1.1"  # keep-alive, as real servers and the SDK's pool expect
    timeout = 30  # an idle connection cannot pin a thread forever
    disable_nagle_algorithm = True  # headers and body go out as separate writes; no 40 ms stalls

    @property
    def owner(self) -> RequestOwner:
        return cast(ChatHTTPServer, self.server).owner

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
            self.send_json(400, error_body("request body is not valid JSON", "invalid_request"))
            return
        if body is not None and not isinstance(body, dict):
            self._record(None)
            message = "request body must be a JSON object"
            self.send_json(400, error_body(message, "invalid_request"))
            return
        self._dispatch(body)

    def _record(self, body: dict[str, Any] | None) -> None:
        self.owner._record(
            RecordedRequest(
                self.command,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                body,
                peer=(str(self.client_address[0]), int(self.client_address[1])),
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

    def send_raw(
        self,
        status: int,
        data: bytes,
        headers: tuple[tuple[str, str], ...] = (),
        *,
        content_type: str = "application/json",
        pieces: int = 1,
        pause: Callable[[], object] | None = None,
    ) -> None:
        """Send a body with an exact Content-Length; with ``pieces > 1`` the body
        goes out in that many parts with ``pause()`` before each after the first."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        size = max(1, -(-len(data) // max(1, pieces)))
        for i, start in enumerate(range(0, len(data), size)):
            if i and pause is not None:
                pause()
            self.wfile.write(data[start : start + size])
            self.wfile.flush()

    def drop(self) -> None:
        """Close the connection without a byte of response."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """The OpenAI error envelope, so SDKs surface our message verbatim."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
