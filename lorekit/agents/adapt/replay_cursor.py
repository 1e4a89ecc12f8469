"""The replay model's side of one ADaPT episode: answers from the record, in order.

LoreKit's ADaPT (profile ``code``) asks its executor one line per turn and its
planner once per decomposition. The cursor walks the record's events in the
same order and answers:

- an executor call that starts a run: the record's next event must be a run
  of the same task (else a ``call`` divergence); its first recorded line is
  the answer;
- an executor call that continues the run (the prompt ends with the last
  answered line and LoreKit's observation of it): the next recorded line,
  after comparing that observation with the record's (``observation``
  divergence when they differ);
- a planner call: the record's next event must be a plan, answered as plan
  text that the code's parser reads back as exactly that plan (the record
  keeps the parsed steps, not the planner's words);
- a run whose transcript the original dropped (a *gap*): the reader's
  stand-in actions, if any (TextCraft's: actions that rebuild the inventory
  the record shows next), then a verdict line with the recorded outcome. Each
  gap is listed in the episode's divergences as ``gap``, with what was done.

When LoreKit asks something the record has no answer for (a call out of
order, a run going on after its recorded end), the cursor names it and goes
off the record: from then on every executor call gets a failure verdict and
every planner call an empty plan, so the episode ends quickly and is counted
as not decided. :meth:`ReplayEpisode.finish` compares LoreKit's run log with
the record's events (``decision``), lists what the record had left
(``missing``) and the replayed figure against the recorded one (``reward``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lorekit.agents.adapt.code_plan import from_data, render
from lorekit.agents.adapt.replay_record import Event, RecordedEpisode, RecordedPlan, RecordedRun
from lorekit.agents.base import Trajectory
from lorekit.envs.asyncenv import AsyncEnv
from lorekit.eval.replay import Divergence
from lorekit.llm.base import Message

GapFill = Callable[[int, AsyncEnv], Awaitable[list[str]]]
"""``fill(position, env)``: the stand-in actions for the gap run at that event position."""


@dataclass(frozen=True, slots=True)
class Verdicts:
    """The lines a stand-in run ends with (they must read as the profile's claims)."""

    completed: str
    failed: str


def _goal(prompt: str, marker: str) -> str:
    for line in reversed(prompt.split("\n")):
        if line.startswith(marker):
            return line[len(marker) :]
    return ""


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


class ReplayEpisode:
    """The cursor of one recorded ADaPT episode (see the module docstring)."""

    def __init__(
        self,
        record: RecordedEpisode,
        *,
        verdicts: Verdicts,
        goal_marker: str = "Goal: ",
        fill: GapFill | None = None,
        executor_role: str = "executor",
        planner_role: str = "planner",
    ) -> None:
        self.record = record
        self.verdicts = verdicts
        self.goal_marker = goal_marker
        self.fill = fill
        self.executor_role = executor_role
        self.planner_role = planner_role
        self.env: AsyncEnv | None = None
        self.pos = 0
        self.calls = 0
        self.divergences: list[Divergence] = []
        self.off_record = False
        self.run: RecordedRun | None = None
        self.queue: list[str] = []
        self.answered: list[str] = []
        self.gap_runs = 0
        self.filled = 0
        self.compared = 0
        self.equal = 0
        self.clean_compared = 0
        self.clean_equal = 0

    # -- answering -----------------------------------------------------------------

    def bind(self, env: AsyncEnv) -> None:
        self.env = env

    async def answer(self, role: str, messages: Sequence[Message]) -> str:
        self.calls += 1
        prompt = messages[-1].content if messages else ""
        if self.off_record:
            return self._off(role)
        if role == self.planner_role:
            return self._plan(prompt)
        return await self._execute(prompt)

    def _off(self, role: str) -> str:
        return "Execution Order:" if role == self.planner_role else self.verdicts.failed

    def _diverge(self, kind: str, role: str, recorded: str, asked: str, *, leave: bool) -> None:
        self.divergences.append(Divergence(kind, self.calls, role, _clip(recorded), _clip(asked)))
        if leave:
            self.off_record = True

    def _next(self) -> Event | None:
        return self.record.events[self.pos] if self.pos < len(self.record.events) else None

    def _plan(self, prompt: str) -> str:
        self._close_run()
        event = self._next()
        goal = _goal(prompt, "Goal: ")
        if not isinstance(event, RecordedPlan):
            recorded = event.describe() if event else "nothing more"
            self._diverge("call", self.planner_role, recorded, f"a plan for {goal!r}", leave=True)
            return self._off(self.planner_role)
        self.pos += 1
        return render(event.group)

    def _continuing(self, prompt: str) -> tuple[bool, str]:
        lines = prompt.split("\n")
        if self.run is None or not self.answered or len(lines) < 3:
            return False, ""
        return lines[-3] == f"> {self.answered[-1]}", lines[-2]

    async def _execute(self, prompt: str) -> str:
        going_on, seen = self._continuing(prompt)
        if going_on:
            return self._go_on(seen)
        self._close_run()
        event = self._next()
        goal = _goal(prompt, self.goal_marker).rstrip()
        if not isinstance(event, RecordedRun) or event.task.rstrip() != goal:
            recorded = event.describe() if event else "nothing more"
            self._diverge(
                "call", self.executor_role, recorded, f"an executor run on {goal!r}", leave=True
            )
            return self._off(self.executor_role)
        self.pos += 1
        self.run, self.answered = event, []
        if event.turns is None:
            self.gap_runs += 1
            fill, env = self.fill, self.env
            stand_in = await fill(self.pos - 1, env) if fill is not None and env is not None else []
            self.filled += len(stand_in)
            verdict = self.verdicts.completed if event.success else self.verdicts.failed
            self.queue = [*stand_in, verdict]
            what = (
                f"{len(stand_in)} stand-in action(s) to reach the state the record "
                "shows next, then "
                if stand_in
                else ""
            )
            self._diverge(
                "gap",
                self.executor_role,
                f"no transcript ({event.describe()})",
                f"{what}{verdict!r}",
                leave=False,
            )
        else:
            self.queue = [a for a, _ in event.turns]
        return self._give()

    def _give(self) -> str:
        line = self.queue.pop(0)
        self.answered.append(line)
        return line

    def _go_on(self, seen: str) -> str:
        run = self.run
        assert run is not None
        if run.turns is not None:
            recorded = run.turns[len(self.answered) - 1][1]
            self.compared += 1
            clean = self.gap_runs == 0  # no dropped transcript before: the state is the record's
            self.clean_compared += clean
            if seen == recorded:
                self.equal += 1
                self.clean_equal += clean
            else:
                self._diverge("observation", "env", recorded, seen, leave=False)
        if self.queue:
            return self._give()
        self._diverge(
            "call",
            self.executor_role,
            f"the run of {run.task!r} ends after {len(self.answered)} line(s)",
            "one more executor turn",
            leave=True,
        )
        return self._off(self.executor_role)

    def _close_run(self) -> None:
        """A run LoreKit ended before the record did is a decision divergence."""
        run = self.run
        if run is not None and run.turns is not None and self.queue:
            done = len(self.answered)
            self._diverge(
                "decision",
                self.executor_role,
                f"the run of {run.task!r} goes on for {len(run.turns)} line(s)",
                f"LoreKit's executor stopped after {done}",
                leave=False,
            )
        self.run, self.queue = None, []

    # -- the end -------------------------------------------------------------------

    def finish(self, trajectory: Trajectory) -> dict[str, Any]:
        self._close_run()
        notes = trajectory.notes
        left = self.record.events[self.pos :]
        if left and not self.off_record:
            self._diverge(
                "missing", "-", f"{len(left)} more: {left[0].describe()}", "nothing", leave=False
            )
        log = notes.get("plan_log") or []
        mismatch = first_mismatch(self.record.events, log)
        if mismatch is not None:
            self.divergences.append(Divergence("decision", 0, "controller", *mismatch))
        replayed = float(notes.get("code_reward") or 0.0)
        if replayed != self.record.reward:
            self.divergences.append(
                Divergence("reward", 0, "-", str(self.record.reward), str(replayed))
            )
        decided = mismatch is None and not self.off_record and not left
        return {
            "record": self.record.key,
            "published": self.record.reward,
            "replayed": replayed,
            "env_success": trajectory.success,
            "decided": decided,
            "calls": self.calls,
            "runs": len(self.record.runs),
            "gap_runs": self.gap_runs,
            "stand_in_actions": self.filled,
            "observations_compared": self.compared,
            "observations_equal": self.equal,
            "observations_before_gaps": [self.clean_equal, self.clean_compared],
            "divergences": [d.to_dict() for d in self.divergences],
        }


def first_mismatch(events: Sequence[Event], log: Sequence[Any]) -> tuple[str, str] | None:
    """The first place LoreKit's run log (``notes["plan_log"]``) leaves the record:
    (what the record has, what LoreKit did), or None when they agree."""
    for index, event in enumerate(events):
        mine = log[index] if index < len(log) else None
        if not isinstance(mine, dict):
            return event.describe(), "nothing"
        if isinstance(event, RecordedRun):
            same = (
                mine.get("run") == event.task
                and mine.get("depth") == event.depth
                and mine.get("success") == event.success
            )
            ours = (
                f"run on {mine.get('run')!r} (depth {mine.get('depth')}, "
                f"success {mine.get('success')})"
            )
        else:
            try:
                group = from_data({"steps": mine.get("plan"), "logic": mine.get("logic")})
            except ValueError:
                return event.describe(), repr(mine)
            same = (
                "plan" in mine
                and mine.get("depth") == event.depth
                and group.to_data()["steps"] == event.group.to_data()["steps"]
                and group.operator == event.group.operator
            )
            ours = f"plan {mine.get('plan')!r} at depth {mine.get('depth')}, {mine.get('logic')}"
        if not same:
            return event.describe(), ours
    if len(log) > len(events):
        return "nothing more", repr(log[len(events)])
    return None
