"""Evaluating a trained policy: crafter's score and what each episode unlocked.

Evaluation plays whole episodes on worlds the policy never trained on (seeds
from :func:`eval_seed`, far from the training ones), several at a time so the
policy runs on a batch, and samples actions as in training (crafter's
baselines report stochastic policies). Each episode goes to the run store as
one episode of the run (its steps hold the actions, rewards and unlocks), and
the summary holds crafter's score over the episodes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lorekit.envs.crafter.expanded import EXPANDED_ACTIONS
from lorekit.envs.crafter.scoring import crafter_score, episode_summary, success_rates
from lorekit.laws.rl_record import EpisodeRecorder


def mean_parts(episodes: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Mean of each reward part over episodes (or seeds); empty when none."""
    rows = list(episodes)
    names = sorted({k for row in rows for k in row})
    return {k: sum(float(row.get(k, 0.0)) for row in rows) / len(rows) for k in names}


# Training envs use seeds seed * 1000 + i; evaluation stays clear of them.
_EVAL_BASE = 1_000_000


def eval_seed(seed: int, episode: int) -> int:
    """The world seed of evaluation episode ``episode`` of training seed ``seed``."""
    return _EVAL_BASE + seed * 1000 + episode


@dataclass
class _Episode:
    index: int
    seed: int
    writer: EpisodeRecorder | None
    rewards: list[float] = field(default_factory=list)
    unlocked: set[str] = field(default_factory=set)


def evaluate(
    predict: Callable[[Any], np.ndarray],
    make: Callable[[int], Any],
    *,
    seed: int,
    episodes: int,
    slots: int = 4,
    writer: Callable[[int, int], EpisodeRecorder | None] | None = None,
) -> list[dict[str, Any]]:
    """Play ``episodes`` episodes and return crafter's summary of each, in order.

    ``predict(batch)`` maps a batch of observations to actions; ``make(slot)``
    builds an env (the trainer's :func:`~lorekit.laws.rl_env.make_env`);
    ``writer(index, world_seed)`` opens the run store's episode (or None); see
    :mod:`lorekit.laws.rl_record`.
    """
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    envs = [make(i) for i in range(min(slots, episodes))]
    results: dict[int, dict[str, Any]] = {}
    pending = iter(range(episodes))
    live: list[tuple[Any, _Episode, Any]] = []

    def start(env: Any) -> None:
        index = next(pending, None)
        if index is None:
            return
        world = eval_seed(seed, index)
        obs, _ = env.reset(seed=world)
        live.append((env, _Episode(index, world, writer(index, world) if writer else None), obs))

    for env in envs:
        start(env)
    try:
        while live:
            actions = predict(np.stack([obs for _, _, obs in live]))
            stepped, live = live, []
            for (env, ep, _), action in zip(stepped, actions, strict=True):
                obs, reward, terminated, truncated, info = env.step(action)
                ep.rewards.append(float(reward))
                new = {a for a, n in info["achievements"].items() if n > 0} - ep.unlocked
                ep.unlocked |= new
                if ep.writer is not None:
                    ep.writer.add_step(
                        "",
                        EXPANDED_ACTIONS[int(action)],
                        reward,
                        terminated or truncated,
                        _step_info(info, new, last=terminated or truncated),
                    )
                if terminated or truncated:
                    results[ep.index] = _finish(ep, info, died=terminated)
                    start(env)
                else:
                    live.append((env, ep, obs))
    finally:
        for _, ep, _ in live:
            if ep.writer is not None:
                ep.writer.abandon()
        for env in envs:
            env.close()
    return [results[i] for i in range(episodes)]


def _step_info(info: Mapping[str, Any], new: set[str], *, last: bool) -> dict[str, Any]:
    """What a recorded step holds for the run's readers: crafter's own reward (the run
    store's Crafter score and reward sum it, whatever reward the policy trained on),
    the achievements it unlocked, and on the last step every achievement's count."""
    parts = info.get("reward_parts") or {}
    out: dict[str, Any] = {"crafter_reward": float(parts.get("crafter", 0.0))}
    if new:
        out["unlocked"] = sorted(new)
    if last:
        out["achievements"] = {str(k): int(v) for k, v in info["achievements"].items()}
    return out


def _finish(ep: _Episode, info: dict[str, Any], *, died: bool) -> dict[str, Any]:
    summary = episode_summary(info["achievements"], ep.rewards, len(ep.rewards), died)
    summary["seed"] = ep.seed
    summary["reward_parts"] = dict(info.get("episode_reward_parts", {}))
    if ep.writer is not None:
        stored = {**summary, "stop_reason": "died" if died else "time_limit"}
        ep.writer.finish(success=not died, reward=summary["return"], info=stored)
    return summary


def score_episodes(summaries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Crafter's score, success rates and means over evaluation episodes."""
    rates = success_rates(s["achievement_counts"] for s in summaries)
    n = len(summaries)
    return {
        "episodes": n,
        "score": crafter_score(rates),
        "success_rates": rates,
        "return_mean": sum(s["return"] for s in summaries) / n,
        "length_mean": sum(s["length"] for s in summaries) / n,
        "unlocked_mean": sum(s["unlocked_count"] for s in summaries) / n,
        "died": sum(1 for s in summaries if s["died"]),
        "reward_parts_mean": mean_parts(s.get("reward_parts", {}) for s in summaries),
    }


def aggregate(reward: str, summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean crafter score over seeds with its standard error, and mean success rates."""
    scores = [float(s["score"]) for s in summaries]
    n = len(scores)
    mean = sum(scores) / n
    se = math.sqrt(sum((x - mean) ** 2 for x in scores) / (n - 1) / n) if n > 1 else None
    names = list(summaries[0]["success_rates"])
    rates = {a: sum(float(s["success_rates"][a]) for s in summaries) / n for a in names}
    return {
        "reward": reward,
        "seeds": [int(s["seed"]) for s in summaries],
        "score_mean": mean,
        "score_se": se,
        "scores": scores,
        "success_rates": rates,
        "unlocked_mean": sum(float(s["unlocked_mean"]) for s in summaries) / n,
        "reward_parts_mean": mean_parts(s.get("reward_parts_mean", {}) for s in summaries),
        # per training episode (the last 100 of each seed), averaged over seeds
        "train_reward_parts_mean": mean_parts(
            s["train_reward_parts"] for s in summaries if s.get("train_reward_parts")
        ),
    }


def result_text(result: Mapping[str, Any]) -> str:
    """A finished training run in three lines (``lorekit laws train`` prints them):
    the mean score over seeds, the best achievements, where the run is kept.
    ``result`` is what :func:`lorekit.laws.rl.train` returns."""
    se = result["score_se"]
    spread = "" if se is None else f" ± {se:.2f}"
    rates = sorted(result["success_rates"].items(), key=lambda kv: -kv[1])
    top = ", ".join(f"{name} {rate:.0f}%" for name, rate in rates[:6] if rate > 0) or "none"
    return "\n".join(
        [
            f"reward {result['reward']}: crafter score {result['score_mean']:.2f}%{spread} "
            f"over seeds {result['seeds']}",
            f"top achievements: {top}",
            f"run {result['run_id']} in {result['store']}; files in {result['out']}",
        ]
    )
