"""An agent that plays the first offered action it has not tried yet (no model),
and its view: what ``lorekit show`` prints and the report draws of its notes."""

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape

from lorekit.agents import Episode, Recorder, Trajectory
from lorekit.envs import EnvLike, Task
from lorekit.llm.roles import Roles


class FirstChoiceAgent:
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
    name = "first-choice"
    report_script = "tiny_plugin:report_view.js"

    def claims(self, notes: Mapping[str, Any]) -> bool:
        return isinstance(notes.get("first_choice"), Mapping)

    def header(self, notes: Mapping[str, Any]) -> str:  # optional, like goal(notes)
        return f"tried {len(notes['first_choice'].get('tried') or [])} distinct actions"

    def show(self, notes: Mapping[str, Any], console: Console) -> None:
        for i, action in enumerate(notes["first_choice"].get("tried") or [], 1):
            console.print(f"{i:>3}. {escape(str(action))}", highlight=False)


VIEW = FirstChoiceView()
