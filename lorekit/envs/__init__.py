"""Text environments behind one small contract (see ``base.py``).

Env authors implement the synchronous :class:`TextEnv`; agents and the
harness drive envs through the awaitable :class:`AsyncEnv` (``asyncenv.py``),
which runs each env inline, on a thread or in a process, as it declares
(:func:`open_env`). The registry (``registry.py``) names envs by import string,
so importing this package imports no specific env.
"""

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
