"""Helpers for graph tests: a scripted model that answers per node."""

from __future__ import annotations

import re
from collections.abc import Callable

from lorekit.llm import Message, ScriptedLLM

_NODE = re.compile(r"\[node (\S+?)\]")


def node_of(msgs: tuple[Message, ...]) -> str:
    """Test prompts end with '[node <key>]'; the last such tag is the asking node."""
    found = _NODE.findall(msgs[-1].content) or _NODE.findall("\n".join(m.content for m in msgs))
    return found[-1] if found else "?"


def per_node(answers: dict[str, str | list[str]], latency: float | None = None) -> ScriptedLLM:
    """Answer by node key; a list is consumed per node (last answer repeats)."""
    seen: dict[str, int] = {}

    def fn(msgs: tuple[Message, ...]) -> str:
        # The asking node's tag is in the first user message (feedback turns come after).
        first_user = next(m for m in msgs if m.role == "user")
        key = _NODE.findall(first_user.content)[-1]
        script = answers[key]
        if isinstance(script, str):
            return script
        i = seen.get(key, 0)
        seen[key] = i + 1
        return script[min(i, len(script) - 1)]

    return ScriptedLLM(fn=fn, latency=latency)


def tagged(key: str, text: str = "") -> str:
    return f"{text} [node {key}]".strip()


AnswerFn = Callable[[tuple[Message, ...]], str]
