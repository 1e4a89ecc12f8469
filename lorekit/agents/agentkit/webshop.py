"""AgentKit's zero-shot WebShop agent: each page is one pass of the 6-node ``webshop.yaml``.

After Wu et al. 2024 (section 4.2): no demonstrations, a short-term memory of
the browsing so far (one line per step from the two summary nodes) and a plan
sketch renewed every step. The node ``action`` gives ``search[...]`` or
``click[...]``, checked against the page's buttons (the env's
``candidate_actions()``) by its hook; an answer it keeps refusing ends the step
as ``click[back to search]`` where the page has that button, else the episode
stops (``gave_up``), recorded either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lorekit.agents import graph_pass
from lorekit.agents.agentkit.common import HERE, NOTE_STEPS, text_of, texts
from lorekit.agents.base import Episode
from lorekit.agents.graph_agent import GraphAgent, GraphRun, NoAction
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.envs.steplimit import follow_env_cap

SPEC_PATH = HERE / "webshop.yaml"
PAPER_STEPS = 25
"""The paper's guidance ("buy within 25 steps"), for an env without a cap."""
FINAL = "action"
SEARCH_BOX = "(search box)"
PER_STEP_KEYS = (
    "guidance",
    "task",
    "observation",
    "buttons",
    "clickables",
    "can_search",
    "history",
)


def page_options(candidates: list[str]) -> tuple[list[str], bool]:
    """(buttons, has a search box) from ``candidate_actions()`` (``click[x]``, ``search[...]``)."""
    buttons = [c[6:-1] for c in candidates if c.startswith("click[") and c.endswith("]")]
    return buttons, any(c.startswith("search[") for c in candidates)


@dataclass(slots=True)
class _Memory:
    """One episode's browsing so far: a line per step, and the page's buttons."""

    lines: list[str] = field(default_factory=list)
    buttons: list[str] = field(default_factory=list)


class AgentKitWebShopAgent(GraphAgent[_Memory]):
    """See the module docstring. ``max_steps``: actions per episode, and the
    number the guidance names; None: the env's cap (the paper's 25 where the
    env has none). ``sequential``: one model call at a time.

    The loop is :class:`~lorekit.agents.graph_agent.GraphAgent`'s; this agent
    describes each page and keeps the browsing history."""

    name = "agentkit-webshop"
    note_key = "agentkit"

    def __init__(
        self,
        *,
        spec: str | None = None,
        max_steps: int | None = None,
        sequential: bool = False,
        note_steps: int = NOTE_STEPS,
    ) -> None:
        if max_steps is not None:
            graph_pass.check_counts(max_steps=(max_steps, 1))
        super().__init__(
            graph_pass.load_checked(spec if spec is not None else SPEC_PATH, FINAL, PER_STEP_KEYS),
            max_steps=max_steps,
            sequential=sequential,
            note_steps=note_steps,
        )

    def env_defaults(self, env_name: str) -> dict[str, Any]:
        """The agent's step budget, which its guidance states, as the env's limit (an
        env option given on the command line still wins; see :meth:`budget`)."""
        if env_name != "webshop":
            raise ValueError("agentkit-webshop's questions are written for webshop only")
        return {} if self.max_steps is None else {"max_steps": self.max_steps}

    def budget(self, env: EnvLike) -> int:
        """The budget the model is told is the one that binds: its own (or the env's
        cap, the paper's 25 where there is none), and never more than the env allows."""
        return min(follow_env_cap(self.max_steps, env.max_steps, PAPER_STEPS), int(env.max_steps))

    async def begin(
        self, ep: Episode, task: Task, log: dict[str, Any], budget: int
    ) -> tuple[dict[str, Any], _Memory]:
        guidance = texts()["webshop_guidance"].format(max_steps=budget).strip()
        page = await self._page(ep)
        values = {"guidance": guidance, "task": task.goal, "history": texts()["no_history"]}
        return {**values, **page}, _Memory()

    async def before_pass(self, run: GraphRun[_Memory]) -> None:
        if run.number > 1:
            run.db.update(await self._page(run.ep))
        run.memory.buttons = [b for b in str(run.db["clickables"]).split("|") if b]

    def choose(self, run: GraphRun[_Memory], results: Mapping[str, Any]) -> str:
        """The ``action`` node's ``search[...]``/``click[...]`` (its hook checked it)."""
        chosen = results.get(FINAL)
        if not isinstance(chosen, str):
            raise NoAction(f"{FINAL}: {text_of(chosen)}")
        return chosen

    def fallback(self, run: GraphRun[_Memory]) -> str | None:
        """Back to the search page where the page has that button; else give up."""
        back = next((b for b in run.memory.buttons if b.lower() == "back to search"), None)
        return None if back is None else f"click[{back}]"

    def after_pass(self, run: GraphRun[_Memory], results: Mapping[str, Any], action: str) -> None:
        run.memory.lines.append(
            f"Step {run.number}: {text_of(results.get('summary_page'))} | "
            f"plan: {text_of(results.get('summary_plan'))} | did: {action}"
        )
        run.db["history"] = "\n".join(run.memory.lines)

    def after_act(self, run: GraphRun[_Memory], action: str, previous: str) -> None:
        """Nothing: the next pass describes the new page itself (:meth:`before_pass`)."""

    @staticmethod
    async def _page(ep: Episode) -> dict[str, str]:
        """The database keys that describe the current page."""
        buttons, can_search = page_options(await ep.env.candidate_actions())
        return {
            "observation": ep.observation,
            "buttons": " | ".join([*buttons, *([SEARCH_BOX] if can_search else [])]) or "none",
            "clickables": "|".join(buttons),
            "can_search": "yes" if can_search else "no",
        }
