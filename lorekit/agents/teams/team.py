"""Run a team of hourglass agents in a team world: :func:`run_team`.

The pieces come from three places and meet here: the organization and the
hourglass agents (this package), the shared world and its clock
(:mod:`lorekit.agents.teams.world.teamworld`), the skills the agents' actions call
(:mod:`lorekit.agents.teams.world.skills`), and the collaboration modes and metrics
(:mod:`lorekit.agents.teams.modes`, :mod:`lorekit.agents.teams.metrics`).
Success always comes from the world; the result carries everything the
timeline view needs (the event list and the message pool). Models that
simulate their latency are handed the world's clock here
(:func:`~lorekit.agents.teams.models.give_clock`), so they need none of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lorekit.agents.teams.clock import Clock
from lorekit.agents.teams.hourglass import HourglassAgent, Outcome, SkillRunner
from lorekit.agents.teams.metrics import TeamMetrics, team_metrics
from lorekit.agents.teams.models import give_clock
from lorekit.agents.teams.modes import Mode, ModeOutcome, run_members
from lorekit.agents.teams.org import Organization
from lorekit.agents.teams.world.skills import (
    SkillError,
    SkillResult,
    make_skill,
    parse_skill_call,
    skills_prompt,
)
from lorekit.agents.teams.world.teamworld import TeamWorld
from lorekit.llm.accounting import PriceTable, UsageLedger
from lorekit.llm.calls import CallRecord, CallSink
from lorekit.llm.roles import Roles

#: Skills a hands-off root may still run on its own player: keeping it alive.
UPKEEP = ("drink", "eat", "sleep", "fight")


@dataclass
class TeamResult:
    """What one team run did. ``events`` follow the timeline schema: dicts with
    ``time``, ``tick``, ``agent``, ``kind`` and fields particular to the kind."""

    task: str
    org: str
    mode: str
    success: bool
    outcome: ModeOutcome
    metrics: TeamMetrics
    events: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)

    @property
    def traces(self) -> dict[str, list[dict[str, Any]]]:
        """Each agent's own events, in order."""
        out: dict[str, list[dict[str, Any]]] = {}
        for event in self.events:
            out.setdefault(str(event["agent"]), []).append(event)
        return out

    def summary(self) -> dict[str, Any]:
        """Plain data for a run store's summary (JSON-safe: a NaN TC is None)."""
        return {
            "task": self.task,
            "org": self.org,
            "mode": self.mode,
            "success": self.success,
            "reason": self.outcome.reason,
            **self.metrics.to_dict(),
        }


def skill_runner(
    world: TeamWorld,
    *,
    budget: int | None = None,
    actions: Callable[[str, str, str], None] | None = None,
) -> SkillRunner:
    """Skills as the agents call them: one skill call run to its end through
    ``world.act``, one action per tick, while the others keep acting too.
    ``actions(player, call, action)`` sees each action as it is applied."""

    async def run(player: str, call: str) -> Outcome:
        try:
            skill = make_skill(world.core, player, call, budget=budget)
        except SkillError as exc:
            return SkillResult(False, str(exc), 0)
        done = 0
        while not world.done:
            action = skill.next_action()
            if action is None:
                break
            await world.act(player, action)
            done += 1
            if actions is not None:
                actions(player, call, action)
        if skill.result is None:  # the episode ended first; a won episode is no failure
            how = "won" if world.success else "over"
            return SkillResult(world.success, f"the episode is {how}; skill stopped", done)
        return skill.result

    return run


def validate_call(text: str) -> None:
    """A skill call's syntax and name, checked before the agent queues it."""
    parse_skill_call(text)


async def run_team(
    world: TeamWorld,
    org: Organization,
    roles: Roles,
    *,
    mode: Mode,
    clock: Clock | None = None,
    cutoff_s: float = 600.0,
    max_time_s: float = 3600.0,
    goal: str | None = None,
    max_retries: int = 2,
    skill_budget: int | None = None,
    record_actions: bool = False,
    on_call: CallSink | None = None,
    prices: PriceTable | None = None,
    team_progress: bool = False,
    working_root: bool = False,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> TeamResult:
    """Run ``org``'s agents in ``world`` (already reset to its task) under ``mode``.

    Each agent asks ``roles[leader|worker]`` (falling back to the default
    role); models that simulate their latency (``use_clock``) are given the
    world's clock, so it passes there (a model built with ``sleep=clock.sleep``
    already spends it on that clock). ``record_actions`` adds an ``action``
    event for every crafter action (many: one per tick per busy player).
    ``on_call`` sees every model call (a run store's writer); the result keeps
    them too, for the per-role usage. ``team_progress`` shows every agent the
    world's progress counter (an ablation: by default a leader infers progress
    from its workers' reports); ``working_root`` lets a tree's root work with its
    own player too (by default it plans and delegates only, as in the paper).
    ``on_event`` sees every event as it happens (a run store records each
    finished skill as a step then, so an episode cut short keeps them).
    """
    if clock is not None and clock is not world.clock:
        raise ValueError("run_team's clock must be the world's clock (TeamWorld(party, clock))")
    missing = [a.player for a in org.agents if a.player not in world.players]
    if missing:
        raise ValueError(
            f"organization {org.kind} needs players {', '.join(missing)} but the world has "
            f"{', '.join(world.players)}; build the party with {len(org.agents)} players"
        )
    calls: list[CallRecord] = []

    def sink(record: CallRecord) -> None:
        calls.append(record)
        if on_call is not None:
            on_call(record)

    give_clock({roles[role] for role in {a.role for a in org.agents}}, world.clock)
    metered = roles.metered(UsageLedger(prices), sink)
    events: list[dict[str, Any]] = []

    def action_event(player: str, call: str, action: str) -> None:
        event = {
            "time": world.now(),
            "tick": world.tick,
            "agent": org.by_player(player),
            "kind": "action",
            "action": action,
            "skill": call,
        }
        events.append(event)
        if on_event is not None:
            on_event(event)

    runner = skill_runner(
        world, budget=skill_budget, actions=action_event if record_actions else None
    )
    text_goal = goal or world.task.goal
    agents = [
        HourglassAgent(
            a.name,
            org,
            world,
            metered[a.role],
            runner,
            goal=text_goal,
            skills=skills_prompt(),
            validate=validate_call,
            events=events,
            on_event=on_event,
            max_retries=max_retries,
            team_progress=team_progress,
            working_root=working_root,
            upkeep=UPKEEP,
        )
        for a in org.agents
    ]
    outcome = await run_members(agents, mode, world, cutoff_s=cutoff_s, max_time_s=max_time_s)
    events.sort(key=lambda e: (e["time"], e["tick"]))  # stable: same-time events keep order
    return TeamResult(
        task=world.task.id,
        org=org.kind,
        mode=mode,
        success=outcome.success,
        outcome=outcome,
        metrics=team_metrics(outcome, calls, prices=prices),
        events=events,
        messages=[m.to_dict() for m in world.messages()],
        calls=calls,
    )
