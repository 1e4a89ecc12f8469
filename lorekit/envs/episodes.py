"""The rules every env shares, applied once by the core: the step cap, truncation,
a step before ``reset`` and steps after the end.

An env registered with a ``max_steps`` default (``registry.add_env(...,
max_steps=40)``) writes only its own dynamics; :func:`lorekit.envs.make` wraps
it in :class:`EpisodeRules`, as Gymnasium's ``make`` wraps an env in its time
limit. ``make(NAME, max_steps=N)`` sets the cap (``None``: no cap). The wrapper:

- counts the actions of an episode; the N-th action that does not end it ends
  it as a failure, ``info["truncated"] = True``, with a notice appended to the
  observation, while a win on the N-th action is a win, not truncated;
- answers a step before any ``reset`` and every step after the end with an
  observation saying so (``valid`` False, ``done`` True, no reward), never
  passing them to the env;
- says in the manual how many actions an episode may take, and offers no
  expert action or candidate after the end.

Everything else (the task catalogue, the code API, ``execution``) is the env's
own, reached through the wrapper.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from lorekit import yamlio
from lorekit.envs.base import Observation, Step, Task, TextEnv
from lorekit.envs.steplimit import UNCAPPED, check_max_steps


@functools.cache
def texts() -> dict[str, str]:
    """The wrapper's wording (``episodes.yaml``)."""
    raw = resources.files("lorekit.envs").joinpath("episodes.yaml").read_text("utf-8")
    data = yamlio.safe_load(raw, source="lorekit/envs/episodes.yaml")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ValueError("lorekit/envs/episodes.yaml must map names to strings")
    return data


class EpisodeRules(TextEnv):
    """``env`` under the shared episode rules, with a cap of ``max_steps`` actions."""

    def __init__(self, env: TextEnv, max_steps: int | None) -> None:
        self.env = env
        self.step_limit = check_max_steps(max_steps)
        self.max_steps = max_steps if max_steps is not None else UNCAPPED
        self._started = False
        self._done = False
        self._success = False
        self._steps = 0

    # -- what the wrapper decides ---------------------------------------------------

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        opening = self.env.reset(task, seed=seed)
        self._started, self._done, self._success, self._steps = True, False, False, 0
        return opening

    def step(self, action: str) -> Step:
        if not self._started:
            return Step(texts()["not_started"], 0.0, True, {"valid": False, "success": False})
        if self._done:
            info = {"valid": False, "success": self._success, "steps": self._steps}
            return Step(texts()["finished"], 0.0, True, info)
        result = self.env.step(action)
        self._steps += 1
        info = dict(result.info)
        success = bool(info.get("success", False))
        truncated = (
            not result.done and self.step_limit is not None and self._steps >= self.step_limit
        )
        text = result.observation
        if truncated:
            text += texts()["step_limit"].format(limit=self.step_limit)
            success = False
            info["success"] = False
        self._done = result.done or truncated
        self._success = success
        info.setdefault("success", success)
        info["truncated"] = truncated
        info["steps"] = self._steps
        return Step(text, result.reward, self._done, info)

    def manual(self) -> str:
        own = self.env.manual()
        if self.step_limit is None:
            return own
        return own.rstrip() + " " + texts()["manual_limit"].format(limit=self.step_limit)

    def expert_action(self) -> str | None:
        return None if self._done or not self._started else self.env.expert_action()

    def candidate_actions(self) -> list[str]:
        return [] if self._done or not self._started else self.env.candidate_actions()

    # -- the env's own ------------------------------------------------------------

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.env.name

    @property
    def execution(self) -> Any:  # type: ignore[override]
        return self.env.execution

    def tasks(self, split: str = "test") -> list[Task]:
        return self.env.tasks(split)

    def splits(self) -> tuple[str, ...]:
        return self.env.splits()

    def action_forms(self) -> list[str]:
        return self.env.action_forms()

    def describe_split(self, split: str) -> str:
        return self.env.describe_split(split)

    def end_episode(self) -> None:
        self.env.end_episode()

    def close(self) -> None:
        self.env.close()

    def __getattr__(self, name: str) -> Any:
        # only called for what the wrapper lacks: the env's own extras (a code API, ...)
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)
