"""The model contract every LoreKit component talks to.

Everything above this layer (agents, graphs, the harness) sees a model only as
an object with one async method, ``complete``. Backends (an OpenAI-compatible
server, a scripted model) and wrappers (cache, limits, accounting) all satisfy
the same :class:`LLM` protocol, so they compose freely:
``CachedLLM(MeteredLLM(LimitedLLM(backend)))``.

This module imports nothing from the rest of the project but :mod:`lorekit.textsafe`
(text made encodable), which sits at the same bottom layer, and the token-count
rule of :mod:`lorekit.llm.counts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from lorekit.llm.counts import COUNT_FIELDS, describe, is_token_count
from lorekit.textsafe import storable

RoleName = Literal["system", "user", "assistant"]
_ROLES: frozenset[str] = frozenset({"system", "user", "assistant"})


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message. ``role`` is the chat role, not an agent role."""

    role: RoleName
    content: str

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ValueError(f"message role must be one of {sorted(_ROLES)}, got {self.role!r}")
        if not isinstance(self.content, str):
            raise TypeError(f"message content must be str, got {type(self.content).__name__}")
        # Every request is built from Messages: a lone surrogate (half an emoji from a
        # model's answer, fed back in an observation) cannot be sent as UTF-8.
        object.__setattr__(self, "content", storable(self.content))

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


MessageLike = Message | Mapping[str, Any]


def as_messages(messages: Sequence[MessageLike] | str) -> tuple[Message, ...]:
    """Normalise user input (a string, dicts or Messages) into Messages.

    A bare string becomes one user message, which keeps quick scripts short.
    """
    if isinstance(messages, str):
        return (Message("user", messages),)
    out: list[Message] = []
    for i, m in enumerate(messages):
        if isinstance(m, Message):
            out.append(m)
        elif isinstance(m, Mapping):
            try:
                out.append(Message(m["role"], m["content"]))
            except KeyError as exc:
                raise ValueError(f"message {i} lacks the key {exc.args[0]!r}") from None
        else:
            raise TypeError(f"message {i} must be a Message or a mapping, got {type(m).__name__}")
    if not out:
        raise ValueError("a request needs at least one message")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one call.

    ``estimated`` is True when the counts were not reported by a server but
    guessed locally (a server that sends no usage block, a scripted model):
    reports mark such numbers (``~1,234``) so nobody mistakes them for a bill.

    A count that cannot be one (not an int in 0..``MAX_CALL_TOKENS``: ``10**19``,
    ``-5``, ``12.5``, ``"12"``) is refused when the Usage is built: it reads 0, the
    usage is marked estimated, and ``refused`` says what was given
    (:mod:`lorekit.llm.counts`); the run store keeps that note on the call.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    refused: str | None = None

    def __post_init__(self) -> None:
        given = dict(zip(COUNT_FIELDS, (self.prompt_tokens, self.completion_tokens), strict=True))
        bad = [describe(n, v) for n, v in given.items() if not is_token_count(v)]
        if bad:
            for name, value in given.items():
                object.__setattr__(self, name, value if is_token_count(value) else 0)
            object.__setattr__(self, "estimated", True)
            object.__setattr__(self, "refused", "; ".join([*bad, *filter(None, [self.refused])]))

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.estimated or other.estimated,
            self.refused or other.refused,
        )


@dataclass(frozen=True, slots=True)
class Completion:
    """A model's answer plus what it cost.

    ``cached`` is True when the answer came from the cache; such answers keep
    the usage the original call reported (so a replayed run can show what it
    would have cost) but accounting does not count them as spent.
    """

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    latency_s: float = 0.0
    cached: bool = False
    finish_reason: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.text, str):  # an answer is quoted back in the next request
            object.__setattr__(self, "text", storable(self.text))


@dataclass(frozen=True, slots=True, init=False)
class RequestParams:
    """The sampling parameters of one request, validated and in canonical form.

    One object travels from the caller through every wrapper to the backend,
    so the rules live here once: ``temperature`` within [0, 2], ``max_tokens``
    a positive int or None, ``sample`` an int >= 0, ``stop`` a tuple (a single
    string is one stop sequence; an empty list is no stop), and a copy of
    ``response_format`` (a caller mutating its dict later cannot change a cache
    key). ``sample`` tells apart otherwise identical requests: at temperature
    > 0, sample 0 and sample 1 are two draws that caches keep apart; servers
    never see it.
    """

    temperature: float
    max_tokens: int | None
    stop: tuple[str, ...] | None
    response_format: Mapping[str, Any] | None
    sample: int

    def __init__(
        self,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        stop: Sequence[str] | str | None = None,
        response_format: Mapping[str, Any] | None = None,
        sample: int = 0,
    ) -> None:
        if not 0.0 <= float(temperature) <= 2.0:
            raise ValueError(f"temperature must be within [0, 2], got {temperature}")
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0
        ):
            raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
        if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
            raise ValueError(f"sample must be an int >= 0, got {sample!r}")
        stops = (stop,) if isinstance(stop, str) else (tuple(stop) if stop else None)
        if stops is not None and not all(isinstance(s, str) for s in stops):
            raise ValueError(f"stop must be a string or a list of strings, got {stop!r}")
        stops = tuple(storable(s) for s in stops) if stops else stops  # encodable, as messages
        fmt = dict(response_format) if response_format else None
        # frozen: the fields are set once, here, in their canonical form
        object.__setattr__(self, "temperature", float(temperature))
        object.__setattr__(self, "max_tokens", max_tokens)
        object.__setattr__(self, "stop", stops)
        object.__setattr__(self, "response_format", fmt)
        object.__setattr__(self, "sample", sample)

    def to_dict(self) -> dict[str, Any]:
        """The canonical form that cache keys and call records are made of."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stop": list(self.stop) if self.stop is not None else None,
            "response_format": dict(self.response_format) if self.response_format else None,
            "sample": self.sample,
        }


DEFAULT_PARAMS = RequestParams()
"""What ``complete(messages)`` asks with: temperature 0, no limits, sample 0."""


@runtime_checkable
class LLM(Protocol):
    """An asynchronous chat model.

    A request is the messages and one :class:`RequestParams`; wrappers hand
    the same object on, so what a caller asked for reaches the backend, the
    cache key and the call record unchanged (forwarded as ``params=params``,
    so a wrapper that passes ``**kwargs`` on works too). Backends that cannot
    use ``params.sample`` ignore it.
    """

    @property
    def model(self) -> str:
        """The model name, as recorded in runs and cache keys."""
        ...

    async def complete(
        self, messages: Sequence[MessageLike] | str, params: RequestParams | None = None
    ) -> Completion:
        """Answer ``messages``; ``params`` None means :data:`DEFAULT_PARAMS`."""
        ...


def estimate_tokens(text: str) -> int:
    """A rough token count (about four characters a token) for models that report none."""
    return max(1, (len(text) + 3) // 4) if text else 0


def estimate_usage(messages: Sequence[Message], answer: str) -> Usage:
    """Locally estimated usage of a request and its answer, flagged as an estimate."""
    prompt = sum(estimate_tokens(m.content) for m in messages)
    return Usage(prompt, estimate_tokens(answer), estimated=True)
