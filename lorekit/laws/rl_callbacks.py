"""What a PPO run does besides learning: checkpoints, CSV rows, crafter stats, progress.

Kept apart from :mod:`lorekit.laws.rl` so the trainer reads as the sequence of
a run (build, resume, learn, evaluate) while these hooks hold the details that
make a run survive a kill: a checkpoint is written to a temporary file and
renamed (a SIGKILL mid-write leaves the previous one intact), and the CSV log
is appended to rather than rewritten, so a resumed run continues one file.
"""

from __future__ import annotations

import csv
import json
import os
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter

from lorekit.envs.crafter.scoring import crafter_score, success_rates
from lorekit.laws.rl_eval import mean_parts

# Columns of progress.csv, in order; values sb3 or the stats callback do not
# report at a given row are left empty.
CSV_COLUMNS: tuple[str, ...] = (
    "time/total_timesteps",
    "time/fps",
    "time/time_elapsed",
    "time/iterations",
    "rollout/ep_rew_mean",
    "rollout/ep_len_mean",
    "crafter/episodes",
    "crafter/unlocked_mean",
    "crafter/score",
    "reward/laws",
    "reward/penalty",
    "reward/health",
    "reward/crafter",
    "train/loss",
    "train/policy_gradient_loss",
    "train/value_loss",
    "train/entropy_loss",
    "train/approx_kl",
    "train/clip_fraction",
    "train/explained_variance",
    "train/learning_rate",
)
_STEP_COLUMN = "time/total_timesteps"


def write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    """Write JSON through a temporary file and a rename: never half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


class AppendCsv(KVWriter):
    """sb3 log rows appended to one CSV with fixed columns (see :data:`CSV_COLUMNS`).

    sb3's own CSV writer truncates its file when opened, which would erase the
    first part of a resumed run.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._new = not path.exists() or path.stat().st_size == 0

    def write(
        self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0
    ) -> None:
        with self.path.open("a", newline="") as f:
            writer = csv.writer(f)
            if self._new:
                writer.writerow(CSV_COLUMNS)
                self._new = False
            writer.writerow([_cell(key_values.get(c)) for c in CSV_COLUMNS])

    def close(self) -> None:
        """Nothing stays open between rows."""


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def truncate_csv(path: Path, steps: int) -> int:
    """Drop the rows logged after ``steps`` (work a kill lost); returns how many."""
    if not path.exists():
        return 0
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return 0
    header, body = rows[0], rows[1:]
    column = header.index(_STEP_COLUMN)
    kept = [r for r in body if r[column] and int(float(r[column])) <= steps]
    if len(kept) == len(body):
        return 0
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as f:
        csv.writer(f).writerows([header, *kept])
    os.replace(tmp, path)
    return len(body) - len(kept)


class Checkpoint(BaseCallback):
    """Saves the model every ``every`` env steps, after the update that used them.

    It runs at the start of a rollout, when every step counted so far has
    been trained on, so a resumed run repeats no update and skips none.
    ``on_save(steps)`` is called after each save (the trainer records the
    step count in its state file).
    """

    def __init__(self, path: Path, every: int, on_save: Callable[[int], None]) -> None:
        super().__init__()
        self.path = path
        self.every = every
        self.on_save = on_save
        self._last = 0

    def _on_training_start(self) -> None:
        self._last = self.num_timesteps

    def _on_rollout_start(self) -> None:
        if self.num_timesteps - self._last >= self.every:
            self.save()

    def _on_step(self) -> bool:
        return True

    def save(self) -> None:
        tmp = self.path.with_name(self.path.stem + ".tmp.zip")
        self.model.save(tmp)
        os.replace(tmp, self.path)
        self._last = self.num_timesteps
        self.on_save(self.num_timesteps)


class CrafterStats(BaseCallback):
    """Crafter's score and unlocked count over the last ``window`` finished episodes.

    The env reward depends on the variant, so ``rollout/ep_rew_mean`` cannot
    compare runs; the achievements can. The episode sums of the reward's
    parts (``reward/laws`` bonus, ``reward/penalty``, ``reward/health``,
    ``reward/crafter``; from :class:`~lorekit.laws.wrapper.LawReward`) are
    averaged over the same window: they show *why* a reward steers PPO.
    Also reports progress through ``report`` at most every ``every_s`` seconds.
    """

    def __init__(
        self,
        total: int,
        label: str,
        report: Callable[[str], None] | None = None,
        *,
        window: int = 100,
        every_s: float = 10.0,
    ) -> None:
        super().__init__()
        self.total = total
        self.label = label
        self.report = report
        self.every_s = every_s
        self.episodes = 0
        self.recent: deque[Mapping[str, int]] = deque(maxlen=window)
        self.parts: deque[Mapping[str, float]] = deque(maxlen=window)
        self._t0 = time.monotonic()
        self._steps0 = 0
        self._last_report = 0.0

    def _on_training_start(self) -> None:
        self._t0 = time.monotonic()
        self._steps0 = self.num_timesteps

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if done and "achievements" in info:
                self.episodes += 1
                self.recent.append(info["achievements"])
                if "episode_reward_parts" in info:
                    self.parts.append(info["episode_reward_parts"])
        return True

    def _on_rollout_end(self) -> None:
        score = crafter_score(success_rates(self.recent)) if self.recent else None
        unlocked = (
            sum(sum(1 for v in ep.values() if v > 0) for ep in self.recent) / len(self.recent)
            if self.recent
            else None
        )
        self.logger.record("crafter/episodes", self.episodes)
        if score is not None:
            self.logger.record("crafter/score", score)
            self.logger.record("crafter/unlocked_mean", unlocked)
        for name, value in mean_parts(self.parts).items():
            self.logger.record(f"reward/{name}", value)
        now = time.monotonic()
        if self.report is not None and now - self._last_report >= self.every_s:
            self._last_report = now
            rate = (self.num_timesteps - self._steps0) / max(now - self._t0, 1e-9)
            shown = "-" if score is None else f"{score:.1f}%"
            self.report(
                f"{self.label}: {self.num_timesteps:,}/{self.total:,} steps, "
                f"{rate:,.0f} steps/s, {self.episodes} episodes, recent score {shown}"
            )
