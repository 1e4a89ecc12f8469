"""The rules every env shares, written once: the step cap, truncation, a step
before ``reset`` and steps after the end.

:class:`StepRules` holds them. An env registered with a ``max_steps`` default
(``registry.add_env(..., max_steps=40)``) writes only its own dynamics, and
:func:`lorekit.envs.make` wraps it in :class:`EpisodeRules`, as Gymnasium's
``make`` wraps an env in its time limit (``make(NAME, max_steps=N)`` sets the
cap, ``None`` for none). The built-in envs (TextCraft, ALFWorld, MiniWoB++,
WebShop) keep a :class:`StepRules` themselves, so they stay the classes code
and tests build directly, with ``max_steps`` among their options. Either way:

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


class StepRules:
    """The shared rules' state for one env: its cap and where the episode stands.

    An env keeps one and brackets its own dynamics with it::

        def step(self, action):
            refused = self.rules.refuse()       # before reset, or after the end
            if refused is not None:
                return refused
            return self.rules.settle(self._act(action))   # count, cap, notice

    :class:`EpisodeRules` does exactly this around an env that knows nothing of
    it; the built-in envs do it themselves, so they stay the classes they are.
    ``play_on`` lets an env take actions after its end (TextCraft's
    ``after_goal=continue``: the original played the rest of a plan)."""

    def __init__(self, max_steps: int | None) -> None:
        self.step_limit = check_max_steps(max_steps)
        self.max_steps = max_steps if max_steps is not None else UNCAPPED
        self.started = False
        self.done = False
        self.success = False
        self.steps = 0
        self.play_on = False

    def begin(self) -> None:
        """A new episode starts (``reset``)."""
        self.started, self.done, self.success, self.steps, self.play_on = (
            True, False, False, 0, False,
        )  # fmt: skip

    @property
    def over(self) -> bool:
        """Whether no episode is being played (none started, or this one ended)."""
        return not self.started or self.done

    def refuse(self) -> Step | None:
        """The answer to a step the env must not be asked: before any ``reset``, or
        after the end (unless the env plays on); None when the env should act."""
        if not self.started:
            return Step(texts()["not_started"], 0.0, True, {"valid": False, "success": False})
        if self.done and not self.play_on:
            info = {"valid": False, "success": self.success, "steps": self.steps}
            return Step(texts()["finished"], 0.0, True, info)
        return None

    def settle(self, result: Step) -> Step:
        """``result`` (the env's own step) under the cap: counted, and ended as a
        failure, with a notice, on the last allowed action that did not end it."""
        self.steps += 1
        info = dict(result.info)
        success = bool(info.get("success", False))
        truncated = (
            not result.done and self.step_limit is not None and self.steps >= self.step_limit
        )
        text = result.observation
        if truncated:
            text += texts()["step_limit"].format(limit=self.step_limit)
            success = False
        self.done = self.done or result.done or truncated
        self.success = self.success or success
        info["success"] = success
        info["truncated"] = truncated
        info["steps"] = self.steps
        return Step(text, result.reward, self.done, info)

    def manual_line(self) -> str:
        """The sentence a manual gets about the cap ("" without one)."""
        if self.step_limit is None:
            return ""
        return texts()["manual_limit"].format(limit=self.step_limit)


class EpisodeRules(TextEnv):
    """``env`` under the shared episode rules, with a cap of ``max_steps`` actions."""

    def __init__(self, env: TextEnv, max_steps: int | None) -> None:
        self.env = env
        self.rules = StepRules(max_steps)

    @property
    def step_limit(self) -> int | None:
        return self.rules.step_limit

    @property
    def max_steps(self) -> int:  # type: ignore[override]
        return self.rules.max_steps

    # -- what the wrapper decides ---------------------------------------------------

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        opening = self.env.reset(task, seed=seed)
        self.rules.begin()
        return opening

    def step(self, action: str) -> Step:
        refused = self.rules.refuse()
        if refused is not None:
            return refused
        return self.rules.settle(self.env.step(action))

    def manual(self) -> str:
        own, line = self.env.manual(), self.rules.manual_line()
        return own.rstrip() + " " + line if line else own

    def expert_action(self) -> str | None:
        return None if self.rules.over else self.env.expert_action()

    def candidate_actions(self) -> list[str]:
        return [] if self.rules.over else self.env.candidate_actions()

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
        if name in ("env", "rules"):
            raise AttributeError(name)
        return getattr(self.env, name)
