"""Ask a model, parse its answer, and ask again with the problem fed back.

Every method needs the same conversation: send the messages, try to read the
answer, and when it cannot be used tell the model what was wrong and ask
again, a bounded number of times, then record the failure. :func:`ask` is
that loop, written once. The caller supplies what differs: the parser, the
wording of the feedback, how many answers to allow. What the loop did comes
back whole in an :class:`Answer` (every attempt with its text, its problem
and its usage), so a method records failures exactly as it wants to.

Two kinds of failure are kept apart on purpose:

- a :class:`ParseError` (raised by the parser) is an answer the model can fix;
  it is fed back and the model is asked again;
- an :class:`~lorekit.llm.errors.LLMError` (the call itself failed) is not an
  answer at all. The backend has already retried what is worth retrying, and
  sending the same request again would only be billed again, so the loop stops
  at once: the error is raised, or kept in the answer (``model_error="keep"``)
  for a caller that records failed calls itself.

Anything else the parser raises is a bug in the parser and propagates as is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar, cast

from lorekit.llm.base import LLM, Completion, Message, RequestParams, Usage
from lorekit.llm.errors import LLMError

T = TypeVar("T")

ModelErrors = Literal["raise", "keep"]


class ParseError(ValueError):
    """An answer that cannot be used, and what to tell the model about it.

    Methods subclass it for their own answers (a JSON plan, a code block, a
    tool call). ``feedback`` is the problem in words the model can act on;
    the caller's ``feedback`` function may wrap it in its own template.
    ``final`` marks a problem that asking again cannot fix (the parser itself
    broke on the answer): the loop then stops without another attempt.
    """

    def __init__(self, feedback: str, *, final: bool = False) -> None:
        super().__init__(feedback)
        self.feedback = feedback
        self.final = final


class NoAnswer(RuntimeError):
    """:attr:`Answer.value` was read from an ask that got no usable answer."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One model call of an ask and what became of its answer.

    ``completion`` is None when the call failed (``model_error`` says how);
    ``error`` is the parser's refusal of an answer that came. ``latency_s`` is
    measured around the call, so it includes what the wrappers added (a
    limiter's wait); the completion's own ``latency_s`` is the backend's.
    """

    number: int
    completion: Completion | None
    latency_s: float
    error: ParseError | None = None
    model_error: LLMError | None = None

    @property
    def text(self) -> str | None:
        """The answer's text; None for a failed call."""
        return self.completion.text if self.completion is not None else None

    @property
    def ok(self) -> bool:
        """An answer came and the parser accepted it."""
        return self.completion is not None and self.error is None

    @property
    def usage(self) -> Usage:
        """Tokens of the answer, or those billed for a failed call (zero if none)."""
        if self.completion is not None:
            return self.completion.usage
        if self.model_error is not None and self.model_error.usage is not None:
            return self.model_error.usage
        return Usage()


@dataclass(frozen=True, slots=True)
class Answer(Generic[T]):
    """What an ask produced: the parsed value (when one was accepted) and
    every attempt, in order, accepted or not."""

    attempts: tuple[Attempt, ...]
    parsed: T | None = None
    ok: bool = False

    @property
    def value(self) -> T:
        """The accepted value; :class:`NoAnswer` if there is none."""
        if not self.ok:
            raise NoAnswer(self.describe())
        return cast(T, self.parsed)  # ok: parse returned it, whatever T is (None too)

    @property
    def text(self) -> str | None:
        """The last answer's text (None if no call gave one)."""
        texts = [a.text for a in self.attempts if a.text is not None]
        return texts[-1] if texts else None

    @property
    def error(self) -> ParseError | None:
        """Why the last answer was refused (None if it was accepted, or the call failed)."""
        return self.attempts[-1].error if self.attempts else None

    @property
    def model_error(self) -> LLMError | None:
        """The failed call that ended the ask (``model_error="keep"`` only)."""
        return self.attempts[-1].model_error if self.attempts else None

    @property
    def usage(self) -> Usage:
        """The tokens of every attempt together."""
        total = Usage()
        for a in self.attempts:
            total = total + a.usage
        return total

    def describe(self) -> str:
        """One line on how the ask ended."""
        n = len(self.attempts)
        if self.ok:
            return f"accepted answer {n} of {n}"
        if self.model_error is not None:
            return f"the model call failed: {self.model_error}"
        last = self.error.feedback if self.error is not None else "none"
        return f"no usable answer after {n} attempts; last problem: {last}"


def _as_is(error: ParseError) -> str:
    return error.feedback


async def ask(
    llm: LLM | Callable[[int], LLM],
    messages: list[Message],
    parse: Callable[[Completion], T],
    *,
    params: RequestParams | None = None,
    attempts: int = 3,
    feedback: Callable[[ParseError], str] = _as_is,
    on_attempt: Callable[[Attempt], None] | None = None,
    model_error: ModelErrors = "raise",
    answer_as: Callable[[Completion], str] | None = None,
) -> Answer[T]:
    """Ask until ``parse`` accepts an answer, at most ``attempts`` answers.

    ``messages`` is the conversation and grows in place: each answer is
    appended as an assistant message, and after a refused answer that is not
    the last, the user message ``feedback(error)`` (by default the error's own
    ``feedback``), so the caller can go on with the same conversation.
    ``llm`` is a model, or a function of the attempt number (0, 1, ...) giving
    the model for that attempt (to tag each call's record with it).
    ``on_attempt`` sees each attempt as it ends, before the next call is made.
    ``answer_as`` gives the text each answer is written back as (default: as
    it came; a method may strip it, or name an empty answer, which some
    servers refuse as an assistant message).
    A failed call ends the ask: with ``model_error="raise"`` (the default) its
    :class:`LLMError` propagates; with ``"keep"`` it is the answer's last
    attempt. A :class:`ParseError` with ``final`` set ends it too.
    """
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"attempts must be a whole number >= 1, got {attempts!r}")
    if model_error not in ("raise", "keep"):
        raise ValueError(f"model_error must be 'raise' or 'keep', got {model_error!r}")
    done: list[Attempt] = []

    def end(attempt: Attempt) -> None:
        done.append(attempt)
        if on_attempt is not None:
            on_attempt(attempt)

    for number in range(attempts):
        model = llm if isinstance(llm, LLM) else llm(number)
        t0 = time.perf_counter()
        try:
            # a snapshot: a model that keeps its argument must not see later turns
            out = await model.complete(list(messages), params=params)
        except LLMError as exc:
            end(Attempt(number, None, time.perf_counter() - t0, model_error=exc))
            if model_error == "raise":
                raise
            return Answer(tuple(done))
        latency = time.perf_counter() - t0
        messages.append(Message("assistant", out.text if answer_as is None else answer_as(out)))
        try:
            value = parse(out)
        except ParseError as exc:
            end(Attempt(number, out, latency, error=exc))
            if exc.final or number + 1 == attempts:
                break
            messages.append(Message("user", feedback(exc)))
            continue
        end(Attempt(number, out, latency))
        return Answer(tuple(done), value, True)
    return Answer(tuple(done))
