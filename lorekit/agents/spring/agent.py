"""The SPRING agent: each Crafter step is one pass of a question graph.

SPRING (Wu et al. 2023) plays Crafter by answering a fixed chain of questions
every step, each question seeing the answers it depends on, the last one
naming the action. "From Laws to Motivation" (Chen et al. 2024, section 3.3
and Table 1) keeps that reasoning frame and changes only what the agent is
told about the game: the crafter paper, learned experience, or action names.
Here the chain is a :mod:`lorekit.graph` spec (``spring.yaml``, our own nine
questions) and the knowledge is the ``context`` option (:mod:`.context`).

The last node, ``action``, must give one allowed action name; its hook
refuses anything else and the graph asks again, up to the node's
``max_retries``. If every answer is refused, the step is played as ``noop``
and recorded as a fallback, never passed off as the model's choice. A model
call that fails for good (after the backend's own retries) or a hook that
raises ends the episode with an error, as with every LoreKit agent. Each step's pass (answers,
refusals, tokens) goes to ``notes["spring"]["steps"]``, which ``lorekit show``
prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lorekit.agents import graph_pass
from lorekit.agents.base import Episode
from lorekit.agents.graph_agent import GraphAgent, GraphRun, NoAction
from lorekit.agents.graph_pass import PassError
from lorekit.agents.spring.context import SpringContext, parse_context, texts
from lorekit.envs.base import Task
from lorekit.graph import NodeFailure

SPEC_PATH = Path(__file__).with_name("spring.yaml")
SHIPPED_SPECS = {"spring": SPEC_PATH, "cot": Path(__file__).with_name("cot.yaml")}
"""Specs named by ``spec=NAME``: SPRING's nine questions, and the two of the
chain-of-thought baseline AgentKit's Table 1 compares with (``cot.yaml``)."""
ACTION_NODE = "action"
FALLBACK_ACTION = "noop"
SPRING_STEPS = 200
"""Default number of actions (graph passes) per episode: a pass is nine model
calls, so a full 10,000-step Crafter episode is a deliberate choice
(``--agent-opt max_steps=...``), not a default."""
NOTE_STEPS = 500
"""Steps whose notes keep every answer (about 10 kB a step)."""
PER_STEP_KEYS: tuple[str, ...] = (
    "background",
    "knowledge",
    "goal",
    "observation",
    "last_action",
    "previous_observation",
    "actions",
)
"""The database keys the agent sets for every pass."""
ENVS = ("crafter",)
"""The text env's status line while the player sleeps: crafter ignores actions then."""


SpringPassError = PassError
"""SPRING's name for :class:`lorekit.agents.graph_pass.PassError`."""


class SpringAgent(GraphAgent[list[str]]):
    """SPRING-style questions over Crafter; see the module docstring.

    ``context``: ``paper`` (default), ``actions`` or ``experience:FILE``.
    ``spec``: another graph spec to reason with, a file or a shipped one by name
    (``cot``: :data:`SHIPPED_SPECS`); it must declare the database keys the agent
    sets (``PER_STEP_KEYS``) and end in a node ``action``.
    ``max_steps``: actions per episode before the agent stops (``budget``).
    ``sequential``: one model call at a time instead of concurrent branches.
    ``note_steps``: how many steps keep every question's answer in the notes;
    later steps keep the action, refusals and costs only.
    ``skip_asleep``: while the player sleeps crafter ignores every action, so
    the agent plays ``noop`` without asking (a step noted ``asleep``) instead
    of paying nine model calls for an answer the game throws away.

    The loop is :class:`~lorekit.agents.graph_agent.GraphAgent`'s; SPRING
    sets the knowledge and the allowed names, and checks the answer against
    them. Its memory for an episode is the env's action names.
    """

    name = "spring"
    note_key = "spring"
    tokens = False
    fallback_action = FALLBACK_ACTION

    def __init__(
        self,
        *,
        context: str = "paper",
        spec: str | None = None,
        max_steps: int = SPRING_STEPS,
        sequential: bool = False,
        skip_asleep: bool = True,
        note_steps: int = NOTE_STEPS,
    ) -> None:
        graph_pass.check_counts(max_steps=(max_steps, 1), note_steps=(note_steps, 0))
        self.context: SpringContext = parse_context(context)
        super().__init__(
            graph_pass.load_checked(
                SHIPPED_SPECS.get(spec, spec) if spec is not None else SPEC_PATH,
                ACTION_NODE,
                PER_STEP_KEYS,
                who="a SPRING spec",
            ),
            max_steps=max_steps,
            sequential=sequential,
            note_steps=note_steps,
            skip_asleep=skip_asleep,
        )

    def env_defaults(self, env_name: str) -> dict[str, Any]:
        """No env options needed; refuses envs its questions were not written for."""
        if env_name not in ENVS:
            raise ValueError(
                f"SPRING's questions and contexts are written for {', '.join(ENVS)} only"
            )
        return {}

    def head(self) -> dict[str, Any]:
        return {"context": self.context.label}

    async def begin(
        self, ep: Episode, task: Task, log: dict[str, Any], budget: int
    ) -> tuple[dict[str, Any], list[str]]:
        names = await ep.env.candidate_actions()
        words = texts()
        values = {
            "background": words["background"].strip(),
            "knowledge": self.context.knowledge(names),
            "goal": task.goal,
            "actions": ", ".join(names),
            "observation": ep.observation,
            "last_action": words["no_last_action"],
            "previous_observation": words["no_previous_observation"],
        }
        return values, names

    def choose(self, run: GraphRun[list[str]], results: Mapping[str, Any]) -> str:
        """The allowed action the last node named (its hook already refused others)."""
        chosen = results.get(ACTION_NODE)
        if isinstance(chosen, NodeFailure):
            raise NoAction(f"{chosen.key}: {chosen.error}")
        if not isinstance(chosen, str) or chosen not in run.memory:
            raise NoAction(f"{ACTION_NODE}: {chosen!r} is not an allowed action")
        return chosen
