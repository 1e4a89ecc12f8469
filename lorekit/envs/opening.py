"""Opening an env where it will run: inline, on a thread or in a child process.

:func:`open_env` joins the three pieces below it: the registry (an
:class:`~lorekit.envs.registry.EnvSpec` says how the env is declared), the
awaitable handles of :mod:`lorekit.envs.asyncenv` (inline and thread envs) and
:mod:`lorekit.envs.procenv` (process envs). Kept out of ``asyncenv`` so that
module stays below the registry and the process env, which build on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from lorekit.envs.asyncenv import AsyncEnv, LocalEnv, Worker
from lorekit.envs.base import TextEnv
from lorekit.envs.procenv import ProcessEnv
from lorekit.envs.registry import EnvSpec

__all__ = ["open_env"]


async def open_env(
    source: EnvSpec | Callable[[], TextEnv], *, builder: Worker | None = None
) -> AsyncEnv:
    """Build an env from a registry spec or a factory, where it will run.

    A spec whose execution is ``process`` (declared at registration or in the
    spec) gets a child process. Otherwise the env is built off the loop
    (construction may block too): on ``builder`` if given, else on a fresh
    thread. A ``thread`` env keeps the thread it was built on (some objects
    only work on the thread that made them), ``builder`` included; an
    ``inline`` env leaves ``builder`` to the caller, for the next build. A
    factory's env decides by its class's ``execution``.
    """
    declared = source.declared_execution if isinstance(source, EnvSpec) else None
    if declared == "process":
        assert isinstance(source, EnvSpec)
        return await ProcessEnv.open(source)
    build = source.make if isinstance(source, EnvSpec) else source
    worker = builder or Worker("env")
    try:
        env = await asyncio.wrap_future(worker.submit(build))
        if not isinstance(env, TextEnv):
            raise TypeError(f"env factory returned {type(env).__name__}, not a TextEnv")
    except BaseException:
        if builder is None:
            worker.stop()
        raise
    execution = declared or type(env).execution
    if execution == "inline":
        if builder is None:
            worker.stop()
        return LocalEnv(env, "inline", owned=True)
    return LocalEnv(env, execution, worker=worker, owned=True)
