"""One episode of a published ADaPT result file, rebuilt as the code played it.

ADaPT's ``run_textcraft.py`` and ``run_alfworld.py`` saved, per episode:

- ``plans``: every executor run (``"<task> at depth D, success: S"``) and
  every plan (``"<steps> at depth D and logic L"``, the steps a Python list
  that may hold nested ``{"steps", "logic"}`` groups) in the order they ran;
- ``trace``: the transcripts the controller kept, one after the other. It
  kept a run's transcript only when the run succeeded and no sub-task above
  it (below the root) failed; every other transcript was dropped;
- ``reward``: the reward of the last executor run.

:func:`read_episode` replays the controller's recursion over ``plans`` to
know each run's place, outcome and whether its transcript was kept, then
cuts ``trace`` into those runs' turns. A record whose pieces do not fit
together (a plan where none can be, fewer transcripts than kept runs) raises
:class:`RecordError` naming the episode and the entry.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from lorekit.agents.adapt.code_plan import StepGroup, from_data

_RUN = re.compile(r"^(?P<task>.*) at depth (?P<depth>\d+), success: (?P<success>True|False)$", re.S)
_PLAN = re.compile(r"^(?P<steps>\[.*\]) at depth (?P<depth>\d+) and logic (?P<logic>\w+)$", re.S)
_BETWEEN_RUNS = re.compile(r"\n>\n+")


class RecordError(ValueError):
    """A published episode whose entries do not fit the code that wrote them."""


@dataclass(slots=True)
class RecordedRun:
    """One executor run of the record; ``turns`` is None where its transcript was dropped."""

    task: str
    depth: int
    success: bool
    kept: bool = False
    turns: list[tuple[str, str]] | None = None

    def describe(self) -> str:
        return f"executor run on {self.task!r} (depth {self.depth}, success {self.success})"


@dataclass(slots=True)
class RecordedPlan:
    """One plan of the record, as the controller held it after unwrapping."""

    group: StepGroup
    depth: int

    def describe(self) -> str:
        return (
            f"plan {self.group.to_data()['steps']!r} at depth {self.depth}, {self.group.operator}"
        )


Event = RecordedRun | RecordedPlan


@dataclass(slots=True)
class RecordedEpisode:
    """A published episode: its events in execution order and its figure."""

    key: str
    problem: str
    reward: float
    events: list[Event] = field(default_factory=list)

    @property
    def runs(self) -> list[RecordedRun]:
        return [e for e in self.events if isinstance(e, RecordedRun)]


def parse_entries(key: str, plans: Sequence[object]) -> list[Event]:
    """The ``plans`` list as events (plans unwrapped as the record shows them)."""
    events: list[Event] = []
    for index, entry in enumerate(plans):
        text = str(entry)
        plan = _PLAN.match(text)
        if plan:
            try:
                steps = ast.literal_eval(plan.group("steps"))
                logic = plan.group("logic")
                group = from_data(
                    {"steps": steps, "logic": logic if logic in ("AND", "OR") else None}
                )
            except (ValueError, SyntaxError) as exc:
                raise RecordError(f"{key}.plans[{index}]: unreadable steps ({exc})") from None
            events.append(RecordedPlan(group, int(plan.group("depth"))))
            continue
        run = _RUN.match(text)
        if run is None:
            raise RecordError(f"{key}.plans[{index}]: neither a run nor a plan: {text[:80]!r}")
        events.append(
            RecordedRun(run.group("task"), int(run.group("depth")), run.group("success") == "True")
        )
    return events


class _Walk:
    """The controller's recursion over the recorded events (see the module docstring)."""

    def __init__(self, key: str, events: list[Event], d_max: int) -> None:
        self.key = key
        self.events = events
        self.d_max = d_max
        self.pos = 0
        self.kept: list[RecordedRun] = []

    def take(self) -> Event:
        if self.pos >= len(self.events):
            raise RecordError(f"{self.key}.plans: ends before the controller would")
        event = self.events[self.pos]
        self.pos += 1
        return event

    def task(self, task: str, depth: int) -> tuple[bool, list[RecordedRun]]:
        """Outcome of a string (sub-)task and the runs whose transcripts it returns."""
        run = self.take()
        if not isinstance(run, RecordedRun) or run.task != task or run.depth != depth:
            raise RecordError(
                f"{self.key}.plans[{self.pos - 1}]: expected the run of {task!r} at depth "
                f"{depth}, found {run.describe()}"
            )
        if run.success or depth >= self.d_max:
            return run.success, [run]
        return self.group(self.take(), depth + 1)

    def group(self, plan: Event, depth: int) -> tuple[bool, list[RecordedRun]]:
        if not isinstance(plan, RecordedPlan) or plan.depth != depth:
            raise RecordError(f"{self.key}.plans[{self.pos - 1}]: expected a plan at depth {depth}")
        returned: list[RecordedRun] = []
        success = False
        for step in plan.group.steps:
            if isinstance(step, str):
                success, runs = self.task(step, depth)
            else:
                success, runs = self.group(self.take(), depth)
            if success:
                returned += runs
            if plan.group.operator == "OR" and success:
                break
            if plan.group.operator == "AND" and not success:
                break
        return success, returned


def turns_of(transcript: str) -> list[tuple[str, str]]:
    """``' a1\\no1\\n> a2\\no2'`` -> [(a1, o1), (a2, o2)]."""
    out = []
    for part in transcript.split("\n>"):
        part = part[1:] if part.startswith(" ") else part
        action, _, observation = part.partition("\n")
        out.append((action, observation))
    return out


def read_episode(key: str, entry: dict[str, object], d_max: int) -> RecordedEpisode:
    """One published episode with its runs placed and their kept transcripts attached."""
    plans = entry.get("plans")
    if not isinstance(plans, list) or not plans:
        raise RecordError(f"{key}.plans: expected a non-empty list")
    events = parse_entries(key, plans)
    first = events[0]
    if not isinstance(first, RecordedRun):
        raise RecordError(f"{key}.plans[0]: expected the root's executor run")
    walk = _Walk(key, events, d_max)
    _, returned = walk.task(first.task, first.depth)
    if walk.pos != len(events):
        raise RecordError(f"{key}.plans[{walk.pos}]: entries after the controller finished")
    trace = entry.get("trace") or ""
    if not isinstance(trace, str):
        raise RecordError(f"{key}.trace: expected a string")
    pieces = [p for p in _BETWEEN_RUNS.split(trace) if p.strip()]
    kept = returned  # a failed root at d_max = 1 returns its own transcript, as the code did
    if len(pieces) != len(kept):
        raise RecordError(
            f"{key}.trace: {len(pieces)} transcripts for {len(kept)} kept executor runs"
        )
    for run, piece in zip(kept, pieces, strict=True):
        run.kept = True
        run.turns = turns_of(piece)
    raw = entry.get("reward")
    reward = float(raw) if isinstance(raw, (int, float, bool)) else 0.0
    return RecordedEpisode(key, str(entry.get("problem", "")), reward, events)
