"""What defines a PPO run (:class:`TrainConfig`) and the PPO settings it starts from.

Kept free of torch and stable-baselines3, so the command line can check its
options, and tests can check the pinned versions, without the ``rl`` extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from lorekit.laws.rl_env import ObsKind

# The versions the rl extra pins (tests check that pyproject.toml says the same).
TORCH_PIN = "2.13.0"
SB3_PIN = "2.9.2"

PPO_DEFAULTS: dict[str, Any] = {
    "learning_rate": 3e-4,
    "n_steps": 256,
    "batch_size": 256,
    "n_epochs": 4,
    "gamma": 0.99,
    "gae_lambda": 0.95,
    "clip_range": 0.2,
    "ent_coef": 0.01,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
}
NET_ARCH = (256, 256)


class TrainError(ValueError):
    """A run that cannot start or resume as asked (the message says how to fix it)."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a run; a resumed run must match it field by field."""

    reward: str = "crafter"
    steps: int = 250_000
    obs: ObsKind = "symbolic"
    n_envs: int = 4
    vec: str = "dummy"
    checkpoint_every: int = 50_000
    eval_episodes: int = 10
    length: int = 10_000
    reward_options: Mapping[str, Any] = field(default_factory=dict)
    ppo: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.steps < 1 or self.n_envs < 1 or self.checkpoint_every < 1:
            raise TrainError("steps, n_envs and checkpoint_every must be positive")
        if self.eval_episodes < 1:
            raise TrainError("eval_episodes must be at least 1")
        if self.vec not in ("dummy", "subproc"):
            raise TrainError(f"vec must be 'dummy' or 'subproc', got {self.vec!r}")
        unknown = sorted(set(self.ppo) - set(PPO_DEFAULTS))
        if unknown:
            raise TrainError(f"unknown PPO settings {unknown}: choose from {sorted(PPO_DEFAULTS)}")

    def ppo_kwargs(self) -> dict[str, Any]:
        return {**PPO_DEFAULTS, **self.ppo}

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["reward_options"] = dict(self.reward_options)
        data["ppo"] = self.ppo_kwargs()
        return data
