"""Scripted models that answer the hourglass prompts sensibly, for studies and tests.

They are the S-Agents package's test models, kept apart from the agent's own
modules: ``lorekit team run --simulate``, ``benchmarks/teams.py`` and the tests
use them; a team run with real models never loads them. No LLM runs here.

:func:`simulated_roles` gives ``leader`` and ``worker`` models whose answers
are computed from the prompt the way a careful model would: read the goal, the
team progress, the inventory, the reports and the skill results; plan the tool
chain an item needs (table, wood pickaxe, stone pickaxe); split a collection,
or the current stage of a shelter (its eight walls; or the staged shelter's
foundation, then walls, then roof, a stage only once every piece of the one
before was reported built), between the agent and the subordinates that are
free; reassign after a failure report. Latencies are seeded log-normal draws
(leaders think longer than workers) slept on the world's clock, so a study on
a virtual clock is deterministic. The answers come from
:class:`~.policy.Policy` (one per role: its memory).

The models are deliberately simple and identical across organizations and
modes, so a study compares team shapes and schedules, not prompt luck.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from lorekit.agents.teams.testing.policy import Policy, tool_chain
from lorekit.llm.base import LLM, Completion, RequestParams
from lorekit.llm.roles import Roles
from lorekit.llm.scripted import Latency, ScriptedLLM

__all__ = ["Policy", "simulated_roles", "tool_chain"]

Sleep = Callable[[float], Awaitable[None]]


class _Router:
    """One role's simulated model: the planner's and the monitor's prompts go to one
    scripted model, the action planner's (a short prompt: one task, one
    observation) to a faster one; both share the role's policy (its memory) and
    sleep their latency on the clock the router is given (``use_clock``; a team
    run gives it the world's), or with ``sleep`` until then."""

    def __init__(self, sleep: Sleep) -> None:
        self._sleep = sleep
        self.planner: ScriptedLLM | None = None
        self.actor: ScriptedLLM | None = None

    def use_clock(self, clock: Any) -> None:
        self._sleep = clock.sleep

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    @property
    def model(self) -> str:
        return self.planner.model if self.planner is not None else "simulated"

    async def complete(self, messages: Any, params: RequestParams | None = None) -> Completion:
        assert self.planner is not None and self.actor is not None
        if isinstance(messages, str):
            user = messages
        else:
            user = next((m.content for m in messages if m.role == "user"), "")
        target = self.actor if '{"actions"' in user else self.planner
        return await target.complete(messages, params)


def simulated_roles(
    sleep: Sleep | None = None,
    *,
    seed: int = 0,
    leader_median_s: float = 8.0,
    worker_median_s: float = 4.0,
    sigma: float = 0.5,
    action_share: float = 0.25,
) -> Roles:
    """``leader`` and ``worker`` scripted models with seeded log-normal latency.

    The latency is slept with ``sleep`` (a clock's; real time without one) until
    the models are given a clock: a team run
    (:func:`~lorekit.agents.teams.team.run_team`) gives them the world's. The
    action planner answers a much shorter prompt than the task planner: its
    latency median is ``action_share`` of the role's."""
    models: dict[str, LLM] = {}
    for k, (role, median) in enumerate((("leader", leader_median_s), ("worker", worker_median_s))):
        policy = Policy()
        router = _Router(sleep if sleep is not None else asyncio.sleep)
        router.planner, router.actor = (
            ScriptedLLM(
                fn=policy,
                latency=Latency.lognormal(median * share, sigma),
                seed=seed * 4 + 2 * k + j + 1,
                sleep=router.sleep,
                model=f"simulated-{role}",
            )
            for j, share in enumerate((1.0, action_share))
        )
        models[role] = router
    return Roles(models)
