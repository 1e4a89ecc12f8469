"""Python hooks for examples/planner_gate.yaml, referenced there as ``hooks.py:<name>``.

The spec loads this file by path, relative to the spec, so the examples
directory needs no package. A hook gets the node's context and its parsed
output; what it returns becomes the node's result (and what the node's
declared ``writes`` store; ``None`` stores nothing).
"""

from __future__ import annotations

from lorekit.graph import AfterQueryError, NodeContext

_NOTHING = {"none", "nothing", "n/a", "no new fact"}


def new_fact(ctx: NodeContext, fact: str) -> str | None:
    """Keep a fact only if it is new; ask again if the model answered with a question."""
    text = fact.strip().rstrip(".").strip()
    if text.lower() in _NOTHING or not text:
        return None
    if text.endswith("?"):
        raise AfterQueryError(
            "A fact is a statement, not a question. State it, or say 'Fact: none'."
        )
    known = {str(k).lower() for k in ctx.db.get("knowledge", [])}
    return None if text.lower() in known else text
