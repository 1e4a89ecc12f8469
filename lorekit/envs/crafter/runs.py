"""Crafter's metrics for recorded runs: the score and reward of each run, side by side.

The laws paper's Table 1 compares one agent (SPRING) under different contexts
by the Crafter score (geometric mean of per-achievement success rates, with a
1% offset) and crafter's own reward. A run store already holds what both need:
each step's ``info`` has the achievement counters and ``crafter_reward``. So
the table is computed after the fact from any finished runs, whatever agent or
task list they used (``score/seed-N`` tasks are crafter's benchmark episodes).

The env reads runs through :class:`RunSource`, the few read calls it needs
(the run store's reader has them), so it knows nothing of the harness that
recorded them. :func:`run_summary` is the env's hook for the HTML report
(:mod:`lorekit.envs.summaries`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from lorekit.envs.crafter.scoring import crafter_score, success_rates

if TYPE_CHECKING:
    from lorekit.envs.summaries import RunSummary


class RunLike(Protocol):
    """What is read of a run: which env it played and which agent played it."""

    @property
    def env(self) -> str: ...
    @property
    def agent(self) -> str: ...


class EpisodeLike(Protocol):
    """What is read of an episode: its key, status and info (with the agent's notes)."""

    @property
    def episode_key(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def info(self) -> Mapping[str, Any]: ...


class StepLike(Protocol):
    """What is read of a step: its info (achievement counters, crafter's reward)."""

    @property
    def info(self) -> Mapping[str, Any]: ...


class RunSource(Protocol):
    """The read calls the scores need (:class:`lorekit.eval.store_read.StoreReader` has them)."""

    @property
    def path(self) -> object: ...
    def get_run(self, run_id: str) -> RunLike | None: ...
    def episodes(self, run_id: str) -> Sequence[EpisodeLike]: ...
    def steps(self, run_id: str, episode_key: str) -> Sequence[StepLike]: ...


@dataclass(frozen=True, slots=True)
class CrafterRunScore:
    """One run's Crafter metrics over its finished, error-free episodes.

    ``reward`` is crafter's own (+1 per first unlock, +-0.1 per health point),
    summed over each episode, then averaged; ``reward_se`` is its standard
    error. ``label`` says what the run was (agent and, for SPRING, its context).
    """

    run_id: str
    label: str
    episodes: int
    errors: int
    score: float
    reward: float
    reward_se: float
    rates: Mapping[str, float]

    @property
    def unlocked(self) -> list[str]:
        """Achievements unlocked in at least one episode, most often first."""
        seen = [(rate, name) for name, rate in self.rates.items() if rate > 0]
        return [name for _, name in sorted(seen, key=lambda x: (-x[0], x[1]))]


def _final_counts(steps: Sequence[Any]) -> dict[str, int]:
    for step in reversed(steps):
        counts = (step.info or {}).get("achievements")
        if isinstance(counts, Mapping):
            return {str(k): int(v) for k, v in counts.items()}
    return {}


def _label(agent: str, episodes: Sequence[Any]) -> str:
    for episode in episodes:
        spring = ((episode.info or {}).get("notes") or {}).get("spring")
        if isinstance(spring, Mapping) and spring.get("context"):
            return f"{agent} + {spring['context']}"
    return agent


def crafter_run_score(store: RunSource, run_id: str) -> CrafterRunScore:
    """Score and reward of one Crafter run; ``ValueError`` if it is not one or has no
    finished episode."""
    info = store.get_run(run_id)
    if info is None:
        raise LookupError(f"no run {run_id!r} in {store.path}")
    if info.env not in ("crafter",):
        raise ValueError(f"run {run_id!r} played {info.env!r}, not crafter")
    all_episodes = store.episodes(run_id)
    played = [e for e in all_episodes if e.status != "error"]
    if not played:
        raise ValueError(f"run {run_id!r} has no finished episode without an error")
    counts, rewards = [], []
    for episode in played:
        steps = store.steps(run_id, episode.episode_key)
        counts.append(_final_counts(steps))
        rewards.append(sum(float((s.info or {}).get("crafter_reward", 0.0)) for s in steps))
    rates = success_rates(counts)
    se = statistics.stdev(rewards) / math.sqrt(len(rewards)) if len(rewards) > 1 else 0.0
    return CrafterRunScore(
        run_id=run_id,
        label=_label(info.agent, played),
        episodes=len(played),
        errors=len(all_episodes) - len(played),
        score=crafter_score(rates),
        reward=statistics.fmean(rewards),
        reward_se=se,
        rates=rates,
    )


def run_summary(store: RunSource, run_id: str, notes: list[str]) -> RunSummary | None:
    """The report's Crafter section for one run (see :mod:`lorekit.envs.summaries`):
    the score table's cells, the achievement rates as fractions, and the raw figures.
    A run without a finished episode gets a note instead."""
    try:
        s = crafter_run_score(store, run_id)
    except ValueError as exc:
        notes.append(f"Crafter score: {exc}")
        return None
    return {
        "section": "crafter",
        "title": "Crafter: score and achievements",
        "columns": ["Crafter score", "reward ± se", "episodes"],
        "cells": [f"{s.score:.2f}%", f"{s.reward:.2f} ± {s.reward_se:.2f}", s.episodes],
        "chart": "Crafter achievement success rates",
        # crafter's rates are percentages; the chart's percent axis takes fractions
        "rates": {name: rate / 100 for name, rate in s.rates.items()},
        "figures": {
            "score": s.score,
            "reward": s.reward,
            "reward_se": s.reward_se,
            "episodes": s.episodes,
            "rates": dict(s.rates),
        },
    }
