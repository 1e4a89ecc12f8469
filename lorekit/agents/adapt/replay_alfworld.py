"""Replay ADaPT's published ALFWorld run (``ADaPT_maxd3_alfworld_*.json``).

The file holds, per task type and game (``pick_and_place_simple-Mug-None-Desk-308/
trial_...``), the opening (``problem``: the room and the task), the kept
transcripts, the decomposition log and whether the game was won. The replay
plays each game on LoreKit's ALFWorld with the release's games (``source=official``,
``variant=release``: ``lorekit alfworld fetch-data`` or ``rebuild-release``; or
``data_dir``), the code's "You arrive at the location." (``arrival=location``),
no step cap, and LoreKit's ADaPT in the ``code`` profile, whose controller
resets the env before each sub-task and replays the successful actions, as
run_alfworld.py did.

**What the replay needs from the data.** The record's games are ALFWorld
2.1.1's ``valid_unseen`` with the release's grammar; AutoManual's edited copy
(article-free replies, task sentences drawn anew, two trials missing) gives
other observations and, for 60 games, another task sentence. A game missing
from the installed set is listed and skipped; a task sentence that differs
from the record's ends that episode at its first call (a ``call`` divergence
naming both sentences), since every recorded plan step is phrased after the
record's sentence. Other env options (``variant=automanual``, ``data_dir``)
pass through ``env_options``.

**Gaps.** A dropped transcript is answered with its recorded verdict alone.
A failed run leaves no trace here (the next sub-task starts from a reset and
the successful actions), but a successful run under a failed sub-task did:
its actions joined the replayed ones, and the record does not say what they
were, so what follows it in the same episode may be seen from another state.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lorekit.agents.adapt.controller import AdaptAgent
from lorekit.agents.adapt.replay_cursor import ReplayEpisode, Verdicts
from lorekit.agents.adapt.replay_record import RecordedEpisode, read_episode
from lorekit.agents.base import Agent
from lorekit.envs.base import Task, TextEnv
from lorekit.eval.replay import ReplayError

D_MAX = 3
"""run_alfworld.py's ``--max-depth`` default, which the published run used."""
SPLIT = "valid_unseen"
VERDICTS = Verdicts(
    "think: Task completed! (replay stand-in: this run's transcript is not in the record)",
    "think: Task failed! (replay stand-in: this run's transcript is not in the record)",
)
TASK_TYPES = (
    "pick_and_place",
    "pick_clean_then_place",
    "pick_heat_then_place",
    "pick_cool_then_place",
    "look_at_obj",
    "pick_two_obj",
)
DEFAULT_ENV: Mapping[str, Any] = {
    "source": "official",
    "variant": "release",
    "arrival": "location",
    "max_steps": None,
}
"""ALFWorld's release as run_alfworld.py played it (the experiment rows' options)."""


@dataclass(slots=True)
class AlfworldReplay:
    """ADaPT's ALFWorld result file, opened (a :class:`~lorekit.eval.replay.ReplaySource`)."""

    path: Path
    records: Mapping[str, RecordedEpisode]
    env_options: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_ENV))
    title: str = "ADaPT on ALFWorld (published run, text-davinci-003, task-specific executors)"
    roles: tuple[str, ...] = ("executor", "planner")
    limits: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()

    def make_env(self) -> TextEnv:
        from lorekit.envs.alfworld.env import AlfWorldEnv

        return AlfWorldEnv(**dict(self.env_options))

    def make_agent(self) -> Agent:
        return AdaptAgent(profile="code", executor_examples="task_type")

    def tasks(self) -> list[Task]:
        env = self.make_env()
        try:
            installed = {t.id: t for t in env.tasks(SPLIT)}
        finally:
            env.close()
        found = [installed[k] for k in self.records if k in installed]
        self.missing = tuple(k for k in self.records if k not in installed)
        if not found:
            raise ReplayError(
                f"{self.path}: none of its {len(self.records)} games is installed ({SPLIT} of "
                "source=official: set $ALFWORLD_DATA to ALFWorld 2.1.1's data)"
            )
        if self.missing:
            self.limits = (
                *self.limits,
                f"{len(self.missing)} of {len(self.records)} games are not in the installed "
                f"{SPLIT}: {', '.join(self.missing)}",
            )
        return found

    def seed(self, task: Task) -> int:
        return 0

    def cursor(self, task: Task) -> ReplayEpisode:
        return ReplayEpisode(
            self.records[task.id], verdicts=VERDICTS, goal_marker="Your task is to: "
        )

    def describe(self) -> dict[str, Any]:
        return {
            "reader": READER.name,
            "file": str(self.path),
            "episodes": len(self.records),
            "agent": "adapt",
            "agent_options": {"profile": "code", "executor_examples": "task_type"},
            "env": "alfworld",
            "env_options": dict(self.env_options),
        }


class AlfworldReader:
    """Recognises ADaPT's ALFWorld result files (task types -> games with plans and trace)."""

    name = "adapt-alfworld"

    def claims(self, data: object) -> bool:
        if not isinstance(data, Mapping) or not any(t in data for t in TASK_TYPES):
            return False
        games = next(v for k, v in data.items() if k in TASK_TYPES)
        first = next(iter(games.values()), None) if isinstance(games, Mapping) else None
        return isinstance(first, Mapping) and {"problem", "plans", "trace"} <= set(first)

    def open(self, path: Path, **options: Any) -> AlfworldReplay:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not self.claims(data):
            raise ReplayError(f"{path}: not an ADaPT ALFWorld result file")
        records: dict[str, RecordedEpisode] = {}
        for task_type in TASK_TYPES:
            for game, entry in (data.get(task_type) or {}).items():
                records[game] = read_episode(game, entry, D_MAX)
        runs = sum(len(r.runs) for r in records.values())
        gaps = sum(1 for r in records.values() for run in r.runs if run.turns is None)
        env_options = {**DEFAULT_ENV, **dict(options.get("env_options") or {})}
        limits = (
            f"{gaps} of {runs} executor runs have no transcript in the record (the code kept "
            "only successful runs outside failed sub-tasks); each is answered with its "
            "recorded verdict alone",
            "plans are answered as plan text rebuilt from the recorded steps and logic",
            "observations equal the record's only with ALFWorld 2.1.1's release grammar and "
            "the record's task sentences (AutoManual's edited copy differs in both)",
        )
        return AlfworldReplay(path, records, env_options, limits=limits)


READER = AlfworldReader()
