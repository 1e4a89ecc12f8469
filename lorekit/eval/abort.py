"""Stop a run early when its first episodes all fail with the same error.

A wrong ``--base-url``, a bad API key, an unknown model name, a used-up quota,
a server that is down, or an agent option of the wrong type makes every
episode fail the same way, model errors each only after their full retries
and backoff: a 200-episode run would spend minutes (and hundreds of connection
attempts) to report 200 copies of one error. :class:`EarlyStop` watches the
episodes as they finish; when the first ``first`` of them all ended with the
same error, it cancels the rest and raises :class:`RunAborted`. "The same"
means the same type and message (for a model error: the same type, model,
endpoint, status and reason). One episode that ends any other way among the
first ones disarms the rule for the rest of the run: from then on failures
are results, not a broken setup. An episode timeout never counts as such an
error: a slow agent is a finding, not a broken setup.

The runner's only duty is to call :meth:`EarlyStop.observe` once per finished
episode and to await its episodes through :meth:`EarlyStop.watch`. Episodes
cut short are not recorded, so resuming the run id plays them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from lorekit.llm.errors import LLMError

T = TypeVar("T")

DEFAULT_FIRST = 3
"""Episodes that must all fail the same way before a run stops."""


class RunAborted(Exception):
    """The run stopped early; ``error`` is the error every early episode hit."""

    def __init__(self, episodes: int, error: BaseException) -> None:
        self.episodes = episodes
        self.error = error
        super().__init__(
            f"stopped after the first {episodes} episodes all failed with the same error: {error}"
        )


def model_error(error: BaseException | None) -> LLMError | None:
    """The model error behind ``error`` (itself or one of its causes), if any."""
    seen = 0
    while error is not None and seen < 8:
        if isinstance(error, LLMError):
            return error
        error = error.__cause__ or error.__context__
        seen += 1
    return None


def _signature(error: BaseException | None) -> tuple[object, ...] | None:
    """What makes two episode errors "the same"; None for outcomes that never count."""
    if error is None or isinstance(error, TimeoutError):
        return None
    cause = model_error(error)
    if cause is not None:
        return (type(cause), cause.model, cause.endpoint, cause.status, cause.reason)
    return (type(error), str(error))


class EarlyStop:
    """The early-stop rule for one run; ``first=0`` never stops."""

    def __init__(self, first: int = DEFAULT_FIRST) -> None:
        if first < 0:
            raise ValueError(f"first must be >= 0, got {first}")
        self.first = first
        self._armed = first > 0
        self._failures: list[BaseException] = []
        self._tripped = False
        self._work: asyncio.Future[Any] | None = None

    @property
    def tripped(self) -> bool:
        return self._tripped

    def observe(self, error: BaseException | None) -> None:
        """Record how one finished episode ended: the exception that ended it,
        or None when it ended normally (a success or an ordinary failure).

        Tripping cancels the watched work at once, before another episode can
        take the freed slot."""
        if not self._armed or self._tripped:
            return
        signature = _signature(error)
        if (
            error is None
            or signature is None
            or (self._failures and signature != _signature(self._failures[0]))
        ):
            self._armed = False
            return
        self._failures.append(model_error(error) or error)
        if len(self._failures) >= self.first:
            self._tripped = True
            if self._work is not None:
                self._work.cancel()

    async def watch(self, work: Awaitable[T]) -> T:
        """Await ``work`` (all of a run's episodes); raise :class:`RunAborted`
        if the rule cancelled it. Cancellation from outside (Ctrl-C) passes
        through unchanged."""
        future = asyncio.ensure_future(work)
        self._work = future
        try:
            return await future
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._tripped and not (current is not None and current.cancelling()):
                raise RunAborted(len(self._failures), self._failures[0]) from None
            raise
        finally:
            self._work = None
