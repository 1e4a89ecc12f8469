"""Shortening long dependency answers before they enter a prompt.

AgentKit keeps prompts inside the model's context window by cutting the
oldest tokens of the longest message. Here a node bounds each dependency's
answer with ``max_dep_chars`` and picks how to shorten one that is longer
(``dep_overflow``): keep its end (AgentKit's choice: the latest part of a long
history), its start, both ends with the middle elided, or ask a model to
summarise it (``summary_role``, default the node's role). A summary that is
still too long, or a summary call that fails, falls back to keeping the end.

Only the answer shown in the prompt changes; the dependency's result, which
``{@dep}`` placeholders, hooks and the database see, stays whole.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lorekit.graph.compose import layout, render_value
from lorekit.graph.node import DepOverflow, Node
from lorekit.graph.trace import node_model
from lorekit.llm.base import Message, RequestParams
from lorekit.llm.errors import LLMError
from lorekit.llm.roles import Roles

Summaries = dict[tuple[str, int, str], "asyncio.Future[str]"]
"""One pass's summary calls by (dependency, limit, role), shared by its dependents."""


def cut(text: str, limit: int, how: DepOverflow) -> str:
    """``text`` in about ``limit`` characters, with a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    marker = layout()["elided"]
    keep = limit
    for _ in range(3):  # the marker's length depends on the count it shows
        keep = max(limit - len(marker.format(count=len(text) - keep)), 0)
    mark = marker.format(count=len(text) - keep)
    if how == "keep_start":
        return text[:keep] + mark.rstrip()
    if how == "keep_both":
        head = keep // 2
        return text[:head] + mark + text[len(text) - (keep - head) :]
    return mark.lstrip() + text[len(text) - keep :]


async def shrink_answer(
    node: Node, dep: str, result: Any, *, roles: Roles, graph: str, summaries: Summaries
) -> str | None:
    """The shortened answer of ``dep`` for ``node``, or None when it already fits.

    ``roles`` give the summarising model, ``graph`` names the graph in its call
    records, and ``summaries`` is the pass's cache of summary calls.
    """
    limit = node.max_dep_chars
    text = render_value(result)
    if limit is None or len(text) <= limit:
        return None
    if node.dep_overflow != "summarize":
        return cut(text, limit, node.dep_overflow)
    role = node.summary_role or node.role
    key = (dep, limit, role)
    task = summaries.get(key)
    if task is None:  # dependents of one answer share one summary call
        task = asyncio.ensure_future(_summarize(roles, graph, node, dep, text, limit, role))
        summaries[key] = task
    summary = await asyncio.shield(task)
    return cut(summary, limit, "keep_end")


async def _summarize(
    roles: Roles, graph: str, node: Node, dep: str, text: str, limit: int, role: str
) -> str:
    prompt = layout()["summarize"].format(key=dep, limit=limit, answer=text)
    meta = {"graph": graph, "node": node.key, "attempt": f"summary:{dep}"}
    llm = node_model(roles[role], meta)
    try:
        out = await llm.complete([Message("user", prompt)], RequestParams(temperature=0.0))
    except LLMError:
        return text  # the caller cuts it
    summary = out.text.strip()
    return summary or text
