"""Shared ALFWorld fixtures: a few generated games (cheap: ~2 ms each to make)."""

from __future__ import annotations

import pytest

from lorekit.envs.alfworld import GeneratedGame, generate_games
from lorekit.envs.alfworld.world import TASK_TYPES


@pytest.fixture(scope="session")
def one_per_type() -> list[GeneratedGame]:
    """One game of each task type, in ALFWorld's order."""
    games = generate_games(len(TASK_TYPES), seed=11)
    assert [g.traj_data["task_type"] for g in games] == list(TASK_TYPES)
    return games
