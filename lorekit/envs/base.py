"""The text-environment contract every LoreKit environment implements.

Agents, the evaluation runner and the env checker only ever see these types, so
TextCraft, ALFWorld, WebShop and Crafter are interchangeable behind them. The
contract is deliberately small: reset, step, a task catalogue, the action forms
and a manual for prompts, plus an optional expert for demonstrations and tests.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Literal

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return _EMPTY


Execution = Literal["inline", "thread", "process"]
"""Where the harness runs an env's calls so that they never block the event loop:

- ``inline``: on the event loop itself, for envs whose calls take microseconds
  (a thread hop would cost more than the call);
- ``thread``: on a thread of its own, for envs that wait on I/O (a browser, a
  server) or release the GIL;
- ``process``: in a child process of its own, for CPU-bound envs in pure
  Python; the harness builds it there from its registry name and arguments.
"""


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

    def __reduce__(self) -> tuple[Any, ...]:
        # A read-only mapping proxy cannot be pickled; a task goes to process envs as a dict.
        return (Task, (self.id, self.goal, self.group, dict(self.data)))


@dataclass(frozen=True)
class Observation:
    """What ``reset`` returns: the opening text and structured extras."""

    text: str
    info: Mapping[str, Any] = field(default_factory=_empty)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Observation, (self.text, dict(self.info)))


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

    def __reduce__(self) -> tuple[Any, ...]:
        return (Step, (self.observation, self.reward, self.done, dict(self.info)))


class TextEnv(ABC):
    """A text environment: one episode at a time, driven by action strings.

    Implementations never raise on bad input from an agent: an invalid action,
    a step before ``reset`` or after the episode ended all return a ``Step``
    whose observation says what went wrong. Same task, seed and actions must
    give the same observations.

    Env authors write plain synchronous methods; ``execution`` declares how
    the harness should run them (see :data:`Execution`). The default,
    ``thread``, is safe for any env: a slow or hung call never stalls other
    episodes. Declare ``inline`` only for envs whose calls take microseconds.
    """

    name: str = "env"
    max_steps: int = 50
    execution: ClassVar[Execution] = "thread"

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

    def describe_split(self, split: str) -> str:
        """One line on where ``split``'s tasks come from, shown with run results
        (e.g. generated games versus a benchmark's official set). Default: none."""
        return ""

    def expert_action(self) -> str | None:
        """Next action of a built-in expert from the current state, if any."""
        return None

    def end_episode(self) -> None:
        """The current episode is over (its agent finished, failed or timed
        out): release what it held before the env serves another, such as a
        browser leased from a shared pool. The harness calls it after every
        episode; the next ``reset`` must work after it. Default: nothing."""
        return None

    def close(self) -> None:
        """Release what the env holds (a browser, a server process); called
        once by whoever built it when it is no longer used. Default: nothing."""
        return None

    def candidate_actions(self) -> list[str]:
        """Concrete, well-formed actions worth trying now (not all valid).

        Random baselines and exploration policies sample from this; an env
        that cannot enumerate its actions returns an empty list.
        """
        return []


def pick_task(
    task: Task | str | None,
    seed: int | None,
    pool: Sequence[Task],
    by_id: Mapping[str, Task],
    unknown: str,
) -> Task:
    """The task a ``reset`` plays: ``task`` itself, the task its id names, or,
    when None, one drawn from ``pool`` with ``seed`` (so same seed, same task).

    ``unknown`` is the ``KeyError`` message for an id ``by_id`` lacks, with
    ``{task!r}`` where the id goes; it should show what ids look like.
    """
    if isinstance(task, Task):
        return task
    if task is None:
        return pool[random.Random(seed if seed is not None else 0).randrange(len(pool))]
    found = by_id.get(task)
    if found is None:
        raise KeyError(unknown.format(task=task))
    return found
