"""The Crafter task catalogue: one task per achievement per seed, plus score runs.

Achievement tasks end as soon as the named achievement is unlocked (reward 1)
and are grouped by technology tier so summaries show how deep agents get.
Score tasks are crafter's benchmark episode: play until death or the length
limit, rewarded as crafter rewards. Test and dev use disjoint seed ranges.
"""

from __future__ import annotations

from lorekit.envs.base import Task
from lorekit.envs.crafter.core import ACHIEVEMENTS
from lorekit.envs.crafter.data import data

SPLITS: tuple[str, ...] = ("test", "dev")


def build_tasks(split: str) -> list[Task]:
    """Tasks of ``split`` in a stable order: achievements by tier, then score."""
    settings = data()["tasks"]
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known splits: {', '.join(SPLITS)}")
    first, last = settings["seeds"][split]
    per_achievement = int(settings["achievement_seeds"][split])
    tiers = data()["tiers"]
    ordered = sorted(ACHIEVEMENTS, key=lambda a: (int(tiers[a]), a))
    tasks = []
    for achievement in ordered:
        for seed in range(first, first + per_achievement):
            tasks.append(
                Task(
                    id=f"{achievement}/seed-{seed}",
                    goal=str(settings["achievement_goal"]).format(achievement=achievement),
                    group=f"tier-{tiers[achievement]}",
                    data={"kind": "achievement", "achievement": achievement, "seed": seed},
                )
            )
    for seed in range(first, last):
        tasks.append(
            Task(
                id=f"score/seed-{seed}",
                goal=str(settings["score_goal"]),
                group="score",
                data={"kind": "score", "seed": seed},
            )
        )
    return tasks
