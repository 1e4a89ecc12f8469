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

from typing import Any

from lorekit.agents import graph_pass
from lorekit.agents.agentkit.common import HERE, NOTE_STEPS, text_of, texts
from lorekit.agents.base import Episode, Recorder, Trajectory
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.envs.steplimit import follow_env_cap
from lorekit.llm.roles import Roles

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


class AgentKitWebShopAgent:
    """See the module docstring. ``max_steps``: actions per episode, and the
    number the guidance names; None: the env's cap (the paper's 25 where the
    env has none). ``sequential``: one model call at a time."""

    name = "agentkit-webshop"

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
        self.spec = graph_pass.load_checked(
            spec if spec is not None else SPEC_PATH, FINAL, PER_STEP_KEYS
        )
        self.max_steps = max_steps
        self.sequential = bool(sequential)
        self.note_steps = note_steps
        self.model_roles: tuple[str, ...] = graph_pass.model_roles(self.spec)

    def env_defaults(self, env_name: str) -> dict[str, Any]:
        """The agent's step budget, which its guidance states, as the env's limit (an
        env option given on the command line still wins; see :meth:`run`)."""
        if env_name != "webshop":
            raise ValueError("agentkit-webshop's questions are written for webshop only")
        return {} if self.max_steps is None else {"max_steps": self.max_steps}

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep, graph, log = await graph_pass.start(
            self.spec, env, task, roles, recorder, seed, note_key="agentkit"
        )
        # the budget the model is told is the one that binds: its own (or the env's cap,
        # the paper's 25 where there is none), and never more than the env allows
        budget = min(follow_env_cap(self.max_steps, env.max_steps, PAPER_STEPS), int(env.max_steps))
        guidance = texts()["webshop_guidance"].format(max_steps=budget).strip()
        page = await self._page(ep)
        db = self.spec.initial_db(
            {"guidance": guidance, "task": task.goal, "history": texts()["no_history"], **page}
        )
        lines: list[str] = []
        for number in range(1, budget + 1):
            if ep.done:
                break
            if number > 1:
                db.update(await self._page(ep))
            buttons = [b for b in str(db["clickables"]).split("|") if b]
            results, note = await graph_pass.one_pass(
                graph,
                db,
                number=number,
                log=log,
                sequential=self.sequential,
                note_steps=self.note_steps,
            )
            chosen = results.get(FINAL)
            if isinstance(chosen, str):
                action = graph_pass.played(note, chosen)
            else:
                back = next((b for b in buttons if b.lower() == "back to search"), None)
                fallback = None if back is None else f"click[{back}]"
                graph_pass.fell_back(log, note, fallback, f"{FINAL}: {text_of(chosen)}")
                if fallback is None:
                    ep.stop("gave_up")
                    break
                action = fallback
            lines.append(
                f"Step {number}: {text_of(results.get('summary_page'))} | "
                f"plan: {text_of(results.get('summary_plan'))} | did: {action}"
            )
            db["history"] = "\n".join(lines)
            await ep.act(action)
        if not ep.done:
            ep.stop("budget")
        return ep.trajectory

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
