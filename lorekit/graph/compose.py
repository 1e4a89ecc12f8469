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
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from lorekit import yamlio
from lorekit.graph.errors import GraphError, MissingValueError
from lorekit.graph.node import DepMode, Node, Ref, substitute
from lorekit.llm.base import Message


@cache
def layout() -> dict[str, str]:
    """The wording of composed prompts (``compose.yaml``)."""
    text = resources.files("lorekit.graph").joinpath("compose.yaml").read_text(encoding="utf-8")
    data = yamlio.safe_load(text, source="lorekit/graph/compose.yaml")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise GraphError("lorekit/graph/compose.yaml must map names to strings")
    return data


def render_value(value: Any) -> str:
    """How a value appears in a prompt: text as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def lookup(root: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    """Follow a dotted path through mappings and lists; (found, value)."""
    value = root
    for part in path:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list | tuple) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


@dataclass(frozen=True, slots=True)
class DepView:
    """A dependency as the composing node sees it."""

    key: str
    question: str
    result: Any
    mode: DepMode
    shown: str | None = None
    """The answer as shortened for this node (``max_dep_chars``), if it was too long."""

    @property
    def answer(self) -> str:
        return self.shown if self.shown is not None else render_value(self.result)


@dataclass(frozen=True, slots=True)
class ComposeInput:
    """Everything a compose function may use. ``db`` is a read-only view of the
    database holding exactly the keys the node declares (its placeholders,
    ``context`` and ``hook_reads``); reading another key raises ``AccessError``,
    and nested values are read-only copies. Writes belong in after-query hooks,
    which run in order."""

    node: Node
    db: Mapping[str, Any]
    deps: tuple[DepView, ...]
    system: str | None = None

    def fill(self, template: str) -> str:
        """``template`` with its placeholders filled (same rules as the node prompt)."""
        results = {d.key: d.result for d in self.deps}
        key = self.node.key

        def value_of(ref: Ref) -> str:
            if ref.node:
                if ref.name not in results:
                    raise MissingValueError(key, ref.text, "is not a dependency with a result")
                found, value = lookup(results[ref.name], ref.path)
            else:
                found, value = lookup(self.db, (ref.name, *ref.path))
            if not found:
                why = "is not in the database" if not ref.node else "is not in that result"
                raise MissingValueError(key, ref.text, why)
            if value is None:
                raise MissingValueError(key, ref.text, "is None in the database")
            return render_value(value)

        return substitute(template, value_of)


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
