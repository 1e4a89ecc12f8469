"""ALFWorld: household tasks on TextWorld's PDDL engine, with games made offline.

- :class:`AlfWorldEnv` (``make("alfworld")``): the TextEnv over the real engine.
- :func:`generate_games`: seeded, byte-reproducible games for the six task types.
- :class:`AlfredEngine`: TextWorld's ``PddlEnv`` with cached grounding.

Needs the ``alfworld`` extra (``pip install 'lorekit[alfworld]'``). See docs/alfworld.md.
"""

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
    "AlfWorldEnv",
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
