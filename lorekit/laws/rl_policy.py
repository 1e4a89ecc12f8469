"""A small CNN for crafter's 64x64 image, the paper's observation.

stable-baselines3's default image encoder (the Atari "Nature" CNN) opens
with an 8x8 stride-4 filter sized for 84x84 frames; crafter draws its 9x9
grid at about 7 pixels a cell, so that first layer straddles cells. This
encoder uses 4x4 stride-2 filters that keep a cell's texture (tree, stone,
ripe plant, which way the player looks) and ends in 256 features, about a
third of the default's parameters. Imported only where torch is installed.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

FEATURES = 256


class SmallCNN(BaseFeaturesExtractor):
    """Three strided convolutions and one linear layer; pixels scaled to 0..1."""

    def __init__(self, observation_space: gymnasium.spaces.Box, features_dim: int = FEATURES):
        super().__init__(observation_space, features_dim)
        channels = int(observation_space.shape[0])  # SB3 hands images channel-first
        self.conv = nn.Sequential(
            nn.Conv2d(channels, 32, kernel_size=4, stride=2),
            nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=4, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, kernel_size=3, stride=2),
            nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            probe = torch.zeros((1, *observation_space.shape), dtype=torch.float32)
            flat = int(self.conv(probe).shape[1])
        self.head = nn.Sequential(nn.Linear(flat, features_dim), nn.ReLU())

    def forward(self, observations: torch.Tensor) -> Any:
        return self.head(self.conv(observations))


def image_policy_kwargs() -> dict[str, Any]:
    """``policy_kwargs`` for ``CnnPolicy`` with :class:`SmallCNN` (SB3 scales pixels)."""
    return {"features_extractor_class": SmallCNN, "net_arch": []}
