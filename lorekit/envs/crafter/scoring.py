"""Crafter's metrics: per-achievement success rates and the Crafter score.

The score is the one on the Crafter leaderboard (Hafner 2021): the geometric
mean of the success rates s_i (in percent) with a 1% offset,
``exp(mean(ln(1 + s_i))) - 1``, which rewards unlocking many achievements
over mastering a few.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lorekit.envs.crafter.core import ACHIEVEMENTS


def success_rates(episodes: Iterable[Mapping[str, int]]) -> dict[str, float]:
    """Percent of episodes in which each achievement was unlocked at least once.

    Each episode is an achievement -> count mapping (crafter's
    ``info["achievements"]`` at the end of the episode).
    """
    seen = list(episodes)
    if not seen:
        raise ValueError("success_rates needs at least one episode")
    return {
        name: 100.0 * sum(1 for ep in seen if ep.get(name, 0) > 0) / len(seen)
        for name in ACHIEVEMENTS
    }


def crafter_score(rates: Mapping[str, float] | Sequence[float]) -> float:
    """Geometric mean with a 1% offset of success rates given in percent."""
    values = list(rates.values()) if isinstance(rates, Mapping) else list(rates)
    if not values:
        raise ValueError("crafter_score needs at least one success rate")
    if any(not 0.0 <= v <= 100.0 for v in values):
        raise ValueError("success rates are percentages between 0 and 100")
    return math.exp(sum(math.log(1.0 + v) for v in values) / len(values)) - 1.0


def episode_summary(
    achievements: Mapping[str, int], rewards: Sequence[float], length: int, died: bool
) -> dict[str, Any]:
    """What one episode achieved: return, length, death and unlocked list."""
    unlocked = [name for name in ACHIEVEMENTS if achievements.get(name, 0) > 0]
    return {
        "return": float(sum(rewards)),
        "length": length,
        "died": died,
        "unlocked": unlocked,
        "unlocked_count": len(unlocked),
        "achievement_counts": {name: int(achievements.get(name, 0)) for name in ACHIEVEMENTS},
    }
