"""Building a node's messages from its prompt, the database and its dependencies.

The default layout, in order: the system text (the node's, else the graph's),
then one user message holding the database values the node lists as
``context``, its dependencies (question and answer, or the result only when the
node uses the "shorthand" option), and finally the node's own prompt with its
``{placeholders}`` filled from the database. Wording lives in ``compose.yaml``.

A placeholder names a database path (``{goal}``, ``{state.inventory}``) or,
with ``@``, a dependency's result (``{@plan}``, ``{@plan.steps}``). A missing
or ``None`` value raises :class:`MissingValueError` naming the node and the
key: a prompt is never sent with a hole in it.

The compose function's input (:class:`ComposeInput`, :class:`DepView`) lives
with the node (:mod:`lorekit.graph.node`), whose ``compose`` field takes it;
value rendering lives in :mod:`lorekit.graph.values`. Both are re-exported here.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from lorekit import yamlio
from lorekit.graph.errors import GraphError, MissingValueError
from lorekit.graph.node import ComposeInput as ComposeInput
from lorekit.graph.node import DepView as DepView
from lorekit.graph.values import lookup as lookup
from lorekit.graph.values import render_value as render_value
from lorekit.llm.base import Message


@cache
def layout() -> dict[str, str]:
    """The wording of composed prompts (``compose.yaml``)."""
    text = resources.files("lorekit.graph").joinpath("compose.yaml").read_text(encoding="utf-8")
    data = yamlio.safe_load(text, source="lorekit/graph/compose.yaml")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise GraphError("lorekit/graph/compose.yaml must map names to strings")
    return data


def default_compose(inp: ComposeInput) -> list[Message]:
    """The standard layout; see the module docstring."""
    words = layout()
    node = inp.node
    messages: list[Message] = []
    system = node.system if node.system is not None else inp.system
    if system:
        messages.append(Message("system", inp.fill(system)))
    parts: list[str] = []
    if node.context:
        items = []
        for key in node.context:
            found, value = lookup(inp.db, (key,))
            if not found or value is None:
                raise MissingValueError(node.key, key, "is not in the database (listed in context)")
            items.append(words["context_item"].format(key=key, value=render_value(value)))
        parts.append("\n".join([words["context_heading"], *items]))
    shown = [d for d in inp.deps if d.mode != "hidden"]
    if shown:
        rendered = [
            words["dep_qa" if d.mode == "qa" else "dep_short"].format(
                key=d.key, question=d.question, answer=d.answer
            )
            for d in shown
        ]
        parts.append("\n\n".join([words["deps_heading"], *rendered]))
    parts.append(inp.fill(node.prompt))
    messages.append(Message("user", "\n\n".join(parts)))
    return messages


def feedback_message(error: str) -> Message:
    """The user turn that asks the model to try again after a rejected answer."""
    return Message("user", layout()["feedback"].format(error=error))
