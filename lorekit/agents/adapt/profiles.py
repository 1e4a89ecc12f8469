"""Named settings of ADaPT: as its published code ran (``code``), as its paper states (``paper``).

LoreKit's own ADaPT (profile ``lorekit``, the default of :class:`AdaptAgent`)
improves on the original: the environment checks sub-tasks, plans are parsed
with precedence and retried, a call budget caps an episode. A number in a
paper's table was made by the authors' code, though, so reproducing it needs
that code's behaviour: its turn budgets and patience, the executor's own word
on success, thought lines answered ``OK.``, a plan read exactly as its parser
read it, the rest of a plan run after the goal is reached. Those settings are
data (``profiles.yaml``), per environment; this module reads them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from importlib import resources
from typing import Any, Literal

from lorekit import yamlio

Profile = Literal["lorekit", "code", "paper"]
PROFILES: tuple[str, ...] = ("lorekit", "code", "paper")
StateRule = Literal["inventory", "last_action", "none"]
GoalStep = Literal["crafted_goal", "done"]
ExampleRule = Literal["listed", "task_type", "atomic"]


@dataclass(frozen=True, slots=True)
class CodeSettings:
    """One environment's settings of the original ADaPT (see ``profiles.yaml``)."""

    env: str
    profile: str
    source: str
    d_max: int
    executor_turns: int
    react_turns: int
    patience: int
    stall_contains: tuple[str, ...]
    stall_equals: tuple[str, ...]
    thought_prefix: str
    thought_reply: str
    verdict_anywhere: bool
    completed: str
    failed: str
    rewrite_put: bool
    arrival_rewrite: bool
    state: StateRule
    reset_between: bool
    goal_step: GoalStep
    executor_tokens: int
    planner_tokens: int
    planner_stop: tuple[str, ...]
    examples: ExampleRule

    def stalled(self, observation: str) -> bool:
        """Whether a turn with this observation counts against patience."""
        return observation in self.stall_equals or any(
            s in observation for s in self.stall_contains
        )

    def with_overrides(self, **values: Any) -> CodeSettings:
        """A copy with some fields set (an agent option over the profile's value)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown ADaPT profile setting(s): {', '.join(unknown)}")
        return replace(self, **values)


@functools.cache
def _table() -> Mapping[str, Mapping[str, Mapping[str, Any]]]:
    text = resources.files("lorekit.agents.adapt").joinpath("profiles.yaml").read_text()
    data = yamlio.safe_load(text, source="adapt/profiles.yaml")
    if not isinstance(data, dict):
        raise ValueError("adapt/profiles.yaml: expected a mapping of env -> profiles")
    return data


def profile_envs() -> tuple[str, ...]:
    """The environments the original code's settings are known for."""
    return tuple(_table())


def settings_for(env: str, profile: str) -> CodeSettings:
    """The ``code`` or ``paper`` settings for ``env``; ``paper`` starts from ``code``."""
    if profile not in ("code", "paper"):
        raise ValueError(f"profile: expected code or paper here, got {profile!r}")
    entry = _table().get(env)
    if entry is None:
        known = ", ".join(profile_envs())
        raise ValueError(
            f"profile={profile}: the original ADaPT ran on {known}, not on {env!r}; "
            "use profile=lorekit"
        )
    values = dict(entry["code"])
    if profile == "paper":
        values.update(entry.get("paper") or {})
    for name in ("stall_contains", "stall_equals", "planner_stop"):
        values[name] = tuple(values.get(name) or ())
    names = {f.name for f in fields(CodeSettings)}
    extra = sorted(set(values) - names)
    if extra:
        raise ValueError(f"adapt/profiles.yaml: {env}.{profile}: unknown field(s) {extra}")
    return CodeSettings(env=env, profile=profile, **values)


def check_profile(profile: str) -> str:
    if profile not in PROFILES:
        raise ValueError(f"profile: expected one of {', '.join(PROFILES)}, got {profile!r}")
    return profile


def check_examples(examples: str | None, profile: str) -> None:
    """``executor_examples`` (an option of the ``code``/``paper`` executor) is known."""
    if examples is not None and profile == "lorekit":
        raise ValueError("executor_examples: an option of profile=code or paper")
    if examples not in (None, "listed", "task_type", "atomic"):
        raise ValueError(
            f"executor_examples: expected listed, task_type or atomic, got {examples!r}"
        )


def profile_env_defaults(env: str, profile: str) -> dict[str, object]:
    """Env options a ``code``/``paper`` run needs; refuses envs it cannot play.

    The original TextCraft played on after the goal was crafted, and ADaPT's
    code kept running its plan (TextCraft's ``after_goal=continue``). The
    published WebShop ADaPT is another design (a planner over Search,
    SimpleMatch, DetailMatch and Buy modules) that LoreKit does not implement.
    """
    settings_for(env, profile)  # an env the original never ran on fails here
    if env == "webshop":
        raise ValueError(
            f"profile={profile}: the published WebShop ADaPT plans over its own modules "
            "(Search, SimpleMatch, DetailMatch, Buy), which LoreKit does not implement; "
            "use profile=lorekit (docs/adapt.md)"
        )
    return {"after_goal": "continue"} if env == "textcraft" else {}
