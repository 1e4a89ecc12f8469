"""Crafter score, success rates, summaries and the ground-truth rules."""

from __future__ import annotations

import math

import pytest

from lorekit.envs.crafter import ACHIEVEMENTS, CrafterRules, crafter_score, success_rates
from lorekit.envs.crafter.scoring import episode_summary


def test_score_formula_on_synthetic_rates() -> None:
    rates = [100.0] * 11 + [0.0] * 11
    expected = math.exp((11 * math.log(101) + 11 * math.log(1)) / 22) - 1
    assert crafter_score(rates) == pytest.approx(expected)
    assert crafter_score([0.0] * 22) == 0.0
    assert crafter_score([100.0] * 22) == pytest.approx(100.0)
    assert crafter_score([50.0, 2.0]) == pytest.approx(math.sqrt(51 * 3) - 1)
    # Geometric mean: spreading success beats concentrating it.
    assert crafter_score([50.0, 50.0]) > crafter_score([100.0, 0.0])
    with pytest.raises(ValueError):
        crafter_score([101.0])


def test_success_rates_count_episodes_with_any_unlock() -> None:
    episodes = [{"collect_wood": 3}, {"collect_wood": 0, "place_table": 1}, {}, {}]
    rates = success_rates(episodes)
    assert rates["collect_wood"] == 25.0 and rates["place_table"] == 25.0
    assert rates["collect_diamond"] == 0.0 and len(rates) == 22


def test_episode_summary() -> None:
    summary = episode_summary({"collect_wood": 2}, [1.0, -0.1, 0.0], 3, died=True)
    assert summary["unlocked"] == ["collect_wood"] and summary["return"] == pytest.approx(0.9)
    assert summary["died"] and summary["achievement_counts"]["collect_wood"] == 2


def test_rules_cover_every_achievement() -> None:
    rules = CrafterRules()
    assert rules.achievements() == sorted(ACHIEVEMENTS)
    pickaxe = rules.for_achievement("make_iron_pickaxe")
    assert set(pickaxe.nearby) == {"table", "furnace"}
    assert pickaxe.costs == {"wood": 1, "coal": 1, "iron": 1}
    diamond = rules.for_achievement("collect_diamond")
    assert diamond.requires == {"iron_pickaxe": 1} and diamond.faced == ("diamond",)
    sapling = rules.for_achievement("collect_sapling")
    assert sapling.probability == pytest.approx(0.1)
    assert rules.for_achievement("place_table").faced == ("grass", "sand", "path")
    assert all(isinstance(row["requires"], dict) for row in rules.table())
    # conditions from crafter's code: sleep takes below full energy, only ripe plants are eaten
    assert rules.for_achievement("wake_up").below == {"energy": 9}
    assert rules.for_achievement("eat_plant").faced == ("ripe plant",)
    assert all(not rules.for_achievement(a).below for a in ACHIEVEMENTS if a != "wake_up")
    with pytest.raises(KeyError):
        rules.for_achievement("fly")
