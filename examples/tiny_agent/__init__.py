"""A new method in one package: an agent, its view, and two registration lines.

``FirstChoiceAgent`` plays the first action the env offers that it has not
tried yet (no model), and leaves in its notes which actions it tried. Its view
prints them for ``lorekit show`` and names ``report_view.js`` for the HTML
report. docs/architecture.md walks through it; tests/test_example_agent.py runs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape

from lorekit.agents import register_agent
from lorekit.agents.base import Episode, Recorder, Trajectory
from lorekit.agents.views import register_view
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.llm.roles import Roles


class FirstChoiceAgent:
    """Tries each offered action once, in the env's order; a floor, like random."""

    name = "first-choice"
    model_roles: tuple[str, ...] = ()  # no model

    def __init__(self, max_steps: int = 30) -> None:
        self.max_steps = max_steps

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep = await Episode.start(env, task, recorder, seed)
        tried: list[str] = []
        ep.trajectory.notes["first_choice"] = {"tried": tried}  # what the view draws
        for _ in range(self.max_steps):
            fresh = [a for a in await ep.env.candidate_actions() if a not in tried]
            if not fresh:
                return ep.stop("gave_up")
            tried.append(fresh[0])
            if (await ep.act(fresh[0])).done:
                return ep.stop("done")
        return ep.stop("budget")


class FirstChoiceView:
    """How ``lorekit show`` and the report draw the agent's notes."""

    name = "first-choice"
    report_script = "tiny_agent:report_view.js"

    def claims(self, notes: Mapping[str, Any]) -> bool:
        return isinstance(notes.get("first_choice"), Mapping)

    def goal(self, notes: Mapping[str, Any]) -> str | None:
        return None

    def header(self, notes: Mapping[str, Any]) -> str | None:
        return f"tried {len(notes['first_choice'].get('tried') or [])} distinct actions"

    def show(self, notes: Mapping[str, Any], console: Console) -> None:
        for i, action in enumerate(notes["first_choice"].get("tried") or [], 1):
            console.print(f"{i:>3}. {escape(str(action))}", highlight=False)


VIEW = FirstChoiceView()

# The two registration lines (a method inside LoreKit puts them in the registries' tables).
register_agent(
    "first-choice", FirstChoiceAgent, "plays untried offered actions in order", needs_model=False
)
register_view("tiny_agent:VIEW")
