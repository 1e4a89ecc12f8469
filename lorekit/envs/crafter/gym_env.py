"""``CrafterGym``: crafter as a gymnasium environment for RL.

Observations are crafter's 64x64 RGB image (``obs="image"``) or a symbolic
one (``obs="symbolic"``): the 9x7 local view as material/creature ids, a 9x7
mask of ripe plants, the faced cell's id and the facing direction (most laws
need the player to face their target, and only a ripe plant can be eaten:
without these the symbolic view could not tell a law's cases apart), the
inventory, and whether the player sleeps (crafter ignores the chosen action
then, and its image shows it by darkening the view). It trains much faster
and needs no rendering. Terminated on death, truncated at the length limit;
``reset(seed=s)`` gives crafter's own episode for ``crafter.Env(seed=s)``
and a seedless reset continues the episode sequence like crafter does.
"""

from __future__ import annotations

from typing import Any, Literal

import gymnasium
import numpy as np
from crafter import constants

from lorekit.envs.crafter.core import ACTIONS, CrafterCore, world_seed

ObsKind = Literal["image", "symbolic"]
_VIEW = (9, 7)
_DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1))
"""Facing as an index: left, right, up, down."""


class CrafterGym(gymnasium.Env[Any, np.int64]):
    """Crafter with gymnasium's API; see the module docstring."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}  # noqa: RUF012 - gymnasium's own field

    def __init__(
        self,
        obs: ObsKind = "image",
        *,
        length: int = 10_000,
        size: tuple[int, int] = (64, 64),
        render_mode: str | None = None,
    ) -> None:
        if obs not in ("image", "symbolic"):
            raise ValueError(f"obs must be 'image' or 'symbolic', got {obs!r}")
        self.obs_kind = obs
        self.render_mode = render_mode
        self.core = CrafterCore(length=length, size=size)
        self.action_space = gymnasium.spaces.Discrete(len(ACTIONS))
        self._items = list(constants.items)
        self._kinds = len(self.core.world._mat_ids) + 7
        if obs == "image":
            self.observation_space: gymnasium.spaces.Space[Any] = gymnasium.spaces.Box(
                0, 255, (size[1], size[0], 3), np.uint8
            )
        else:
            self.observation_space = gymnasium.spaces.Dict(
                {
                    "view": gymnasium.spaces.Box(0, self._kinds - 1, _VIEW, np.int64),
                    "ripe": gymnasium.spaces.Box(0, 1, _VIEW, np.int64),
                    "faced": gymnasium.spaces.Box(0, self._kinds - 1, (1,), np.int64),
                    "facing": gymnasium.spaces.Box(0, 3, (1,), np.int64),
                    "inventory": gymnasium.spaces.Box(0, 9, (len(self._items),), np.int64),
                    "sleeping": gymnasium.spaces.Box(0, 1, (1,), np.int64),
                }
            )
        self._base_seed: int | None = None
        self._episode = 0

    @property
    def action_names(self) -> tuple[str, ...]:
        return ACTIONS

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._base_seed, self._episode = int(seed), 0
        elif self._base_seed is None:
            self._base_seed = int(self.np_random.integers(0, 2**31 - 1))
        self._episode += 1
        self.core.reset(world_seed(self._base_seed, self._episode))
        return self._observe(), self._info(0.0)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        name = ACTIONS[int(action)]
        reward = self.core.step([name], render=self.obs_kind == "image")[0]
        player = self.core.players[0]
        terminated = bool(player.health <= 0)
        truncated = self.core.over and not terminated
        return self._observe(), float(reward), terminated, truncated, self._info(reward)

    def render(self) -> Any:
        return self.core.render()

    def _observe(self) -> Any:
        if self.obs_kind == "image":
            return self.core.render()
        player = self.core.players[0]
        semantic = self.core.semantic()
        px, py = int(player.pos[0]), int(player.pos[1])
        view = np.zeros(_VIEW, np.int64)
        ripe = np.zeros(_VIEW, np.int64)
        plant = len(self.core.world._mat_ids) + 5  # the Plant id of CrafterCore.semantic
        half_w, half_h = _VIEW[0] // 2, _VIEW[1] // 2
        width, height = self.core.area
        for i in range(_VIEW[0]):
            x = px + i - half_w
            if not 0 <= x < width:
                continue
            for j in range(_VIEW[1]):
                y = py + j - half_h
                if 0 <= y < height:
                    view[i, j] = semantic[x, y]
                    if view[i, j] == plant:
                        ripe[i, j] = int(bool(self.core.world[(x, y)][1].ripe))
        fx, fy = px + int(player.facing[0]), py + int(player.facing[1])
        faced = semantic[fx, fy] if 0 <= fx < width and 0 <= fy < height else 0
        facing = _DIRECTIONS.index((int(player.facing[0]), int(player.facing[1])))
        inventory = np.array([player.inventory[k] for k in self._items], np.int64)
        return {
            "view": view,
            "ripe": ripe,
            "faced": np.array([faced], np.int64),
            "facing": np.array([facing], np.int64),
            "inventory": inventory,
            "sleeping": np.array([int(bool(player.sleeping))], np.int64),
        }

    def _info(self, reward: float) -> dict[str, Any]:
        player = self.core.players[0]
        return {
            "inventory": dict(player.inventory),
            "achievements": dict(player.achievements),
            "discount": 0.0 if player.health <= 0 else 1.0,
            "player_pos": (int(player.pos[0]), int(player.pos[1])),
            "reward": float(reward),
        }
