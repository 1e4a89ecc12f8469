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

from typing import Any

from lorekit.agents import graph_pass
from lorekit.agents.agentkit.common import HERE, NOTE_STEPS, text_of, texts
from lorekit.agents.base import Recorder, Trajectory
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.graph import Graph, NodeFailure
from lorekit.llm.roles import Roles

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


class AgentKitCrafterAgent:
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
    """

    name = "agentkit-crafter"

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
        self.spec = graph_pass.load_checked(
            spec if spec is not None else SPEC_PATH, FINAL, PER_STEP_KEYS
        )
        if FEED not in {n.key for n in self.spec.nodes}:
            raise ValueError(f"{self.spec.source}: this agent needs a node {FEED!r}")
        self.max_steps = max_steps
        self.max_repeats = max_repeats
        self.history_steps = history_steps
        self.feed_every = feed_every
        self.kb_refine_every = kb_refine_every
        self.sequential = bool(sequential)
        self.skip_asleep = bool(skip_asleep)
        self.note_steps = note_steps
        self.model_roles: tuple[str, ...] = graph_pass.model_roles(self.spec)

    def env_defaults(self, env_name: str) -> dict[str, Any]:
        """The detailed observation the spec reads, and the published agent's world:
        ``crafter.Env(area=(256, 256))`` with episodes that end only on death
        (``--env-opt area=64 --env-opt length=10000`` plays crafter's own)."""
        if env_name != "crafter":
            raise ValueError("agentkit-crafter's questions are written for crafter only")
        return dict(ENV_DEFAULTS)

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep, graph, log = await graph_pass.start(
            self.spec, env, task, roles, recorder, seed, note_key="agentkit"
        )
        names = await ep.env.candidate_actions()
        words = texts()
        db = self.spec.initial_db(
            {
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
        )
        log.update(feeds=0, skills={})
        lines: list[tuple[str, bool, str]] = []  # (skill, flagged, history line)
        under: dict[str, int] = {}  # steps played under each skill
        feedbacks: dict[str, str] = {}  # one long-term reflection per skill
        for number in range(1, self.max_steps + 1):
            if ep.done:
                break
            asleep = (
                graph_pass.asleep_step(ep.observation, number, log, FALLBACK)
                if self.skip_asleep
                else None
            )
            if asleep is not None:
                action = asleep
            else:
                skill = str(db["current_skill"])
                flagged = [line for s, f, line in lines if s == skill and f]
                feed = (
                    bool(lines)
                    and lines[-1][:2] == (skill, True)
                    and len(flagged) % self.feed_every == 0
                )
                db["feed_due"] = "yes" if feed else ""
                db["skill_history"] = "\n".join(flagged) or words["no_history"]
                db["feedback"] = feedbacks.get(skill, words["no_feedback"])
                review = number % self.kb_refine_every == 0 and bool(db["knowledge"])
                db["kb_review"] = "yes" if review else ""
                db["step_flagged"] = "no"
                action = await self._decide(graph, db, number, log)
                if feed:
                    feedbacks[skill] = str(db["feedback"])
                    log["feeds"] += 1
                skill = str(db["current_skill"])
                under[skill] = under.get(skill, 0) + 1
                log["skills"] = dict(under)
                flag = db["step_flagged"] == "yes"
                lines.append((skill, flag, self._line(number, graph, action, flag)))
                self._windows(db, lines, skill)
            previous = ep.observation
            await ep.act(action)
            db.update(last_action=action, previous_observation=previous, observation=ep.observation)
        if not ep.done:
            ep.stop("budget")
        return ep.trajectory

    async def _decide(self, graph: Graph, db: dict[str, Any], number: int, log: Any) -> str:
        results, note = await graph_pass.one_pass(
            graph,
            db,
            number=number,
            log=log,
            sequential=self.sequential,
            note_steps=self.note_steps,
        )
        chosen = results.get(FINAL)
        if isinstance(chosen, dict) and "action" in chosen:
            repeats = int(chosen.get("repeats", 1))
            action = chosen["action"] if repeats == 1 else f"{chosen['action']} {repeats}"
            return graph_pass.played(note, str(action))
        reason = chosen.error if isinstance(chosen, NodeFailure) else f"{chosen!r} is no action"
        graph_pass.fell_back(log, note, FALLBACK, f"{FINAL}: {reason}")
        return FALLBACK

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
