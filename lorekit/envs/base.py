"""The text-environment contract every LoreKit environment implements.

Agents, the evaluation runner and the env checker only ever see these types, so
TextCraft, ALFWorld, WebShop and Crafter are interchangeable behind them. The
contract is deliberately small: reset, step, a task catalogue, the action forms
and a manual for prompts, plus an optional expert for demonstrations and tests.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return _EMPTY


@dataclass(frozen=True)
class Task:
    """One episode specification.

    ``group`` buckets tasks for per-group summaries (``"depth-2"``); ``data``
    holds whatever the environment needs to rebuild the episode exactly.
    """

    id: str
    goal: str
    group: str
    data: Mapping[str, Any] = field(default_factory=_empty)

    def __hash__(self) -> int:
        # ``data`` may be an unhashable mapping; the id, goal and group identify a task.
        return hash((self.id, self.goal, self.group))


@dataclass(frozen=True)
class Observation:
    """What ``reset`` returns: the opening text and structured extras."""

    text: str
    info: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True)
class Step:
    """What ``step`` returns.

    ``info`` carries at least ``valid`` (the action was understood and could be
    applied) and, once ``done``, ``success``. The reward is the environment's
    own score, never an agent's self-report.
    """

    observation: str
    reward: float
    done: bool
    info: Mapping[str, Any] = field(default_factory=_empty)


class TextEnv(ABC):
    """A text environment: one episode at a time, driven by action strings.

    Implementations never raise on bad input from an agent: an invalid action,
    a step before ``reset`` or after the episode ended all return a ``Step``
    whose observation says what went wrong. Same task, seed and actions must
    give the same observations.
    """

    name: str = "env"
    max_steps: int = 50

    @abstractmethod
    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        """Start an episode for ``task`` (object or id); None picks one by seed."""

    @abstractmethod
    def step(self, action: str) -> Step:
        """Apply one action string and report the outcome."""

    @abstractmethod
    def tasks(self, split: str = "test") -> list[Task]:
        """The task catalogue of ``split``, in a stable order."""

    @abstractmethod
    def splits(self) -> tuple[str, ...]:
        """Names accepted by :meth:`tasks`."""

    @abstractmethod
    def action_forms(self) -> list[str]:
        """Templates of the valid actions, e.g. ``"get <count> <item>"``."""

    @abstractmethod
    def manual(self) -> str:
        """A short manual for prompts: goal, actions, scoring."""

    def expert_action(self) -> str | None:
        """Next action of a built-in expert from the current state, if any."""
        return None

    def candidate_actions(self) -> list[str]:
        """Concrete, well-formed actions worth trying now (not all valid).

        Random baselines and exploration policies sample from this; an env
        that cannot enumerate its actions returns an empty list.
        """
        return []
