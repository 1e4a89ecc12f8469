"""How an experiment's rows are played as the paper played them, beyond agent options.

Three things a table's setup can need that an agent's options cannot say:

- **which tasks** (:class:`TaskSample`): ADaPT's ALFWorld dev set is 10 games
  of each task type, drawn by its code with Python's ``random`` seeded 0 over
  the sorted game files, type after type. :func:`select_tasks` draws the same
  way from the split's tasks sorted by id, so on the same games it picks the
  same ones;
- **a file made by an earlier command** (:class:`NeededFile`): the laws
  paper's experience row reads laws learned from records. Until the file
  exists the row is left out of a plain ``reproduce run`` (named, with how to
  make the file), and asking for it by name says the same in one line;
- **repeated runs**: AutoManual reports the mean of 3 runs of each experiment
  (build and test). :func:`repeat_prefixes` names each run's ids, and
  :func:`pooled` joins the runs' episodes, whose rate is the mean of the runs'
  rates when each run plays the same tasks (the paper's figure).

This module knows no method or env: the rules are data in the experiment files.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from lorekit.eval.reproduce_columns import Where

_SAMPLE = {"per_group": True, "seed": False, "order": False, "source": False}
_NEEDS = {"path": True, "how": True}


class _Task(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def group(self) -> str | None: ...


T = TypeVar("T", bound=_Task)


@dataclass(frozen=True, slots=True)
class TaskSample:
    """``per_group`` tasks of each task group, drawn with ``random.Random(seed)``:
    groups in ``order`` (then any others, by name), each group's tasks sorted by id,
    one generator for all groups (``random.seed(seed)`` once, then ``random.sample``
    per group, as ADaPT's ``run_alfworld.py`` drew its dev games)."""

    per_group: int
    seed: int = 0
    order: tuple[str, ...] = ()
    source: str | None = None
    """Where the rule comes from (a file and its lines), for the reader."""

    def describe(self) -> str:
        return f"{self.per_group} per task group, drawn with seed {self.seed}"


@dataclass(frozen=True, slots=True)
class NeededFile:
    """A file a row's options name, relative to the folder ``reproduce run`` runs in,
    and the command that makes it."""

    path: str
    how: str

    def missing(self, folder: Path | None = None) -> bool:
        where = Path(self.path)
        return not (where if where.is_absolute() else (folder or Path.cwd()) / where).is_file()

    def message(self, row_id: str) -> str:
        return (
            f"row {row_id!r} reads {self.path}, which does not exist here; make it with: {self.how}"
        )


def parse_sample(where: Where, value: Any) -> TaskSample:
    data = where.mapping(value, "select", _SAMPLE)
    per_group, seed = data["per_group"], data.get("seed", 0)
    if type(per_group) is not int or per_group < 1:
        where.fail("select.per_group", f"expected a positive integer, got {per_group!r}")
    if type(seed) is not int or seed < 0:
        where.fail("select.seed", f"expected a non-negative integer, got {seed!r}")
    order = data.get("order") or []
    if not isinstance(order, list) or not all(isinstance(g, str) and g for g in order):
        where.fail("select.order", "expected a list of task group names")
    if len(set(order)) != len(order):
        where.fail("select.order", f"groups repeat: {order}")
    return TaskSample(per_group, seed, tuple(order), where.optional_text(data, "source", "select."))


def parse_needed_file(where: Where, value: Any, at: str) -> NeededFile:
    data = where.mapping(value, at, _NEEDS)
    return NeededFile(where.text(data, "path", f"{at}."), where.text(data, "how", f"{at}."))


def select_tasks(tasks: Sequence[T], sample: TaskSample) -> list[T]:
    """The tasks ``sample`` draws from ``tasks`` (see :class:`TaskSample`); a group
    with fewer tasks than it asks for is an error naming the group."""
    groups: dict[str, list[T]] = {}
    for task in sorted(tasks, key=lambda t: t.id):
        groups.setdefault(str(task.group), []).append(task)
    missing = [g for g in sample.order if g not in groups]
    if missing:
        raise ValueError(f"select.order: the split has no task group {missing[0]!r}")
    order = [*sample.order, *sorted(g for g in groups if g not in sample.order)]
    rng = random.Random(sample.seed)
    picked: list[T] = []
    for name in order:
        members = groups[name]
        if len(members) < sample.per_group:
            raise ValueError(
                f"select.per_group: task group {name!r} has {len(members)} tasks, "
                f"fewer than the {sample.per_group} the paper played"
            )
        picked.extend(rng.sample(members, sample.per_group))
    return picked


def repeat_prefixes(prefix: str, repeats: int) -> list[str]:
    """The run-id prefix of each repeated run: ``PREFIX`` for the first (so a
    reproduction of one run keeps its ids), ``PREFIX.r2``, ``PREFIX.r3``, ... after."""
    return [prefix, *(f"{prefix}.r{k}" for k in range(2, repeats + 1))]


def pooled(per_run: Iterable[Mapping[str, Sequence[Any]]]) -> dict[str, list[Any]]:
    """Row -> the episodes of all runs together (what the comparison counts)."""
    out: dict[str, list[Any]] = {}
    for runs in per_run:
        for row, episodes in runs.items():
            out.setdefault(row, []).extend(episodes)
    return out
