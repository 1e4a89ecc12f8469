"""A spending limit that holds: the cost of a call or an episode is reserved before
it is sent, not counted after it has been spent.

Checking what has been spent before each episode starts lets everything already
under way run past the limit (four episodes in flight at a $0.01 limit spent
$1.21), and a stage that is not a harness run (a build, a formulation) was not
checked at all. :class:`SpendLimit` keeps one account for everything a command
spends: what earlier sessions spent (read from the run store when it starts),
what this session's calls cost, and what the calls and episodes in flight are
expected to cost. :class:`BudgetedLLM` wraps a model so that each call first
reserves its expected cost (its prompt's tokens, and ``max_tokens`` or the
expected answer length) and is refused with :class:`SpendLimitReached`, before
anything is sent, when that would take the account past the limit; the harness
keeps an episode with a refused call out of the run (its calls are kept, so
their cost counts), and resuming plays it again. ``admit`` is the harness's
``before_episode``: it declines an episode whose expected cost does not fit
beside what is spent and what the episodes in flight are expected to spend.

The bound: what is spent stays within the limit but for the amount by which the
calls in flight answer longer than expected. Models without a price cost
nothing here; a caller that needs every model priced checks that first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from lorekit.llm.accounting import Price
from lorekit.llm.base import (
    DEFAULT_PARAMS,
    LLM,
    Completion,
    MessageLike,
    RequestParams,
    Usage,
    as_messages,
    estimate_tokens,
)
from lorekit.llm.errors import LLMError
from lorekit.llm.roles import Roles

DEFAULT_ANSWER_TOKENS = 400
"""Completion tokens a call is expected to take when it sets no ``max_tokens`` and the
caller gave no better figure."""


class SpendLimitReached(LLMError):
    """A call refused before it was sent: its expected cost would pass the limit."""

    retryable = False
    call_meta: ClassVar[Mapping[str, str]] = {"stopped": "spend_limit"}
    """Put on the call's record, so the harness knows the episode was cut short."""


@dataclass(slots=True)
class SpendLimit:
    """One account for everything a command spends; see the module docstring.

    ``spent_before`` is what the store already holds for the same work (earlier
    sessions); ``price(model)`` the price of a model (None: free here);
    ``answer_tokens`` the completion tokens a call is expected to take when it
    sets no ``max_tokens``, and ``episode_usd`` the expected cost of an episode
    (0: episodes are admitted while anything is left)."""

    limit_usd: float
    spent_before: float = 0.0
    price: Callable[[str], Price | None] = field(default=lambda _model: None)
    answer_tokens: int = DEFAULT_ANSWER_TOKENS
    episode_usd: float = 0.0
    spent: float = 0.0
    """What this session's calls cost."""
    ended: float = 0.0
    """What the episodes that ended this session cost (their calls are in ``spent``)."""
    _calls_reserved: float = 0.0
    _episodes: dict[str, float] = field(default_factory=dict)
    stopped: str | None = None
    """Why work was refused (once set, no new episode is admitted)."""
    exhausted: bool = False
    """A call did not fit: from then on no call is sent, whatever its size, so a stage
    that goes on after a refusal (the next episode of a build) spends nothing more."""

    @property
    def total(self) -> float:
        """What is spent: earlier sessions and this one."""
        return self.spent_before + self.spent

    def in_flight(self) -> float:
        """What the episodes under way are still expected to cost, at least what they
        have spent so far (calls not yet counted in any ended episode)."""
        return max(sum(self._episodes.values()), self.spent - self.ended)

    # ------------------------------------------------------------------ episodes
    def admit(self, key: str) -> bool:
        """Whether an episode may start: its expected cost fits beside what is spent and
        what the episodes in flight are expected to cost. Reserves it when it does."""
        if self.stopped is None:
            projected = self.spent_before + self.ended + self.in_flight() + self.episode_usd
            if projected > self.limit_usd or self.total >= self.limit_usd:
                self.stopped = (
                    f"an episode expected to cost ${self.episode_usd:,.4f} would take the "
                    f"spend past ${self.limit_usd:g} (spent ${self.total:,.4f}, in flight "
                    f"${self.in_flight():,.4f})"
                )
        if self.stopped is not None:
            return False
        self._episodes[key] = self.episode_usd
        return True

    def episode_ended(self, key: str, cost_usd: float) -> None:
        """Release an episode's reservation; its calls' cost is counted in ``spent``."""
        self._episodes.pop(key, None)
        self.ended += cost_usd

    # --------------------------------------------------------------------- calls
    def call_cost(self, price: Price, messages: Sequence[Any], params: RequestParams) -> float:
        """The expected cost of one call: its prompt's tokens, and ``max_tokens`` (else
        :attr:`answer_tokens`) of answer."""
        prompt = sum(estimate_tokens(m.content) for m in messages)
        answer = params.max_tokens or self.answer_tokens
        return price.cost(Usage(prompt, answer))

    def reserve(self, cost: float) -> bool:
        """Reserve ``cost`` for a call about to be sent, if it fits under the limit (and
        no call was refused before: see :attr:`exhausted`)."""
        if self.exhausted or self.total + self._calls_reserved + cost > self.limit_usd:
            self.stopped = self.stopped or (
                f"a call expected to cost ${cost:,.4f} would take the spend past "
                f"${self.limit_usd:g} (spent ${self.total:,.4f})"
            )
            self.exhausted = True
            return False
        self._calls_reserved += cost
        return True

    def settle(self, reserved: float, cost: float) -> None:
        """A call came back: release its reservation, count what it cost."""
        self._calls_reserved = max(0.0, self._calls_reserved - reserved)
        self.spent += cost

    def wrap(self, roles: Roles) -> Roles:
        """``roles`` with every model's calls under this limit."""
        return Roles(
            {name: BudgetedLLM(model, self) for name, model in roles.items()}, roles.default
        )


class BudgetedLLM:
    """A model whose every call reserves its expected cost under a :class:`SpendLimit`
    first, and is refused (:class:`SpendLimitReached`) when it does not fit."""

    def __init__(self, inner: LLM, limit: SpendLimit) -> None:
        self.inner = inner
        self.limit = limit

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(
        self, messages: Sequence[MessageLike] | str, params: RequestParams | None = None
    ) -> Completion:
        msgs = as_messages(messages)
        params = params if params is not None else DEFAULT_PARAMS
        price = self.limit.price(self.model)
        if price is None:
            return await self.inner.complete(msgs, params=params)
        expected = self.limit.call_cost(price, msgs, params)
        if not self.limit.reserve(expected):
            raise SpendLimitReached(
                f"not sent: {self.limit.stopped}",
                model=self.model,
                endpoint=str(getattr(self.inner, "endpoint", "") or ""),
            )
        cost = 0.0
        try:
            out = await self.inner.complete(msgs, params=params)
            cost = 0.0 if out.cached else price.cost(out.usage)
            return out
        except LLMError as exc:
            cost = price.cost(exc.usage) if exc.usage is not None else 0.0
            raise
        finally:
            self.limit.settle(expected, cost)
