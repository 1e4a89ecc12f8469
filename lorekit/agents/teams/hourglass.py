"""The hourglass agent of S-Agents: wide perception, narrow planning, wide action.

One :meth:`HourglassAgent.iterate` is one planning iteration:

1. **perception**: the agent's own observation of the world, plus the team's
   message pool since its last plan (time, speaker, addressee, text). Commands
   addressed to it are checked against the organization here: a command from
   someone who may not command it is refused with a message to the sender and
   never executed (its queue runs on); an accepted command becomes its task at
   hand and it tells its commander it is starting. There is no global progress
   counter: a leader infers how far the team is from its workers' reports
   (``team_progress=True`` shows the world's counter, as a named ablation).
2. **progress monitor** (when there is something to judge: its own skill
   results, or reports from teammates it gave work to): the model judges the
   task ``success``, ``fail`` or ``ongoing`` from the previous plan and those
   results. So a leader that only delegates judges its stages from its workers'
   reports. A worker reports success or failure (why, what the skills said,
   and its inventory) to the agent that gave it the task.
3. **task planner** (one model answer): objective, long-term plan in stages,
   and the task for the current stage.
4. **action planner** (a second answer): sees only that task, its own
   observation and results -- not the goal, the plan or the messages (the
   hourglass's waist) -- and answers the queue of actions: skill calls,
   delegations ``tell NAME to TASK`` and messages ``say to NAME: TEXT``.
5. the queue runs: skills through the injected skill runner, messages through
   the world's pool. A failed skill, a new accepted command or the end of the
   episode stops the queue so the next iteration can react.

Model answers are JSON, parsed strictly. A malformed answer is sent back with
the error, at most ``max_retries`` times; after that the failure is recorded
as an event and the agent carries on with an empty plan. The agent never
imports the world or the skills: it gets them as small protocols, so the same
agent runs on the real team world and on the test doubles.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any, Protocol

from lorekit.agents.prompts import render
from lorekit.agents.teams.answers import (
    AnswerError,
    check_monitor,
    check_task_plan,
    inventory_line,
    parse_json,
    prompts,
)
from lorekit.agents.teams.org import Organization
from lorekit.llm.ask import Attempt, ask
from lorekit.llm.base import LLM, Message

COMMAND = "COMMAND: "
REPORT = "REPORT "
REFUSED = "REFUSED: "

_TELL = re.compile(r"^tell\s+(\S+?)\s+to\s+(.+)$", re.IGNORECASE | re.DOTALL)
_SAY = re.compile(r"^say(?:\s+to\s+(\S+?))?\s*:\s*(.+)$", re.IGNORECASE | re.DOTALL)


class PoolMessage(Protocol):
    @property
    def time(self) -> float: ...
    @property
    def tick(self) -> int: ...
    @property
    def sender(self) -> str: ...
    @property
    def to(self) -> str | None: ...
    @property
    def text(self) -> str: ...


class World(Protocol):
    """What the agent needs of the shared team world."""

    @property
    def tick(self) -> int: ...
    @property
    def done(self) -> bool: ...
    def now(self) -> float: ...
    def observe(self, player: str) -> str: ...
    def progress(self) -> str: ...
    def post(self, sender: str, to: str | None, text: str) -> PoolMessage: ...
    def messages(self, since: int = 0) -> Sequence[PoolMessage]: ...


class Outcome(Protocol):
    @property
    def success(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def ticks(self) -> int: ...


SkillRunner = Callable[[str, str], Awaitable[Outcome]]
"""``await run(player, call)``: run one skill call to its end on the world."""

Validator = Callable[[str], object]
"""Raises ``ValueError`` (with a message a model can act on) for a bad skill call."""


class HourglassAgent:
    """One team member. See the module docstring for one iteration."""

    def __init__(
        self,
        name: str,
        org: Organization,
        world: World,
        model: LLM,
        run_skill: SkillRunner,
        *,
        goal: str,
        skills: str = "",
        validate: Validator | None = None,
        events: list[dict[str, Any]] | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        max_retries: int = 2,
        team_progress: bool = False,
        working_root: bool = False,
        upkeep: Collection[str] = (),
    ) -> None:
        self.name = name
        self.spec = org.agent(name)
        self.player = self.spec.player  # the modes know a member's own posts by it
        self.org = org
        self.world = world
        self.model = model
        self.run_skill = run_skill
        self.goal = goal
        self.skills = skills
        self.validate = validate
        self.events = events if events is not None else []
        self.on_event = on_event  # sees each event as it is emitted (a run store)
        self.max_retries = max_retries
        self.team_progress = team_progress  # ablation: show the world's progress counter
        # The root of a tree plans and delegates only, as in the paper, unless it
        # is a working root; every other agent works with its own player.
        root = org.kind == "tree" and not org.commanders(name) and bool(org.subordinates(name))
        self.hands_on = working_root or not root
        self.upkeep = frozenset(upkeep)  # skills a hands-off root may still run (stay alive)
        self.task: str | None = None
        self.assigned_by: str | None = None
        self.last_plan: dict[str, Any] | None = None
        self.queue: deque[str] = deque()
        self.results: list[str] = []
        self.plans = 0  # completed planning iterations (the paper's prompt times)
        self._seen = 0
        self._inbox: list[str] = []
        self._verdict = "none yet"
        self._reports = False  # a teammate reported on work this agent gave it

    # -- the iteration ---------------------------------------------------------------------
    async def iterate(self) -> bool:
        """One planning iteration and the actions it queued.

        True when the agent has nothing of its own under way (the world is done,
        it waits for orders, or it only sent messages): the modes then leave it
        quiet until someone posts news.
        """
        if self.world.done:
            return True
        fresh = self._perceive()
        if self.task is not None and (self.results or self._reports) and not fresh:
            await self._monitor()
            self._perceive()  # what arrived while the monitor thought, before planning
        if self._waits_for_orders() and self.task is None:
            return True
        if not await self._plan():
            return self.world.done
        ran = await self._run_queue()
        return self.world.done or not ran

    def _waits_for_orders(self) -> bool:
        """An agent under a commander acts only on its orders (messages wait in the
        inbox): a worker of a tree, and every link of a chain after the first, which
        would otherwise plan from the goal at once instead of taking the relay. Peers
        that may command each other (a graph) wait for nobody."""
        return any(not self.org.may_command(self.name, c) for c in self.org.commanders(self.name))

    # -- perception ------------------------------------------------------------------------
    def _perceive(self) -> bool:
        """Read new messages; True when a new command was accepted."""
        new = self.world.messages(self._seen)
        self._seen += len(new)
        fresh = False
        for m in new:
            sender = self.org.by_player(m.sender)
            to = None if m.to is None else self.org.by_player(m.to)
            if sender == self.name or (to is not None and to != self.name):
                continue
            self._inbox.append(f"{m.time:.1f}s {sender} -> {to or 'all'}: {m.text}")
            if to == self.name and m.text.startswith(COMMAND):
                fresh = self._command(sender, m.text[len(COMMAND) :].strip()) or fresh
            elif to == self.name and m.text.startswith(REPORT) and not _starting(m.text):
                self._reports = True
        return fresh

    def _command(self, sender: str, task: str) -> bool:
        why = self.org.refusal(sender, self.name)
        if why is not None:
            self._post(sender, REFUSED + why)
            self._emit("refused", sender=sender, command=task, reason=why)
            return False
        self.task, self.assigned_by = task, sender
        self.queue.clear()
        self.results.clear()
        self._verdict = "new task, not judged yet"
        self._report("starting", "")
        return True

    def _report(self, status: str, detail: str) -> None:
        if self.assigned_by is None:
            return
        text = f"{REPORT}{status}: {self.task}" + (f" ({detail})" if detail else "")
        self._post(self.assigned_by, text)
        self._emit("report", to=self.assigned_by, status=status, task=self.task, text=text)

    def _perception(self) -> str:
        progress = ""
        if self.team_progress:
            progress = " " + render(
                prompts()["progress"], "progress", progress=self.world.progress()
            )
        return render(
            prompts()["perception"],
            "perception",
            time=self.world.now(),
            tick=self.world.tick,
            observation=self.world.observe(self.spec.player),
            progress=progress,
            messages="\n".join(f"- {m}" for m in self._inbox) or "(none)",
            results="\n".join(f"- {r}" for r in self.results[-8:]) or "(none)",
        )

    def _system(self) -> str:
        return render(
            prompts()["system"],
            "system",
            name=self.name,
            player=self.spec.player,
            role=self.spec.role,
            goal=self.goal,
            team=self.org.describe(),
            skills=self.skills or "(see the observation)",
        )

    # -- progress monitor ------------------------------------------------------------------
    async def _monitor(self) -> None:
        prompt = render(
            prompts()["monitor"],
            "monitor",
            perception=self._perception(),
            last_plan=json.dumps(self.last_plan) if self.last_plan else "(none)",
            task=self.task,
        )
        self._reports = False
        answer = await self._ask("monitor", prompt, check_monitor)
        if answer is None:
            return
        status, why = answer["status"], answer["rationale"]
        self._emit("monitor", task=self.task, status=status, rationale=why)
        self._verdict = f"{status}: {why}"
        if status == "ongoing":
            return
        detail = why
        if status != "success":
            last = f"; {self.results[-1]}" if self.results else ""
            detail = f"{why}{last}; {inventory_line(self.world.observe(self.player))}"
        self._report("succeeded" if status == "success" else "failed", detail)
        self.task, self.assigned_by = None, None
        self.results.clear()

    # -- task and action planner -----------------------------------------------------------
    async def _plan(self) -> bool:
        """Task planner, then action planner; False when no usable answer came."""
        subs = self.org.subordinates(self.name)
        own = prompts()["lead_own"] if self.hands_on else prompts()["lead_hands_off"]
        hint = render(prompts()["lead_hint"], "lead_hint", subordinates=", ".join(subs), own=own)
        prompt = render(
            prompts()["task_plan"],
            "task_plan",
            perception=self._perception(),
            task=self._task_text(),
            last_plan=json.dumps(self.last_plan) if self.last_plan else "(none)",
            verdict=self._verdict,
            lead_hint=hint if subs else "",
        )
        self._inbox.clear()
        answer = await self._ask("plan", prompt, check_task_plan)
        if answer is None:
            return False
        self.last_plan = {k: answer[k] for k in ("objective", "plan", "task")}
        if self.task is None or self.assigned_by is None:
            self.task = answer["task"] or None
        actions = await self._actions(answer["task"]) if answer["task"] else []
        if actions is None:
            return False
        self.queue = deque(actions)
        self.plans += 1  # a completed pass: both planners answered (not one cut off)
        self._emit("plan", **self.last_plan, actions=list(actions))
        return True

    async def _actions(self, task: str) -> list[str] | None:
        """The action planner: the stage's task alone in, the action queue out."""
        subs = self.org.subordinates(self.name)
        team = (
            render(prompts()["action_team"], "action_team", subordinates=", ".join(subs))
            if subs
            else prompts()["action_alone"].strip()
        )
        system = render(
            prompts()["action_system"],
            "action_system",
            name=self.name,
            player=self.spec.player,
            team=team,
            skills=self.skills or "(see the observation)",
        )
        prompt = render(
            prompts()["action_plan"],
            "action_plan",
            time=self.world.now(),
            tick=self.world.tick,
            observation=self.world.observe(self.spec.player),
            results="\n".join(f"- {r}" for r in self.results[-8:]) or "(none)",
            task=task,
        )
        answer = await self._ask("actions", prompt, self._check_actions, system=system)
        return None if answer is None else list(answer["actions"])

    def _task_text(self) -> str:
        if self.task is None:
            return "(none: decide one)"
        return f"{self.task} (given by {self.assigned_by})" if self.assigned_by else self.task

    def _check_actions(self, text: str) -> dict[str, Any]:
        data = parse_json(text, {"actions": list})
        for action in data["actions"]:
            if not isinstance(action, str) or not action.strip():
                raise AnswerError(f"every action must be a non-empty string, got {action!r}")
            self._check_action(action.strip())
        data["actions"] = [a.strip() for a in data["actions"]]
        return data

    def _check_action(self, action: str) -> None:
        tell, say = _TELL.match(action), _SAY.match(action)
        target = tell.group(1) if tell else say.group(1) if say else None
        if target is not None and target not in self.org.names:
            raise AnswerError(f"{action!r} names {target!r}, who is not on the team")
        if target == self.name:
            raise AnswerError(f"{action!r}: do it yourself instead of telling yourself")
        skill = action.split("(", 1)[0].strip()
        if tell is None and say is None and not self.hands_on and skill not in self.upkeep:
            raise AnswerError(
                f"{action!r}: you plan and delegate only; give it to a teammate with "
                "'tell NAME to ...'"
            )
        if tell is None and say is None and self.validate is not None:
            try:
                self.validate(action)
            except ValueError as exc:
                raise AnswerError(f"bad action {action!r}: {exc}") from None

    async def _ask(
        self,
        purpose: str,
        prompt: str,
        check: Callable[[str], dict[str, Any]],
        *,
        system: str | None = None,
    ) -> dict[str, Any] | None:
        """The model's checked answer, retrying malformed ones; None when all failed.

        Every answer is an event (``call``) as it comes, so a team's timeline
        shows the retries in the order the world saw them."""
        messages = [Message("system", system or self._system()), Message("user", prompt)]

        def called(attempt: Attempt) -> None:
            out = attempt.completion
            if out is None:  # a failed call is raised, not an answer to record
                return
            self._emit(
                "call",
                role=self.spec.role,
                purpose=purpose,
                attempt=attempt.number,
                prompt_tokens=out.usage.prompt_tokens,
                completion_tokens=out.usage.completion_tokens,
                latency_s=out.latency_s,
                error=(str(attempt.error) if attempt.error is not None else "") or None,
            )

        answer = await ask(
            self.model,
            messages,
            lambda out: check(out.text.strip()),
            attempts=self.max_retries + 1,
            feedback=lambda exc: render(prompts()["retry"], "retry", error=str(exc)),
            on_attempt=called,
        )
        if answer.ok:
            return answer.value
        tries = self.max_retries + 1
        self._emit(purpose, error=f"no usable answer after {tries} tries: {answer.error}")
        return None

    # -- acting ----------------------------------------------------------------------------
    async def _run_queue(self) -> bool:
        """Run the queue; True when at least one skill ran (there is work to judge)."""
        ran = False
        while self.queue and not self.world.done:
            action = self.queue.popleft()
            tell, say = _TELL.match(action), _SAY.match(action)
            if tell is not None:
                self._send(tell.group(1), COMMAND + tell.group(2).strip())
            elif say is not None:
                self._send(say.group(1), say.group(2).strip())
            else:
                outcome = await self.run_skill(self.player, action)
                ran = True
                verb = "succeeded" if outcome.success else "failed"
                self.results.append(f"{action}: {verb} ({outcome.reason})")
                self._emit(
                    "skill",
                    call=action,
                    success=outcome.success,
                    reason=outcome.reason,
                    ticks=outcome.ticks,
                )
                if not outcome.success:
                    self.queue.clear()
            if self._new_command():
                self.queue.clear()
        return ran

    def _send(self, to: str | None, text: str) -> None:
        self._post(to, text)
        self._emit("message", to=to, text=text)

    def _post(self, to: str | None, text: str) -> None:
        """Pool messages name players (the world's speakers); prompts show agent names."""
        self.world.post(self.player, None if to is None else self.org.agent(to).player, text)

    def _new_command(self) -> bool:
        """A command it will accept arrived (a refused one leaves the queue running)."""
        return any(
            m.to == self.player
            and m.text.startswith(COMMAND)
            and self.org.refusal(self.org.by_player(m.sender), self.name) is None
            for m in self.world.messages(self._seen)
        )

    def _emit(self, kind: str, **fields: Any) -> None:
        event = {"time": self.world.now(), "tick": self.world.tick, "agent": self.name}
        event.update(kind=kind, **fields)
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)


def _starting(text: str) -> bool:
    return text.startswith(f"{REPORT}starting")
