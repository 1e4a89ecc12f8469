"""Where PPO's evaluation episodes are recorded: what the trainer needs of a run store.

The trainer (:mod:`lorekit.laws.rl`) sits below the evaluation harness, so it
does not import the run store (:class:`lorekit.eval.store.RunStore`); its caller
(the CLI, a benchmark) hands in a function that opens one. These protocols say
what that object must do; the run store and its episode writer satisfy them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

__all__ = ["EpisodeRecorder", "RunRecorder"]


class EpisodeRecorder(Protocol):
    """One episode, buffered until :meth:`finish` (nothing is kept if abandoned)."""

    def add_step(
        self,
        observation: str,
        action: str,
        reward: float = 0.0,
        done: bool = False,
        info: Mapping[str, Any] | None = None,
    ) -> None: ...

    def finish(
        self, *, success: bool, reward: float, info: Mapping[str, Any] | None = None
    ) -> object: ...

    def abandon(self) -> None: ...


class RunRecorder(Protocol):
    """A run store: runs with a status and a summary, and their episodes."""

    @property
    def path(self) -> Path: ...

    def create_run(
        self,
        run_id: str | None = None,
        *,
        env: str,
        agent: str,
        config: Mapping[str, Any],
        meta: Mapping[str, Any] | None = None,
    ) -> str: ...

    def set_run_status(
        self, run_id: str, status: str, summary: Mapping[str, Any] | None = None
    ) -> None: ...

    def episode(
        self,
        run_id: str,
        episode_key: str,
        *,
        index: int,
        task_id: str | None = None,
        task_group: str | None = None,
        seed: int | None = None,
    ) -> EpisodeRecorder: ...

    def close(self) -> None: ...
