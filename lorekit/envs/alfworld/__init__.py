"""ALFWorld: household tasks on TextWorld's PDDL engine, with games made offline
or ALFWorld's own (the release, or AutoManual's edit of it).

- :class:`AlfWorldEnv` (``make("alfworld")``): the TextEnv over the real engine.
- :func:`generate_games`: seeded, byte-reproducible games for the six task types.
- :class:`AlfredEngine`: TextWorld's ``PddlEnv`` with cached grounding.
- :class:`AlfWorldCodeApi`: the actions as typed methods, for code run in the sandbox.
- :mod:`.variants`, :mod:`.release`, :mod:`.fetch`, :mod:`.rebuild`,
  :mod:`.record`: which official games a folder holds, installing the release,
  and ADaPT's published run as the reference.

The engine needs the ``alfworld`` extra (``pip install 'lorekit[alfworld]'``);
the names below load on first use, so :mod:`.variants` (what is installed)
works without it. See docs/alfworld.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "AlfWorldCodeApi": "code_api",
    "BadName": "code_api",
    "CodeStep": "code_api",
    "AlfWorldEnv": "env",
    "GeneratedGame": "generate",
    "GenerationError": "generate",
    "generate_game": "generate",
    "generate_games": "generate",
    "Act": "planner",
    "Unsolvable": "planner",
    "next_act": "planner",
    "plan": "planner",
    "TASK_TYPES": "world",
    "Goal": "world",
    "World": "world",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
