"""The 27-action Crafter variant: ``do`` split by what it acts on.

The laws-to-rewards work and ELLM replace crafter's single ``do`` with one
action per target (``collect_wood``, ``eat_cow``, ``defeat_zombie``, ...), so
that an action names its intended effect. Each such action becomes crafter's
``do`` when its target is faced and ``noop`` otherwise; every other action is
crafter's own. The game rules are untouched: ``collect_stone`` facing stone
without a pickaxe is a ``do`` that fails exactly as in crafter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np

from lorekit.envs.crafter.core import ACTIONS, CrafterCore
from lorekit.envs.crafter.data import data
from lorekit.envs.crafter.textobs import faced

DO_TARGETS: Mapping[str, str] = dict(data()["do_targets"])
EXPANDED_ACTIONS: tuple[str, ...] = tuple(a for a in ACTIONS if a != "do") + tuple(DO_TARGETS)


def faced_kind(core: CrafterCore, player: int = 0) -> str:
    """What ``do`` would act on: a creature's kind, else the faced material.

    A plant counts as ``plant`` whether ripe or not (``do`` on an unripe
    plant is allowed and simply does nothing, as in crafter).
    """
    _, thing = faced(core, core.players[player])
    return "plant" if thing == "ripe plant" else thing


def to_standard(core: CrafterCore, action: str, player: int = 0) -> str:
    """The crafter action that expanded ``action`` stands for right now."""
    target = DO_TARGETS.get(action)
    if target is None:
        if action not in ACTIONS or action == "do":
            raise ValueError(f"unknown expanded action {action!r}")
        return action
    return "do" if faced_kind(core, player) == target else "noop"


class ExpandedActions(gymnasium.ActionWrapper[Any, np.int64, np.int64]):
    """Wraps :class:`~lorekit.envs.crafter.gym_env.CrafterGym`: Discrete(27)."""

    def __init__(self, env: gymnasium.Env[Any, Any]) -> None:
        super().__init__(env)
        self.action_space = gymnasium.spaces.Discrete(len(EXPANDED_ACTIONS))

    @property
    def action_names(self) -> tuple[str, ...]:
        return EXPANDED_ACTIONS

    def action(self, action: np.int64) -> np.int64:
        core: CrafterCore = self.env.unwrapped.core  # type: ignore[attr-defined]
        name = to_standard(core, EXPANDED_ACTIONS[int(action)])
        return np.int64(ACTIONS.index(name))
