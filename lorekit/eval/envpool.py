"""The harness's pool of environments: built where they run, reused while healthy.

One env serves one episode at a time. An env that an episode left broken (a
call still running when its episode timed out, a dead process) is closed
and never handed out again; the pool counts those, and the threads that
were still stuck in a call when their env was dropped, so a run can report
them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from lorekit.envs.asyncenv import AsyncEnv, Worker
from lorekit.envs.base import Execution, TextEnv
from lorekit.envs.opening import open_env
from lorekit.envs.registry import EnvSpec

EnvSource = EnvSpec | Callable[[], TextEnv]
"""How the harness gets envs: a registry spec (needed for process envs) or a factory."""


class EnvPool:
    """Opens envs on demand (``await take()``) and keeps the healthy ones for reuse.

    Starting a thread costs about a millisecond, more on a busy machine, so
    inline envs are all built on one builder thread. The first env tells the
    pool how its envs run (unless the spec already says): until then, builds
    wait for it, so thread envs each get a thread of their own.
    """

    def __init__(self, source: EnvSource) -> None:
        self._source = source
        self._free: list[AsyncEnv] = []
        self._mode: Execution | None = (
            source.declared_execution if isinstance(source, EnvSpec) else None
        )
        self._first = asyncio.Lock()
        self._builder: Worker | None = None
        self.opened = 0
        self.discarded = 0
        self.stuck_threads = 0

    def take_free(self) -> AsyncEnv | None:
        """A healthy env from an earlier episode, if one is free (no waiting)."""
        return self._free.pop() if self._free else None

    async def take(self) -> AsyncEnv:
        """A free env, or a new one (building it off the loop)."""
        if self._free:
            return self._free.pop()
        if self._mode is None:
            async with self._first:
                if self._mode is None:
                    env = await self._open()
                    self._mode = env.execution
                    return env
        return await self._open()

    async def _open(self) -> AsyncEnv:
        builder = None
        if self._mode in (None, "inline"):
            builder = self._builder = self._builder or Worker("env-build")
        try:
            env = await open_env(self._source, builder=builder)
        except BaseException:
            if builder is not None:  # a build that hung or failed may still hold it
                builder.stop()
                self._builder = None
            raise
        if builder is not None and env.execution == "thread":
            self._builder = None  # the env keeps the thread it was built on
        self.opened += 1
        return env

    def give(self, env: AsyncEnv) -> None:
        """Return ``env`` after an episode; a broken one is closed instead."""
        if env.broken is None:
            self._free.append(env)
            return
        self.discarded += 1
        self.stuck_threads += int(env.stuck)
        env.close()

    def close(self) -> None:
        """Close every env the pool holds (their threads end, their processes exit)."""
        while self._free:
            self._free.pop().close()
        if self._builder is not None:
            self._builder.stop()
            self._builder = None
