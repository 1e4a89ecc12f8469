"""Which tasks a reproduction plays: the experiment's, or a sample across its task groups.

A split is often stored sorted (TextCraft's by recipe depth), so its first N tasks
are no sample of it: ``-n 50`` of ADaPT's 200 goals was 11 depth-4 and 39 depth-3
goals and no depth-2 one, compared with a figure over all three depths. A
smaller run here draws from every task group in proportion to its size, and at
random within each group from a seed, so that the same seed always draws the
same tasks (a resume plays what the first session planned).

The shares come from Sainte-Laguë's divisor method, handing out one task at a
time to the group that most lacks one, and the tasks are played in that order.
So a smaller draw is the start of every larger one, the whole set included
(an episode's key holds its place in the plan): ``-n 50`` then ``-n 100``, or
then the whole split, under one run id keeps the 50 episodes played and plays
only the rest.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class TaskLike(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def group(self) -> str: ...


def allocation_order(sizes: Mapping[str, int], n: int) -> list[str]:
    """The group of each of ``n`` draws in turn, in proportion to the groups' sizes
    (Sainte-Laguë, ties to the group named first); never more than a group holds."""
    counts = dict.fromkeys(sizes, 0)
    order = []
    for _ in range(min(n, sum(sizes.values()))):
        open_groups = [g for g in sizes if counts[g] < sizes[g]]
        best = max(open_groups, key=lambda g: sizes[g] / (2 * counts[g] + 1))
        counts[best] += 1
        order.append(best)
    return order


def proportional_counts(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """How many of ``n`` tasks each group gets (:func:`allocation_order`)."""
    counts = dict.fromkeys(sizes, 0)
    for group in allocation_order(sizes, n):
        counts[group] += 1
    return counts


@dataclass(frozen=True, slots=True)
class TaskPlan:
    """The tasks a row plays and how they were chosen (saved with the comparison)."""

    split: str
    population: int
    """The experiment's tasks: the first ``episodes`` of the split, or all of it."""
    chosen: tuple[str, ...]
    """Task ids, in the order they play."""
    sampled: bool
    """True when fewer than the population were drawn across its groups."""
    seed: int
    groups: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Group -> (tasks chosen, tasks of the population)."""
    paper_n: Mapping[str, int] = field(default_factory=dict)
    """Group -> its tasks in the population; ``""`` -> all: the paper's n per column."""

    @property
    def size(self) -> int:
        return len(self.chosen)

    def describe(self, *, compared: bool = True) -> str:
        """One line for the table and the saved page (``compared=False``: not set beside
        the published figures, so it does not say what those are over)."""
        if not self.sampled:
            if self.size > self.population:
                return (
                    f"tasks: the first {self.size} of split {self.split} (beyond the "
                    f"experiment's {self.population})"
                )
            return f"tasks: all {self.size} of the experiment's tasks (split {self.split})"
        shares = ", ".join(f"{g} {k} of {of}" for g, (k, of) in sorted(self.groups.items()))
        return (
            f"tasks: {self.size} of the experiment's {self.population} (split {self.split}), "
            f"drawn across its task groups in proportion, seed {self.seed}: {shares}"
            + ("; the published figures are over all of them" if compared else "")
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "population": self.population,
            "played": self.size,
            "sampled": self.sampled,
            "seed": self.seed,
            "groups": {g: list(v) for g, v in self.groups.items()},
            "paper_n": dict(self.paper_n),
            "tasks": list(self.chosen),
        }


def plan_tasks(
    tasks: Sequence[TaskLike],
    split: str,
    *,
    experiment_episodes: int | None,
    n: int | None,
    seed: int,
) -> tuple[list[Any], TaskPlan]:
    """The tasks to play of ``tasks`` (a split's catalogue) and their :class:`TaskPlan`.

    The experiment's tasks are the first ``experiment_episodes`` of the split (as the
    paper took them), or all. They play in the order of :func:`sample_tasks`, so ``n``
    below that many plays the start of it, a sample across the groups; ``n`` above it
    plays the split's first ``n``."""
    population = list(tasks[:experiment_episodes] if experiment_episodes else tasks)
    sizes = _sizes(population)
    paper_n = {"": len(population), **sizes}
    if n is not None and n > len(population):
        chosen = list(tasks[:n])
    else:
        chosen = sample_tasks(population, len(population) if n is None else n, seed)
    sampled = n is not None and n < len(population)
    got = _sizes(chosen)
    plan = TaskPlan(
        split,
        len(population),
        tuple(t.id for t in chosen),
        sampled,
        seed,
        {g: (got.get(g, 0), k) for g, k in sizes.items()},
        paper_n,
    )
    return chosen, plan


def sample_tasks(tasks: Sequence[Any], n: int, seed: int) -> list[Any]:
    """``n`` of ``tasks`` drawn across their groups in proportion, each group's at random
    from ``seed`` (the same seed, the same tasks), in the order drawn: the first ``k``
    of any draw are the draw of ``k``."""
    by_group: dict[str, list[Any]] = {}
    for task in tasks:
        by_group.setdefault(str(task.group), []).append(task)
    for group, members in by_group.items():
        random.Random(f"{seed}/{group}").shuffle(members)  # a str seed hashes alike everywhere
    taken = dict.fromkeys(by_group, 0)
    out = []
    for group in allocation_order({g: len(v) for g, v in by_group.items()}, n):
        out.append(by_group[group][taken[group]])
        taken[group] += 1
    return out


def _sizes(tasks: Sequence[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for task in tasks:
        out[str(task.group)] = out.get(str(task.group), 0) + 1
    return out
