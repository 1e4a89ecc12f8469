"""One graph agent: a :mod:`lorekit.graph` spec asked once per environment step.

SPRING and AgentKit's Crafter and WebShop agents are the same machine: fill
the step's database, evaluate the whole graph once, read the action off its
final node, play it (or a recorded fallback when the pass gave none), update
the database with what the env did. :class:`GraphAgent` is that loop, written
once; a method is a thin configuration of it, and overrides only what is its
own:

- :meth:`~GraphAgent.begin`: the database's first values, and the method's
  memory for the episode (any object; the loop only carries it);
- :meth:`~GraphAgent.before_pass`: the step's database keys;
- :meth:`~GraphAgent.choose`: the action named by the pass's results, or
  :class:`NoAction` saying why there is none;
- :meth:`~GraphAgent.fallback`: what to play then (None ends the episode,
  ``gave_up``);
- :meth:`~GraphAgent.after_pass` and :meth:`~GraphAgent.after_act`:
  bookkeeping with the action played, before and after the env's step;
- :meth:`~GraphAgent.budget` and :meth:`~GraphAgent.head`: the episode's
  number of passes and the first fields of its note.

The pieces under the loop (the spec check, a pass and its step note, the
errors, the fallback record) are :mod:`lorekit.agents.graph_pass`. Per-episode
state lives in :class:`GraphRun`, never on the agent, so one agent object
plays concurrent episodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from lorekit.agents import graph_pass
from lorekit.agents.base import Episode, Recorder, Trajectory
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.graph import Graph
from lorekit.graph.spec import GraphSpec
from lorekit.llm.roles import Roles

M = TypeVar("M")


class NoAction(Exception):
    """The pass named no usable action; the message says why (it goes in the step's note)."""


@dataclass(slots=True)
class GraphRun(Generic[M]):
    """One episode in play: the episode, its graph and note, the database the
    passes read and write, the method's own memory, and the step number."""

    ep: Episode
    graph: Graph
    log: dict[str, Any]
    db: dict[str, Any]
    memory: M
    budget: int
    number: int = 0


class GraphAgent(Generic[M]):
    """Plays an episode by evaluating ``spec`` once per step (module docstring).

    ``max_steps``: passes per episode (the default :meth:`budget`).
    ``sequential``: one model call at a time instead of concurrent branches.
    ``note_steps``: steps whose notes keep every answer. ``skip_asleep``: while
    a Crafter player sleeps, play :attr:`asleep_action` without asking.
    Class settings: :attr:`note_key` (where the notes go), :attr:`tokens`
    (whether a step's note counts its tokens), :attr:`fallback_action`.
    """

    note_key: ClassVar[str] = "graph"
    tokens: ClassVar[bool] = True
    fallback_action: ClassVar[str | None] = "noop"
    asleep_action: ClassVar[str] = "noop"

    def __init__(
        self,
        spec: GraphSpec,
        *,
        max_steps: int | None,
        sequential: bool = False,
        note_steps: int,
        skip_asleep: bool = False,
    ) -> None:
        self.spec = spec
        self.max_steps = max_steps
        self.sequential = bool(sequential)
        self.note_steps = note_steps
        self.skip_asleep = bool(skip_asleep)
        self.model_roles: tuple[str, ...] = graph_pass.model_roles(spec)

    # -- what a method configures ------------------------------------------------------
    def head(self) -> dict[str, Any]:
        """Fields that open the episode's note, before the graph's name and shape."""
        return {}

    def budget(self, env: EnvLike) -> int:
        """Passes for this episode: ``max_steps``."""
        if self.max_steps is None:
            raise ValueError(f"{type(self).__name__} needs max_steps or its own budget()")
        return self.max_steps

    async def begin(
        self, ep: Episode, task: Task, log: dict[str, Any], budget: int
    ) -> tuple[dict[str, Any], M]:
        """The database's first values (the spec's defaults fill the rest) and
        the method's memory for this episode."""
        raise NotImplementedError

    async def before_pass(self, run: GraphRun[M]) -> None:
        """Set the step's database keys before the pass (default: nothing)."""

    def choose(self, run: GraphRun[M], results: Mapping[str, Any]) -> str:
        """The action the pass named; raise :class:`NoAction` when there is none."""
        raise NotImplementedError

    def fallback(self, run: GraphRun[M]) -> str | None:
        """What to play when the pass named no action; None stops the episode."""
        return self.fallback_action

    def after_pass(self, run: GraphRun[M], results: Mapping[str, Any], action: str) -> None:
        """Bookkeeping once the step's action is known, before it is played."""

    def after_act(self, run: GraphRun[M], action: str, previous: str) -> None:
        """The database after the env's step: the action, the observation before
        it and the new one (the keys SPRING's and AgentKit's Crafter specs read)."""
        run.db.update(
            last_action=action, previous_observation=previous, observation=run.ep.observation
        )

    # -- the loop ------------------------------------------------------------------------
    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep, graph, log = await graph_pass.start(
            self.spec, env, task, roles, recorder, seed, note_key=self.note_key, head=self.head()
        )
        budget = self.budget(env)
        values, memory = await self.begin(ep, task, log, budget)
        run = GraphRun(ep, graph, log, self.spec.initial_db(values), memory, budget)
        for number in range(1, budget + 1):
            if ep.done:
                break
            run.number = number
            action = (
                graph_pass.asleep_step(ep.observation, number, log, self.asleep_action)
                if self.skip_asleep
                else None
            )
            if action is None:
                action = await self._step(run)
                if action is None:
                    ep.stop("gave_up")
                    break
            previous = ep.observation
            await ep.act(action)
            self.after_act(run, action, previous)
        if not ep.done:
            ep.stop("budget")
        return ep.trajectory

    async def _step(self, run: GraphRun[M]) -> str | None:
        """One pass: the action it names, or the recorded fallback (None: none)."""
        await self.before_pass(run)
        results, note = await graph_pass.one_pass(
            run.graph,
            run.db,
            number=run.number,
            log=run.log,
            sequential=self.sequential,
            note_steps=self.note_steps,
            tokens=self.tokens,
        )
        action: str | None
        try:
            action = graph_pass.played(note, self.choose(run, results))
        except NoAction as why:
            action = self.fallback(run)
            graph_pass.fell_back(run.log, note, action, str(why))
        if action is not None:
            self.after_pass(run, results, action)
        return action
