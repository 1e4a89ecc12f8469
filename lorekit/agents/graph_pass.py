"""The pieces under :class:`~lorekit.agents.graph_agent.GraphAgent`, the one loop
SPRING and the AgentKit agents run.

The parts that are the same whatever the spec says live here: checking a spec
the agent can drive, the run's set-up (episode, graph, the note's head), one
pass with its step note (:func:`~lorekit.agents.passlog.pass_note`), the error
for a node that re-asking cannot fix, how a step records the action it played
or the fallback it fell back to, and Crafter's asleep steps. The methods keep
their spec, their database keys and their own check of the chosen action.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lorekit.agents.base import Episode, Recorder
from lorekit.agents.passlog import graph_shape, pass_note
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.graph import Graph, NodeFailure
from lorekit.graph.spec import GraphSpec, load_spec
from lorekit.llm.roles import Roles


class PassError(RuntimeError):
    """A node failed in a way re-asking cannot fix: its model call failed for good
    (after the backend's own retries) or its Python hook raised. Playing on with a
    made-up action would hide that, so the episode ends with this error."""


def check_counts(**options: tuple[object, int]) -> None:
    """Refuse an option that is not a whole number at least its lower bound
    (``name=(value, low)``), naming it."""
    for label, (value, low) in options.items():
        if not isinstance(value, int) or value < low:
            raise ValueError(f"{label} must be a whole number >= {low}, got {value!r}")


def load_checked(
    path: str | Path, final: str, sets: tuple[str, ...], *, who: str = "this agent"
) -> GraphSpec:
    """Load a spec the agent can drive: it has node ``final`` and needs at run time
    only the database keys the agent sets (``sets``). ``who`` names the agent in
    the error."""
    spec = load_spec(path)
    if final not in {n.key for n in spec.nodes}:
        raise ValueError(f"{spec.source}: {who} needs a node {final!r}")
    unknown = [k for k in spec.required if k not in sets]
    if unknown:
        raise ValueError(
            f"{spec.source}: database keys {unknown} have no value and the agent sets only "
            f"{', '.join(sets)}; give them a value in the spec"
        )
    return spec


def model_roles(spec: GraphSpec) -> tuple[str, ...]:
    """The model roles the spec's nodes ask, each once, in order."""
    return tuple(dict.fromkeys(n.role for n in spec.nodes))


async def start(
    spec: GraphSpec,
    env: EnvLike,
    task: Task,
    roles: Roles,
    recorder: Recorder,
    seed: int | None,
    *,
    note_key: str,
    head: dict[str, Any] | None = None,
) -> tuple[Episode, Graph, dict[str, Any]]:
    """Start the episode and build the graph; the run's log, already in the
    trajectory's notes under ``note_key`` (``head`` first, then the graph's
    name and shape, the fallback count and the steps)."""
    ep = await Episode.start(env, task, recorder, seed)
    graph = spec.build(roles)
    log: dict[str, Any] = {
        **(head or {}),
        "graph": graph.name,
        "dag": graph_shape({k: graph.deps(k) for k in graph.nodes}),
        "fallbacks": 0,
        "steps": [],
    }
    ep.trajectory.notes[note_key] = log
    return ep, graph, log


async def one_pass(
    graph: Graph,
    db: dict[str, Any],
    *,
    number: int,
    log: dict[str, Any],
    sequential: bool,
    note_steps: int,
    tokens: bool = True,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Evaluate one pass and append its note to ``log``; (results, the note).

    The note keeps every node (answers only up to step ``note_steps``) and, with
    ``tokens``, the pass's prompt and completion tokens. Raises
    :class:`PassError` when a model call or a hook failed; unusable answers are
    the caller's to judge (:func:`played` or :func:`fell_back`)."""
    results = await graph.evaluate(db, sequential=sequential, raise_on_failure=False)
    report = graph.last_report
    note: dict[str, Any] = {
        "step": number,
        "nodes": pass_note(report, answers=number <= note_steps) if report else [],
    }
    if tokens:
        note["prompt_tokens"] = sum(t.prompt_tokens for t in report.traces) if report else 0
        note["completion_tokens"] = sum(t.completion_tokens for t in report.traces) if report else 0
    log["steps"].append(note)
    broken = [
        r for r in results.values() if isinstance(r, NodeFailure) and r.kind in ("model", "hook")
    ]
    if broken:
        first = broken[0]
        note.update(action=None, fallback=False, reason=f"{first.key}: {first.error}")
        raise PassError(f"step {number}: node {first.key!r} failed ({first.kind}): {first.error}")
    return results, note


def played(note: dict[str, Any], action: str) -> str:
    """Record that the step plays the model's own choice ``action``; returns it."""
    note.update(action=action, fallback=False)
    return action


def fell_back(
    log: dict[str, Any], note: dict[str, Any], action: str | None, reason: str | None
) -> None:
    """Record that the pass gave no usable action and the step plays ``action``
    (``None``: none at all) instead, counted in the log's ``fallbacks``."""
    log["fallbacks"] += 1
    note.update(action=action, fallback=True, reason=reason)


#: Crafter's text observation while the player sleeps below full energy
#: (``status_sleeping`` in its data; a rested sleeper is ``status_rested``).
ASLEEP = re.compile(r"^Status: asleep \(", re.MULTILINE)


def asleep_step(observation: str, number: int, log: dict[str, Any], fallback: str) -> str | None:
    """``fallback``, noted as an asleep step, when a Crafter player sleeps; else None.

    Crafter ignores every action while a sleeping player is below full energy,
    so asking the model would only spend a pass; the step is played with
    ``fallback``. A rested sleeper is asked: crafter wakes it at the next step
    and carries the chosen action out.
    """
    if not ASLEEP.search(observation):
        return None
    log["steps"].append({"step": number, "action": fallback, "asleep": True})
    return fallback
