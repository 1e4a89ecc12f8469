"""Awaitable access to a :class:`TextEnv`, so env calls never block the event loop.

Env authors write plain synchronous methods (``TextEnv``); agents and the
harness hold an :class:`AsyncEnv` and ``await`` every call. Where a call runs
follows the env's :data:`~lorekit.envs.base.Execution`:

- ``inline``: on the loop, for microsecond envs. An inline env caught taking
  over ``SLOW_CALL_S`` on ``SLOW_CALLS_TO_MOVE`` calls is moved to a thread of
  its own for the rest of its life, so a wrong declaration costs a few slow
  calls, not a stalled run.
- ``thread``: on one dedicated daemon thread per env. The env is built on that
  thread too, so envs whose objects are tied to the thread that made them
  (browser drivers) work. A thread cannot be killed: when a call is abandoned
  (its episode timed out), the env is marked broken and never used again, and
  the thread is left to finish the call on its own (see :attr:`stuck`).
- ``process``: in a child process (:mod:`lorekit.envs.procenv`); an abandoned
  call kills the process.

Building an env where it will run (:func:`~lorekit.envs.opening.open_env`)
lives above this module and the process env, in :mod:`lorekit.envs.opening`.

``AsyncEnv.call(fn, *args)`` runs ``fn(env, *args)`` where the env lives, for
agent-side helpers that read env-specific state (ADaPT's bridges).
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import itertools
import queue
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from lorekit.envs.base import Execution, Observation, Step, Task, TextEnv

P = ParamSpec("P")
R = TypeVar("R")

SLOW_CALL_S = 0.005
"""An inline call slower than this counts against the env's ``inline`` claim."""
SLOW_CALLS_TO_MOVE = 3
"""Slow inline calls after which the env moves to a thread of its own."""


class EnvBrokenError(RuntimeError):
    """The env cannot be used any more: a call was abandoned mid-way (its
    episode timed out) or its process died. Build a new one."""


