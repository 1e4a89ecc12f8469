"""A scripted model: answers like a model would, without a model.

Tests and simulations need a model whose answers are known in advance,
including wrong, malformed or failing ones. ``ScriptedLLM`` answers from

- a list (consumed in order),
- rules: ``(substring or compiled regex) -> answer``, checked in order against
  the last message (or the whole prompt),
- a function of the messages (sync or async),

and can sleep a fixed or seeded-random latency so that concurrency behaves as
it would against a server. The latency is slept with ``sleep`` (``asyncio.sleep``
unless given): pass a virtual clock's ``sleep`` and a simulated model "thinks"
in virtual time, with no real waiting. An answer that is an exception instance is raised
instead of returned, which is how tests simulate a backend failure.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import random
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from lorekit.llm.base import (
    DEFAULT_PARAMS,
    Completion,
    Message,
    MessageLike,
    RequestParams,
    as_messages,
    estimate_tokens,
    estimate_usage,
)
from lorekit.llm.errors import ScriptExhausted

Answer = str | BaseException
AnswerFn = Callable[[tuple[Message, ...]], "Answer | Awaitable[Answer]"]
Pattern = str | re.Pattern[str]
Rules = Sequence[tuple[Pattern, "Answer | Sequence[Answer]"]]
LatencyFn = Callable[[random.Random], float]
SleepFn = Callable[[float], Awaitable[None]]


class Latency:
    """Seeded latency distributions for simulated models."""

    @staticmethod
    def fixed(seconds: float) -> LatencyFn:
        return lambda _rng: seconds

    @staticmethod
    def uniform(low: float, high: float) -> LatencyFn:
        return lambda rng: rng.uniform(low, high)

    @staticmethod
    def lognormal(median_s: float, sigma: float = 0.5) -> LatencyFn:
        """Long-tailed, like real API latency: median ``median_s``."""
        mu = math.log(median_s)
        return lambda rng: rng.lognormvariate(mu, sigma)


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One call a scripted model received, kept for assertions."""

    messages: tuple[Message, ...]
    params: RequestParams
    answer: str | None
    error: str | None

    @property
    def prompt(self) -> str:
        return "\n".join(m.content for m in self.messages)

    @property
    def last(self) -> str:
        return self.messages[-1].content


class ScriptedLLM:
    """A deterministic stand-in for a chat model. See the module docstring.

    Exactly one of ``answers``, ``rules`` and ``fn`` is the main source.
    ``default`` answers when rules match nothing or a list runs out; without
    it such a call raises :class:`ScriptExhausted`, so a test notices an agent
    asking more often than the script expected.
    """

    def __init__(
        self,
        answers: Sequence[Answer] | None = None,
        *,
        rules: Rules | None = None,
        fn: AnswerFn | None = None,
        default: Answer | None = None,
        match_on: Literal["last", "all"] = "last",
        latency: float | LatencyFn | None = None,
        seed: int = 0,
        model: str = "scripted",
        sleep: SleepFn | None = None,
    ) -> None:
        given = sum(x is not None for x in (answers, rules, fn))
        if given > 1:
            raise ValueError("give ScriptedLLM at most one of answers, rules and fn")
        if given == 0 and default is None:
            raise ValueError("ScriptedLLM needs answers, rules, fn or a default answer")
        self._answers = list(answers) if answers is not None else None
        self._rules: list[tuple[Pattern, list[Answer]]] = [
            (p, [a] if isinstance(a, str | BaseException) else list(a)) for p, a in (rules or [])
        ]
        for pattern, outs in self._rules:
            if not outs:
                raise ValueError(f"rule {pattern!r} has an empty list of answers")
        self._rule_hits = [0] * len(self._rules)
        self._fn = fn
        self._default = default
        self._match_on = match_on
        if isinstance(latency, int | float):
            if latency < 0:
                raise ValueError(f"latency must be >= 0, got {latency}")
            latency = Latency.fixed(float(latency)) if latency > 0 else None
        self._latency = latency
        self._rng = random.Random(seed)
        self._sleep: SleepFn = sleep if sleep is not None else asyncio.sleep
        self._model = model
        self._next = 0
        self.calls: list[ScriptedCall] = []

    @property
    def model(self) -> str:
        return self._model

    @property
    def remaining(self) -> int | None:
        """Answers left in a list script (None for rules and functions)."""
        return None if self._answers is None else len(self._answers) - self._next

    def _match(self, msgs: tuple[Message, ...]) -> Answer | None:
        text = msgs[-1].content if self._match_on == "last" else "\n".join(m.content for m in msgs)
        for i, (pattern, outs) in enumerate(self._rules):
            hit = pattern in text if isinstance(pattern, str) else pattern.search(text) is not None
            if hit:
                answer = outs[min(self._rule_hits[i], len(outs) - 1)]
                self._rule_hits[i] += 1
                return answer
        return None

    async def _pick(self, msgs: tuple[Message, ...]) -> Answer | None:
        if self._answers is not None:
            if self._next < len(self._answers):
                self._next += 1
                return self._answers[self._next - 1]
            return None
        if self._rules:
            return self._match(msgs)
        if self._fn is not None:
            out = self._fn(msgs)
            return await out if inspect.isawaitable(out) else out
        return None

    async def complete(
        self, messages: Sequence[MessageLike] | str, params: RequestParams | None = None
    ) -> Completion:
        msgs = as_messages(messages)
        params = params if params is not None else DEFAULT_PARAMS
        delay = self._latency(self._rng) if self._latency is not None else 0.0
        answer = await self._pick(msgs)
        if answer is None:
            answer = self._default
        if delay > 0:
            await self._sleep(delay)
        if answer is None:
            err = ScriptExhausted(
                f"the script has no answer for call {len(self.calls) + 1} "
                f"(last message: {msgs[-1].content[:80]!r})",
                model=self._model,
                endpoint="scripted",
            )
            self.calls.append(ScriptedCall(msgs, params, None, str(err)))
            raise err
        if isinstance(answer, BaseException):
            self.calls.append(
                ScriptedCall(msgs, params, None, f"{type(answer).__name__}: {answer}")
            )
            raise answer
        text = _apply_stop(answer, params.stop)
        finish = "stop"
        if params.max_tokens is not None and estimate_tokens(text) > params.max_tokens:
            text, finish = text[: params.max_tokens * 4], "length"
        self.calls.append(ScriptedCall(msgs, params, text, None))
        # No server counted these tokens: the usage is an estimate and says so.
        return Completion(text, estimate_usage(msgs, text), self._model, delay, False, finish)


def _apply_stop(text: str, stop: tuple[str, ...] | None) -> str:
    """Cut at the first stop sequence, as a server would."""
    if not stop:
        return text
    cut = min((i for s in stop if s and (i := text.find(s)) >= 0), default=len(text))
    return text[:cut]
