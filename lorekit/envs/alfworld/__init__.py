"""ALFWorld: household tasks on TextWorld's PDDL engine, with games made offline.

- :class:`AlfWorldEnv` (``make("alfworld")``): the TextEnv over the real engine.
- :func:`generate_games`: seeded, byte-reproducible games for the six task types.
- :class:`AlfredEngine`: TextWorld's ``PddlEnv`` with cached grounding.
- :class:`AlfWorldCodeApi`: the actions as typed methods, for code run in the sandbox.

Needs the ``alfworld`` extra (``pip install 'lorekit[alfworld]'``). See docs/alfworld.md.
"""

from lorekit.envs.alfworld.code_api import AlfWorldCodeApi, BadName, CodeStep
from lorekit.envs.alfworld.env import AlfWorldEnv
from lorekit.envs.alfworld.generate import (
    GeneratedGame,
    GenerationError,
    generate_game,
    generate_games,
)
from lorekit.envs.alfworld.planner import Act, Unsolvable, next_act, plan
from lorekit.envs.alfworld.world import TASK_TYPES, Goal, World

__all__ = [
    "TASK_TYPES",
    "Act",
    "AlfWorldCodeApi",
    "AlfWorldEnv",
    "BadName",
    "CodeStep",
    "GeneratedGame",
    "GenerationError",
    "Goal",
    "Unsolvable",
    "World",
    "generate_game",
    "generate_games",
    "next_act",
    "plan",
]