class AsyncEnv(ABC):
    """What agents and the harness hold: a ``TextEnv`` whose calls are awaited.

    ``broken`` says why the env must not be reused (None while it is fine);
    the harness discards a broken env instead of returning it to its pool.
    """

    name: str
    max_steps: int
    execution: Execution

    def __init__(self, name: str, max_steps: int, execution: Execution) -> None:
        self.name = name
        self.max_steps = max_steps
        self.execution = execution
        self.broken: str | None = None
        self.closed = False

    @abstractmethod
    async def _run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> Any:
        """Run ``fn(env, *args, **kwargs)`` where the env lives."""

    def _abandon(self, what: str) -> None:
        """A call was cancelled while running: the env's state is unknown."""
        self.broken = f"{what} was still running when its episode was cancelled"

    async def call(
        self, fn: Callable[Concatenate[TextEnv, P], R], /, *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """``fn(env, *args, **kwargs)`` run where the env lives.

        For process envs ``fn``, its arguments and its result must pickle (a
        module-level function or a method of a picklable object).
        """
        if self.broken is not None or self.closed:
            why = self.broken or "it was closed"
            raise EnvBrokenError(f"env {self.name!r} cannot be used: {why}")
        try:
            value: R = await self._run(fn, args, kwargs)
        except asyncio.CancelledError:
            self._abandon(f"{getattr(fn, '__name__', 'a call').lstrip('_')}()")
            raise
        return value

    async def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        return await self.call(_reset, task, seed)

    async def step(self, action: str) -> Step:
        return await self.call(_step, action)

    async def expert_action(self) -> str | None:
        return await self.call(_expert_action)

    async def candidate_actions(self) -> list[str]:
        return await self.call(_candidate_actions)

    async def manual(self) -> str:
        return await self.call(_manual)

    async def action_forms(self) -> list[str]:
        return await self.call(_action_forms)

    async def tasks(self, split: str = "test") -> list[Task]:
        return await self.call(_tasks, split)

    async def end_episode(self) -> None:
        await self.call(_end_episode)

    @property
    def stuck(self) -> bool:
        """A call abandoned by its episode is still running somewhere (a thread)."""
        return False

    @abstractmethod
    def close(self) -> None:
        """Release the env (and its thread or process) if this handle owns it."""


# Module-level so that process envs can pickle them by name.
def _reset(env: TextEnv, task: Task | str | None, seed: int | None) -> Observation:
    return env.reset(task, seed=seed)


def _step(env: TextEnv, action: str) -> Step:
    return env.step(action)


def _expert_action(env: TextEnv) -> str | None:
    return env.expert_action()


def _end_episode(env: TextEnv) -> None:
    env.end_episode()


def _candidate_actions(env: TextEnv) -> list[str]:
    return env.candidate_actions()


def _manual(env: TextEnv) -> str:
    return env.manual()


def _action_forms(env: TextEnv) -> list[str]:
    return env.action_forms()


def _tasks(env: TextEnv, split: str) -> list[Task]:
    return env.tasks(split)


def _close(env: TextEnv) -> None:
    env.close()


_STOP = object()
_numbers = itertools.count(1)


class Worker:
    """One daemon thread running submitted calls in order.

    Daemon, so that a call that never returns cannot keep the interpreter
    from exiting; one per env, so that a stuck call stalls nobody else.
    """

    def __init__(self, label: str = "env") -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._busy = threading.Event()
        self.thread = threading.Thread(
            target=self._loop, name=f"lorekit-{label}-{next(_numbers)}", daemon=True
        )
        self.thread.start()

    def submit(self, fn: Callable[..., R], *args: Any, **kwargs: Any) -> cf.Future[R]:
        future: cf.Future[R] = cf.Future()
        self._queue.put((future, fn, args, kwargs))
        return future

    @property
    def busy(self) -> bool:
        """A call is running right now."""
        return self._busy.is_set()

    def stop(self) -> None:
        """Let the thread end once the calls already queued are done."""
        self._queue.put(_STOP)

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            future, fn, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            self._busy.set()
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:  # handed to the awaiting coroutine
                future.set_exception(exc)
            finally:
                self._busy.clear()


class LocalEnv(AsyncEnv):
    """An env in this process, run inline on the loop or on its own thread.

    ``owned``: this handle built the env and closes it; a handle wrapped
    around a caller's env (:func:`as_async`) leaves it open.
    """

    def __init__(
        self,
        env: TextEnv,
        execution: Execution,
        *,
        worker: Worker | None = None,
        owned: bool = False,
    ) -> None:
        super().__init__(env.name, env.max_steps, "inline" if execution == "inline" else "thread")
        self.env = env
        self.owned = owned
        self.moved_to_thread = False
        self._slow_calls = 0
        self._worker = worker if self.execution == "thread" else None
        if self.execution == "thread" and self._worker is None:
            self._worker = Worker(env.name)
        self._finalizer = weakref.finalize(self, _stop_worker, self._worker)

    async def call(
        self, fn: Callable[Concatenate[TextEnv, P], R], /, *args: P.args, **kwargs: P.kwargs
    ) -> R:
        if self._worker is not None or self.broken is not None or self.closed:
            return await super().call(fn, *args, **kwargs)
        # Inline: the direct path, since these calls are meant to take microseconds.
        started = time.perf_counter()
        try:
            return fn(self.env, *args, **kwargs)
        finally:
            if time.perf_counter() - started > SLOW_CALL_S:
                self._note_slow_call()

    async def _run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> Any:
        assert self._worker is not None  # inline calls never get here
        return await asyncio.wrap_future(self._worker.submit(fn, self.env, *args, **kwargs))

    def _note_slow_call(self) -> None:
        self._slow_calls += 1
        if self._slow_calls >= SLOW_CALLS_TO_MOVE and self._worker is None:
            self._worker = Worker(self.name)
            self.moved_to_thread = True
            self._finalizer.detach()
            self._finalizer = weakref.finalize(self, _stop_worker, self._worker)

    @property
    def stuck(self) -> bool:
        return self.broken is not None and self._worker is not None and self._worker.busy

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        worker = self._worker  # kept after closing, so ``stuck`` can still tell
        if self.owned and self.broken is None:
            if worker is not None:
                worker.submit(_close, self.env)
            else:
                self.env.close()
        self._finalizer()


def _stop_worker(worker: Worker | None) -> None:
    if worker is not None:
        worker.stop()


def as_async(env: TextEnv | AsyncEnv) -> AsyncEnv:
    """``env`` itself if it is already awaitable, else a handle on it that
    follows its class's ``execution`` (``process`` runs on a thread: an env
    object that already exists cannot move to another process)."""
    if isinstance(env, AsyncEnv):
        return env
    return LocalEnv(env, type(env).execution)


EnvLike = TextEnv | AsyncEnv
"""What agents accept: a plain env (wrapped by :func:`as_async`) or a handle."""


def owning_loop(env: TextEnv | AsyncEnv, who: str) -> asyncio.AbstractEventLoop | None:
    """The event loop a harness handle belongs to (None for a plain env).

    A synchronous driver of an env (a code API) must know it at construction,
    so it has to be built inside the coroutine whose loop runs the handle.
    """
    if not isinstance(env, AsyncEnv):
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            f"{who} over an awaitable env must be built on the event loop "
            "that runs it (inside an async function)"
        ) from None


def call_blocking(
    env: TextEnv | AsyncEnv,
    loop: asyncio.AbstractEventLoop | None,
    fn: Callable[..., R],
    *args: Any,
    who: str = "this object",
) -> R:
    """``fn(env, *args)`` where the env lives, waiting for it on the calling thread.

    For synchronous code that drives an env (a code API behind the sandbox's
    proxy): a plain env is called directly; a harness handle (``AsyncEnv``,
    owned by the event loop ``loop``) is called through that loop, which must
    not be the calling thread's own (it would wait for itself).
    """
    if not isinstance(env, AsyncEnv) or loop is None:
        return fn(env, *args)
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        raise RuntimeError(
            f"{who} waits for its env on the event loop it would block; "
            "run the code with run_code_async (or from another thread)"
        )
    return asyncio.run_coroutine_threadsafe(env.call(fn, *args), loop).result()
