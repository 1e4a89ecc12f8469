"""Text environments behind one small contract (see ``base.py``).

Env authors implement the synchronous :class:`TextEnv`; agents and the
harness drive envs through the awaitable :class:`AsyncEnv` (``asyncenv.py``),
which runs each env inline, on a thread or in a process, as it declares
(:func:`open_env`). Envs are found by name in :mod:`lorekit.registry`
(``make("textcraft")``); this package's names are imported on first use, so
importing it imports no env and none of the harness's machinery.
"""

from typing import TYPE_CHECKING

from lorekit.lazyexports import lazy_attributes

if TYPE_CHECKING:
    from lorekit.envs.asyncenv import AsyncEnv, EnvBrokenError, EnvLike, as_async
    from lorekit.envs.base import Execution, Observation, Step, Task, TextEnv
    from lorekit.envs.checker import EnvCheckError, check_env
    from lorekit.envs.opening import open_env
    from lorekit.envs.registry import EnvSpec, UnknownEnvError, list_envs, make, register

__all__ = [
    "AsyncEnv",
    "EnvBrokenError",
    "EnvCheckError",
    "EnvLike",
    "EnvSpec",
    "Execution",
    "Observation",
    "Step",
    "Task",
    "TextEnv",
    "UnknownEnvError",
    "as_async",
    "check_env",
    "list_envs",
    "make",
    "open_env",
    "register",
]

if not TYPE_CHECKING:  # mypy checks the names above; at run time they load on use
    __getattr__ = lazy_attributes(
        __name__,
        {
            "lorekit.envs.asyncenv": ("AsyncEnv", "EnvBrokenError", "EnvLike", "as_async"),
            "lorekit.envs.base": ("Execution", "Observation", "Step", "Task", "TextEnv"),
            "lorekit.envs.checker": ("EnvCheckError", "check_env"),
            "lorekit.envs.opening": ("open_env",),
            "lorekit.envs.registry": (
                "EnvSpec",
                "UnknownEnvError",
                "list_envs",
                "make",
                "register",
            ),
        },
    )
