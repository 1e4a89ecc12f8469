"""JSON in model answers: parse it, or find it in prose, in time linear in the answer.

Models wrap JSON in prose, write drafts before the answer, and sometimes write
nonsense: ``{`` two hundred thousand times, ``[`` nested five thousand deep, a
number of five thousand digits. ``json.loads`` raises ``RecursionError`` or a
plain ``ValueError`` on the last two, and the obvious scan (``raw_decode`` from
every ``{``) is quadratic on the first. Here every failure is a
:class:`json.JSONDecodeError` (what callers already catch as "malformed, ask
again"), and :func:`values` reads each character a bounded number of times.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

__all__ = ["loads", "values"]

_DECODER = json.JSONDecoder()
_WINDOW = 256  # first window decoded (characters); it doubles as needed
_MARGIN = 16  # a failure this close to a window's end may be the cut ("tru" of "true")
_SPECIAL = re.compile(r'["\\{}\[\]]')  # what changes the state of a walk over JSON text


def _problem(exc: BaseException, text: str, pos: int) -> json.JSONDecodeError:
    """The JSONDecodeError that stands for a non-JSON failure of the decoder."""
    if isinstance(exc, RecursionError):
        msg = "the JSON is nested too deeply"
    elif "integer string conversion" in str(exc):
        msg = "a number in the JSON has too many digits"
    elif isinstance(exc, MemoryError):
        msg = "the JSON is too large"
    else:
        msg = str(exc)[:200] or type(exc).__name__
    return json.JSONDecodeError(msg, text, pos)


def loads(text: str) -> Any:
    """``json.loads`` whose every failure is a :class:`json.JSONDecodeError`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError, MemoryError) as exc:
        raise _problem(exc, text, 0) from None


def values(text: str, openers: str = "{[") -> list[tuple[int, int, Any]]:
    """``(start, end, value)`` of the top-level JSON values in ``text`` that start
    with one of ``openers``, in order (prose between them is skipped).

    From each opener ``raw_decode`` reads one value. When that fails at
    position ``p``, ``text[start:p]`` was valid JSON so far: the complete
    values nested in it are taken from one pass over that span (see
    :func:`_complete_within`), and the scan resumes at ``p``, never at
    ``start + 1``, so no character is decoded twice. A number too long for
    ``int`` or nesting too deep for the decoder raises
    :class:`json.JSONDecodeError` for the whole text.
    """
    found: list[tuple[int, int, Any]] = []
    i = _next_opener(text, 0, openers)
    while i >= 0:
        decoded = _decode_at(text, i)
        if isinstance(decoded, int):
            found += _complete_within(text, i, decoded, openers)
            i = _next_opener(text, decoded, openers)
        else:
            found.append((i, decoded[1], decoded[0]))
            i = _next_opener(text, decoded[1], openers)
    return found


def _decode_at(text: str, start: int) -> tuple[Any, int] | int:
    """``(value, end)`` of the JSON value at ``start``, or the position where it failed.

    The decoder reads a window of the text that doubles until the value fits
    or fails well inside it: a failure's :class:`json.JSONDecodeError` counts
    the lines before it, so decoding in the whole text would cost the length
    of the text before ``start`` on every failed attempt.
    """
    size = _WINDOW
    while True:
        window = text[start : start + size]
        try:
            value, end = _DECODER.raw_decode(window)
        except json.JSONDecodeError as exc:
            cut = start + size < len(text) and (
                exc.pos >= size - _MARGIN or exc.msg.startswith("Unterminated string")
            )
            if not cut:
                return start + max(exc.pos, 1)
        except (ValueError, RecursionError, MemoryError) as exc:
            raise _problem(exc, text, start) from None
        else:
            return value, start + end
        size *= 2


def _next_opener(text: str, start: int, openers: str) -> int:
    """Index of the first opener at or after ``start``; -1 when there is none."""
    hit = _opener_pattern(openers).search(text, start)
    return hit.start() if hit else -1


_CAN_START = {  # what may follow an opener (after JSON whitespace) in valid JSON
    "{": r'\{(?=[ \t\n\r]*+["}])',
    "[": r'\[(?=[ \t\n\r]*+[\]\[{"\-0-9tfnNI])',
}


@cache
def _opener_pattern(openers: str) -> re.Pattern[str]:
    """Openers that can start a value: the others would fail at once, and a failed
    decode costs an exception, so 200,000 ``{`` are skipped by the regex engine."""
    return re.compile("|".join(_CAN_START[c] for c in openers))


def _complete_within(text: str, start: int, stop: int, openers: str) -> list[tuple[int, int, Any]]:
    """The outermost complete containers (opening with one of ``openers``) inside
    ``text[start:stop]``, a valid JSON prefix that the decoder could not finish.

    Inside a valid prefix, brackets outside strings pair up exactly as the
    decoder paired them, so a container closed before ``stop`` decodes on its
    own, and one still open at ``stop`` would fail there again.
    """
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    in_string = escaped = False
    last_escape = -2  # index of the last backslash seen in a string
    for special in _SPECIAL.finditer(text, start + 1, stop):
        k, c = special.start(), special.group()
        if in_string:
            if c == "\\":
                escaped = not escaped if k == last_escape + 1 else True
                last_escape = k
            elif c == '"' and not (escaped and k == last_escape + 1):
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            stack.append(k)
        elif c in "}]" and stack:
            opened = stack.pop()
            if text[opened] in openers:
                spans.append((opened, k + 1))
    spans.sort()
    out: list[tuple[int, int, Any]] = []
    covered = -1
    for begin, end in spans:
        if begin >= covered:
            try:
                value = _DECODER.raw_decode(text[begin:end])[0]
            except (ValueError, RecursionError, MemoryError) as exc:
                raise _problem(exc, text, begin) from None
            out.append((begin, end, value))
            covered = end
    return out
