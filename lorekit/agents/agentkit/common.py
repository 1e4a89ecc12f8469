"""What both AgentKit agents share: their texts, spec loading and one pass with its note.

A pass's note keeps each node's answer, status, refusals and tokens
(:func:`lorekit.agents.spring.passlog.pass_note`, the same shape SPRING's
notes have), so ``lorekit show`` and the tests read every node's answer.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.agents.spring.passlog import graph_shape, pass_note
from lorekit.graph import Graph, NodeFailure
from lorekit.graph.spec import GraphSpec, load_spec

HERE = Path(__file__).parent
NOTE_STEPS = 300
"""Steps whose notes keep every answer; later ones keep statuses and costs only."""


class AgentKitPassError(RuntimeError):
    """A node failed in a way re-asking cannot fix (its model call failed for good, or
    a Python hook raised): playing on with a made-up action would hide it."""


@functools.cache
def texts() -> dict[str, str]:
    """``texts.yaml``: manuals and fixed wording."""
    data = yamlio.safe_load((HERE / "texts.yaml").read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items()}


def load_checked(path: str | Path, final: str, sets: tuple[str, ...]) -> GraphSpec:
    """Load a spec the agent can drive: it has node ``final`` and needs at run time
    only the database keys the agent sets (``sets``)."""
    spec = load_spec(path)
    if final not in {n.key for n in spec.nodes}:
        raise ValueError(f"{spec.source}: this agent needs a node {final!r}")
    unknown = [k for k in spec.required if k not in sets]
    if unknown:
        raise ValueError(
            f"{spec.source}: database keys {unknown} have no value and the agent sets only "
            f"{', '.join(sets)}; give them a value in the spec"
        )
    return spec


def new_log(graph: Graph) -> dict[str, Any]:
    return {
        "graph": graph.name,
        "dag": graph_shape({k: graph.deps(k) for k in graph.nodes}),
        "fallbacks": 0,
        "steps": [],
    }


async def one_pass(
    graph: Graph,
    db: dict[str, Any],
    *,
    number: int,
    final: str,
    log: dict[str, Any],
    sequential: bool,
    note_steps: int,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Evaluate one pass; (results, its note). Raises :class:`AgentKitPassError` when a
    node failed for a reason other than unusable answers. The note says whether
    ``final`` gave a result (``fallback`` is set by the caller)."""
    results = await graph.evaluate(db, sequential=sequential, raise_on_failure=False)
    report = graph.last_report
    note: dict[str, Any] = {
        "step": number,
        "nodes": pass_note(report, answers=number <= note_steps) if report else [],
        "prompt_tokens": sum(t.prompt_tokens for t in report.traces) if report else 0,
        "completion_tokens": sum(t.completion_tokens for t in report.traces) if report else 0,
    }
    log["steps"].append(note)
    failures = [r for r in results.values() if isinstance(r, NodeFailure)]
    broken = [f for f in failures if f.kind in ("model", "hook")]
    if broken:
        first = broken[0]
        note.update(action=None, fallback=False, reason=f"{first.key}: {first.error}")
        raise AgentKitPassError(
            f"step {number}: node {first.key!r} failed ({first.kind}): {first.error}"
        )
    return results, note


def text_of(value: Any) -> str:
    """A node result as one line of history (failures and skips say so)."""
    if value is None:
        return "(not asked)"
    if isinstance(value, NodeFailure):
        return f"(no answer: {value.error})"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return " ".join(str(value).split())
