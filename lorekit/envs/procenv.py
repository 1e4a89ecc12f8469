"""Process envs: a :class:`TextEnv` in a child process of its own, over a pipe.

For CPU-bound envs in pure Python, which would hold the GIL on a thread. The
child is not forked from the parent (which runs an event loop and threads) but
from a fork server: a fresh, single-threaded process started on first use, which
imports this module and the env's own once (ALFWorld's take over a second), so
each child after the first starts in milliseconds. Where the platform has no
fork server, children are spawned. A child gets the parent's current
environment variables, working folder and ``sys.path``, as a spawned one would,
with the env's registry name, its factory by reference (when it pickles: a
module-level function or class) and its arguments, and builds the env
itself, so nothing live is pickled. A factory that does not pickle (a lambda)
is found by name in the child's registry, after importing the module that
defined it. Each call sends a module-level function and its arguments
and gets back the result or the exception. The pipe is served by a thread of
the parent, so the event loop never waits on it.

A call abandoned by a timed-out episode kills the child and everything it
started (it leads its own process group): unlike a thread, nothing is left
running. If the parent dies, the child reads end-of-file and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import multiprocessing as mp
import os
import pickle
import signal
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any

from lorekit.envs.asyncenv import AsyncEnv, EnvBrokenError, Worker
from lorekit.envs.base import TextEnv
from lorekit.envs.registry import EnvSpec, make

_CONTEXT: Any = mp.get_context(
    "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
)
_PRELOAD = ["lorekit.envs.procenv"]
"""What the fork server imports before its first fork: this module and the modules
of the process envs opened before it started (later ones import in each child)."""
_MAIN_MODULES = frozenset({"__main__", "__mp_main__"})


class ProcessEnv(AsyncEnv):
    """An env in a child process; build one with :meth:`open`."""

    def __init__(
        self,
        spec: EnvSpec,
        process: Any,
        conn: Connection,
        worker: Worker,
        name: str,
        max_steps: int,
    ) -> None:
        super().__init__(name, max_steps, "process")
        self.spec = spec
        self.process = process
        self._conn = conn
        self._worker = worker

    @classmethod
    async def open(cls, spec: EnvSpec) -> ProcessEnv:
        """Spawn the child, let it build the env, and wait (off the loop) until it is ready."""
        factory = _by_reference(spec.factory)
        _preload(factory)
        parent, child = _CONTEXT.Pipe()
        process = _CONTEXT.Process(
            target=serve,
            args=(child, spec.name, dict(spec.kwargs), factory, dict(os.environ)),
            name=f"lorekit-env-{spec.name}",
            daemon=True,
        )
        worker = Worker(f"{spec.name}-pipe")
        try:
            name, max_steps = await asyncio.wrap_future(
                worker.submit(_start, process, parent, child, spec.name)
            )
        except BaseException:
            _kill(process)
            worker.submit(_reap, process)
            worker.stop()
            raise
        return cls(spec, process, parent, worker, name, max_steps)

    async def _run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> Any:
        return await asyncio.wrap_future(self._worker.submit(self._request, fn, args, kwargs))

    def _request(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Any) -> Any:
        label = getattr(fn, "__name__", "a call")
        try:
            self._conn.send((fn, args, kwargs))
        except (EOFError, OSError) as exc:
            self.broken = f"its process is gone ({exc})"
            raise EnvBrokenError(f"env {self.name!r}: {self.broken}") from None
        except Exception as exc:  # pickling: nothing was written, the env is fine
            raise TypeError(
                f"cannot send {label}() to process env {self.name!r}: {exc}; "
                "use a module-level function and picklable arguments"
            ) from None
        try:
            ok, value = self._conn.recv()
        except (EOFError, OSError):
            self.process.join(1)
            self.broken = f"its process ended during {label}() (exit code {self.process.exitcode})"
            raise EnvBrokenError(f"env {self.name!r}: {self.broken}") from None
        if ok:
            return value
        raise value

    def _abandon(self, what: str) -> None:
        super()._abandon(what)
        _kill(self.process)

    def close(self) -> None:
        """Ask the child to close the env and exit; kill it if it is broken or slow to go."""
        if self.closed:
            return
        self.closed = True
        if self.broken is not None:
            _kill(self.process)
        else:
            self._worker.submit(_say_goodbye, self._conn)
        self._worker.submit(_reap, self.process)
        self._worker.stop()


def _start(process: Any, parent: Connection, child: Connection, name: str) -> tuple[str, int]:
    process.start()
    child.close()  # the child has its own copy; ours would hide its end-of-file
    try:
        message = parent.recv()
    except EOFError:
        process.join(1)
        raise EnvBrokenError(
            f"the process for env {name!r} exited before it was ready "
            f"(exit code {process.exitcode})"
        ) from None
    if message[0] == "error":
        raise message[1]
    return str(message[1]), int(message[2])


def _say_goodbye(conn: Connection) -> None:
    with contextlib.suppress(OSError, EOFError):
        conn.send(None)
    conn.close()


def _reap(process: Any) -> None:
    process.join(5)
    if process.is_alive():
        _kill(process)
        process.join(5)


def _kill(process: Any) -> None:
    """SIGKILL the child's whole process group (the child leads it)."""
    pid = process.pid
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, ValueError):
        process.kill()


def _preload(factory: Callable[..., Any] | str) -> None:
    """Name the factory's module to the fork server, while it has not started."""
    if _CONTEXT.get_start_method() != "forkserver":
        return
    module = factory if isinstance(factory, str) else getattr(factory, "__module__", "")
    if module and module not in _MAIN_MODULES and module not in _PRELOAD:
        _PRELOAD.append(module)
        _CONTEXT.set_forkserver_preload(list(_PRELOAD))


def _by_reference(factory: Callable[..., Any]) -> Callable[..., Any] | str:
    """The factory if it pickles (by reference), else the module to import in the child."""
    try:
        pickle.dumps(factory)
    except Exception:
        return str(getattr(factory, "__module__", "") or "")
    return factory


def serve(
    conn: Connection,
    name: str,
    kwargs: Mapping[str, Any],
    factory: Callable[..., Any] | str,
    environ: Mapping[str, str] | None = None,
) -> None:
    """The child's main loop: build the env, then answer calls until told to stop.

    ``environ`` is the parent's environment when it opened the env: a child of the
    fork server would otherwise see the server's, as it was when the server started."""
    with contextlib.suppress(OSError):
        os.setpgrp()  # lead a group, so that killing it takes whatever the env started
    if environ is not None:
        os.environ.clear()
        os.environ.update(environ)
    try:
        if callable(factory):
            env = factory(**kwargs)
            if not isinstance(env, TextEnv):
                raise TypeError(f"factory for env {name!r} returned {type(env).__name__}")
        else:
            if factory and factory not in _MAIN_MODULES:
                importlib.import_module(factory)  # plugins register their envs on import
            env = make(name, **kwargs)
    except BaseException as exc:
        conn.send(("error", _sendable(exc)))
        return
    conn.send(("ready", env.name, env.max_steps))
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return
            if message is None:
                return
            fn, args, call_kwargs = message
            try:
                reply: tuple[bool, Any] = (True, fn(env, *args, **call_kwargs))
            except Exception as exc:
                reply = (False, exc)
            try:
                conn.send(reply)
            except Exception as exc:  # an unpicklable result or exception
                conn.send((False, _sendable(exc)))
    finally:
        env.close()


def _sendable(exc: BaseException) -> BaseException:
    """``exc`` if it pickles, else a RuntimeError that keeps its message."""
    try:
        pickle.dumps(exc)
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc
