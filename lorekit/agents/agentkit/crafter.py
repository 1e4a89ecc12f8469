"""AgentKit's Crafter agent: each game step is one pass of the 32-node ``crafter.yaml``.

After Wu et al. 2024 (section 3, figure 3). What the graph cannot hold by
itself, the agent keeps between passes in the graph's database:

* ``history``: one line per step (surroundings, vitals, plan, action and how
  the previous action went), the last ``history_steps`` (25) of them, for the
  short-term reflection (``reflect``); ``recent_history`` (the last 3) for the
  unexpected and mistake questions, and ``actor_history`` (3 to 5: the steps
  under the current skill) for the actor, the published agent's windows;
* ``kb_review``: set every ``kb_refine_every`` (50) steps while something is
  known, so the ``when`` node ``kb_refine`` prunes the knowledge;
* ``skill_history``: the lines of the steps flagged by the gate (a mistake or
  confusion) under the current skill, with their mistakes summary
  (``s_mistakes``), for the long-term reflection ``feed``. After every
  ``feed_every``-th (3rd) such step the agent sets ``feed_due``, so ``feed`` (a
  ``when`` node) runs first in the next pass; its advice is kept per skill and
  shown as ``feedback`` to the planner and the plan sketch while that skill is
  current;
* ``knowledge``, ``unknowns``, ``skills``, ``subgoal`` and ``plan`` are written
  by the graph's own nodes and hooks and simply live on in the database.

The node ``actor_final`` gives ``{action, repeats}``; the agent plays
``"action repeats"`` (the env repeats it, stopping early when blocked), so one
pass can cover several game steps. An answer its hook keeps refusing ends in
``noop``, recorded as a fallback; a failed model call or a raising hook ends
the episode with an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lorekit.agents import graph_pass
from lorekit.agents.agentkit.common import HERE, NOTE_STEPS, text_of, texts
from lorekit.agents.base import Episode
from lorekit.agents.graph_agent import GraphAgent, GraphRun, NoAction
from lorekit.envs.base import Task
from lorekit.graph import Graph, NodeFailure

SPEC_PATH = HERE / "crafter.yaml"
FINAL = "actor_final"
FEED = "feed"
FALLBACK = "noop"
ENV_DEFAULTS: dict[str, Any] = {"observation": "detailed", "area": 256, "length": 0}
"""What the published agent played: a 256x256 world, no step limit."""
RECENT_STEPS = 3
"""Steps the unexpected and mistake questions see, as published."""
ACTOR_STEPS = (3, 5)
"""The actor sees the steps under the current skill, at least 3 and at most 5."""
PER_STEP_KEYS = (
    "manual",
    "goal",
    "observation",
    "previous_observation",
    "last_action",
    "actions",
    "history",
    "recent_history",
    "actor_history",
    "skill_history",
    "max_repeats",
)


@dataclass(slots=True)
class _Memory:
    """What the agent keeps between passes of one episode, beside the database."""

    lines: list[tuple[str, bool, str]] = field(default_factory=list)  # (skill, flagged, line)
    under: dict[str, int] = field(default_factory=dict)  # steps played under each skill
    feedbacks: dict[str, str] = field(default_factory=dict)  # one long-term reflection a skill
    skill: str = ""  # the skill current when this step's pass began
    feed: bool = False  # this step's pass runs the long-term reflection


class AgentKitCrafterAgent(GraphAgent[_Memory]):
    """See the module docstring.

    ``max_steps``: graph passes per episode (each is 32 model calls at most).
    ``max_repeats``: a cap on the repeat rule of ``actor_final``'s hook (4 for a
    move with nothing in the way, 3 for ``do``, 1 otherwise, as published).
    ``history_steps``: steps the short-term reflection sees (the paper: 25).
    ``feed_every``: flagged steps under one skill between long-term reflections (3).
    ``kb_refine_every``: steps between reviews of the knowledge (``kb_refine``; 50).
    ``spec``: another spec (it must keep ``actor_final`` and ``feed``).
    ``sequential``: one model call at a time. ``skip_asleep``: play ``noop``
    without asking while the player sleeps (crafter ignores actions then).

    The loop is :class:`~lorekit.agents.graph_agent.GraphAgent`'s; this agent
    fills the gates and history windows of each pass and reads ``actor_final``.
    """

    name = "agentkit-crafter"
    note_key = "agentkit"
    fallback_action = FALLBACK

    def __init__(
        self,
        *,
        spec: str | None = None,
        max_steps: int = 100,
        max_repeats: int = 4,
        history_steps: int = 25,
        feed_every: int = 3,
        kb_refine_every: int = 50,
        sequential: bool = False,
        skip_asleep: bool = True,
        note_steps: int = NOTE_STEPS,
    ) -> None:
        graph_pass.check_counts(
            max_steps=(max_steps, 1),
            max_repeats=(max_repeats, 1),
            history_steps=(history_steps, 1),
            feed_every=(feed_every, 1),
            kb_refine_every=(kb_refine_every, 1),
            note_steps=(note_steps, 0),
        )
        loaded = graph_pass.load_checked(
            spec if spec is not None else SPEC_PATH, FINAL, PER_STEP_KEYS
        )
        if FEED not in {n.key for n in loaded.nodes}:
            raise ValueError(f"{loaded.source}: this agent needs a node {FEED!r}")
        super().__init__(
            loaded,
            max_steps=max_steps,
            sequential=sequential,
            note_steps=note_steps,
            skip_asleep=skip_asleep,
        )
        self.max_repeats = max_repeats
        self.history_steps = history_steps
        self.feed_every = feed_every
        self.kb_refine_every = kb_refine_every

    def env_defaults(self, env_name: str) -> dict[str, Any]:
        """The detailed observation the spec reads, and the published agent's world:
        ``crafter.Env(area=(256, 256))`` with episodes that end only on death
        (``--env-opt area=64 --env-opt length=10000`` plays crafter's own)."""
        if env_name != "crafter":
            raise ValueError("agentkit-crafter's questions are written for crafter only")
        return dict(ENV_DEFAULTS)

    async def begin(
        self, ep: Episode, task: Task, log: dict[str, Any], budget: int
    ) -> tuple[dict[str, Any], _Memory]:
        names = await ep.env.candidate_actions()
        words = texts()
        values = {
            "manual": words["crafter_manual"].strip(),
            "goal": task.goal,
            "actions": ", ".join(names),
            "observation": ep.observation,
            "previous_observation": words["no_previous_observation"],
            "last_action": words["no_last_action"],
            "history": words["no_history"],
            "recent_history": words["no_history"],
            "actor_history": words["no_history"],
            "skill_history": words["no_history"],
            "max_repeats": self.max_repeats,
        }
        log.update(feeds=0, skills={})
        return values, _Memory()

    async def before_pass(self, run: GraphRun[_Memory]) -> None:
        """The gates of this pass: the long-term reflection (``feed_due``) after
        every ``feed_every``-th flagged step under a skill, the knowledge review
        (``kb_review``) every ``kb_refine_every`` steps, and the skill's windows."""
        db, mem, words = run.db, run.memory, texts()
        skill = str(db["current_skill"])
        flagged = [line for s, f, line in mem.lines if s == skill and f]
        feed = (
            bool(mem.lines)
            and mem.lines[-1][:2] == (skill, True)
            and len(flagged) % self.feed_every == 0
        )
        mem.skill, mem.feed = skill, feed
        db["feed_due"] = "yes" if feed else ""
        db["skill_history"] = "\n".join(flagged) or words["no_history"]
        db["feedback"] = mem.feedbacks.get(skill, words["no_feedback"])
        review = run.number % self.kb_refine_every == 0 and bool(db["knowledge"])
        db["kb_review"] = "yes" if review else ""
        db["step_flagged"] = "no"

    def choose(self, run: GraphRun[_Memory], results: Mapping[str, Any]) -> str:
        """``actor_final``'s ``{action, repeats}`` as ``"action repeats"`` (the env
        repeats it); a plain action when it is played once."""
        chosen = results.get(FINAL)
        if isinstance(chosen, dict) and "action" in chosen:
            repeats = int(chosen.get("repeats", 1))
            action = chosen["action"] if repeats == 1 else f"{chosen['action']} {repeats}"
            return str(action)
        reason = chosen.error if isinstance(chosen, NodeFailure) else f"{chosen!r} is no action"
        raise NoAction(f"{FINAL}: {reason}")

    def after_pass(self, run: GraphRun[_Memory], results: Mapping[str, Any], action: str) -> None:
        """Keep the reflection's advice, count the step under its skill, and add
        the step to the history windows."""
        db, mem = run.db, run.memory
        if mem.feed:
            mem.feedbacks[mem.skill] = str(db["feedback"])
            run.log["feeds"] += 1
        skill = str(db["current_skill"])
        mem.under[skill] = mem.under.get(skill, 0) + 1
        run.log["skills"] = dict(mem.under)
        flag = db["step_flagged"] == "yes"
        mem.lines.append((skill, flag, self._line(run.number, run.graph, action, flag)))
        self._windows(db, mem.lines, skill)

    def _windows(self, db: dict[str, Any], lines: list[tuple[str, bool, str]], skill: str) -> None:
        """The history windows of the published agent: ``history_steps`` (25) for the
        reflection, 3 for the unexpected and mistake questions, and for the actor as
        many as were played under the current skill, at least 3 and at most 5."""
        run = 0
        for s, _, _ in reversed(lines):
            if s != skill:
                break
            run += 1
        texts_ = [line for _, _, line in lines]
        db["history"] = "\n".join(texts_[-self.history_steps :])
        db["recent_history"] = "\n".join(texts_[-RECENT_STEPS:])
        db["actor_history"] = "\n".join(texts_[-min(ACTOR_STEPS[1], max(ACTOR_STEPS[0], run)) :])

    @staticmethod
    def _line(number: int, graph: Graph, action: str, flagged: bool) -> str:
        """This step in the history: the summary nodes' latest answers and the action."""

        def last(key: str) -> str:
            try:
                return text_of(graph.last_result(key))
            except KeyError:
                return text_of(None)

        line = (
            f"Step {number}: saw {last('s_obs')} {last('s_vitals')} | "
            f"last action: {last('s_action')} | plan: {last('s_plan')} | did: {action}"
        )
        return f"{line} | mistakes: {last('s_mistakes')}" if flagged else line
