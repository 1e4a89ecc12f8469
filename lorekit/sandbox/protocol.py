"""Parent side of the worker protocol: length-prefixed JSON with deadlines.

Every read and write takes an absolute deadline and a size bound, so a child
that stalls, floods or sends garbage can make a call fail but never block or
exhaust the parent. Anything malformed raises :class:`ProtocolViolation`; the
caller then kills the child.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

from lorekit.sandbox.errors import ProtocolViolation

HEADER = struct.Struct(">I")
MAX_DEPTH = 64  # deeper JSON from a worker is refused, not parsed recursively


class DeadlineExceeded(Exception):
    """The peer did not read or write in time."""


class Connection:
    """One worker's two pipe ends, as seen from the parent."""

    def __init__(self, rfd: int, wfd: int, max_bytes: int) -> None:
        self.rfd, self.wfd, self.max_bytes = rfd, wfd, max_bytes
        os.set_blocking(rfd, False)
        os.set_blocking(wfd, False)
        self._buffer = bytearray()

    @staticmethod
    def _wait(fd: int, deadline: float, *, write: bool) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded
        ready = select.select([], [fd], [], left) if write else select.select([fd], [], [], left)
        if not (ready[1] if write else ready[0]):
            raise DeadlineExceeded

    def pending(self) -> bool:
        """Whether the worker has written anything not read yet."""
        if self._buffer:
            return True
        try:
            return bool(select.select([self.rfd], [], [], 0)[0])
        except (OSError, ValueError):
            return True  # a closed or broken pipe: treat the worker as unusable

    def send(self, message: dict[str, Any], deadline: float) -> None:
        """Write one frame; raises BrokenPipeError if the child is gone."""
        data = json.dumps(message).encode()
        view = memoryview(HEADER.pack(len(data)) + data)
        while view:
            try:
                view = view[os.write(self.wfd, view) :]
            except BlockingIOError:
                self._wait(self.wfd, deadline, write=True)

    def _fill(self, need: int, deadline: float) -> bool:
        """Read until ``need`` bytes are buffered; False on end of stream."""
        while len(self._buffer) < need:
            try:
                chunk = os.read(self.rfd, max(need - len(self._buffer), 65536))
            except BlockingIOError:
                self._wait(self.rfd, deadline, write=False)
                continue
            if not chunk:
                return False
            self._buffer += chunk
        return True

    def recv(self, deadline: float) -> dict[str, Any] | None:
        """The next message, or None once the child closed its end."""
        if not self._fill(HEADER.size, deadline):
            if self._buffer:
                raise ProtocolViolation("the worker closed the pipe in the middle of a frame")
            return None
        (size,) = HEADER.unpack(self._buffer[: HEADER.size])
        if size > self.max_bytes:
            raise ProtocolViolation(
                f"the worker sent a {size}-byte message (limit {self.max_bytes})"
            )
        if not self._fill(HEADER.size + size, deadline):
            raise ProtocolViolation("the worker closed the pipe in the middle of a frame")
        body = bytes(self._buffer[HEADER.size : HEADER.size + size])
        del self._buffer[: HEADER.size + size]
        return decode(body)


def decode(body: bytes) -> dict[str, Any]:
    """One frame's JSON object; anything else (of any kind) is a protocol violation.

    The nesting is checked *before* parsing with a linear scan, because the
    decoder recurses: a frame of a million ``[`` would otherwise raise
    ``RecursionError`` (or worse) out of the parent.
    """
    if _nesting(body) > MAX_DEPTH:
        raise ProtocolViolation(f"the worker sent JSON nested deeper than {MAX_DEPTH} levels")
    try:
        message = json.loads(body)
    except Exception as exc:  # every decoder failure, whatever its type
        raise ProtocolViolation(f"the worker sent malformed JSON: {exc!s:.200}") from None
    if not isinstance(message, dict):
        raise ProtocolViolation("the worker sent a message that is not an object")
    return message


_OPENERS = frozenset(b"[{")
_CLOSERS = frozenset(b"]}")


def _nesting(body: bytes) -> int:
    """Deepest bracket nesting outside strings (an upper bound is enough)."""
    if body.count(b"[") + body.count(b"{") <= MAX_DEPTH:
        return 0  # cannot be deeper than the number of openers: the common case
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in _OPENERS:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        elif byte in _CLOSERS:
            depth -= 1
    return deepest
