"""Text environments behind one small contract (see ``base.py``)."""

from lorekit.envs.base import Observation, Step, Task, TextEnv
from lorekit.envs.checker import EnvCheckError, check_env
from lorekit.envs.registry import UnknownEnvError, list_envs, make, register

__all__ = [
    "EnvCheckError",
    "Observation",
    "Step",
    "Task",
    "TextEnv",
    "UnknownEnvError",
    "check_env",
    "list_envs",
    "make",
    "register",
]
