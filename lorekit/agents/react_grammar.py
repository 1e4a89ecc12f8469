"""The answer grammar of ReAct turns: ``Thought: ...`` then ``Action: ...``.

Kept apart from the agents so that the one ReAct loop (ADaPT's executor,
which the ``react`` agent also runs) and anything else reading such answers
share a single parser.
"""

from __future__ import annotations

import re

_ACTION = re.compile(r"^\s*\**\s*action\s*\**\s*[:：]\s*\**\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"^\s*thought\s*:\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_PROMPT_LIKE = re.compile(r"^\s*>\s*(.+)$", re.MULTILINE)


def parse_react(answer: str) -> tuple[str | None, str | None, str | None]:
    """Split an answer into (thought, action, problem).

    The last ``Action:`` line wins (models sometimes restate). A bare
    one-line answer, or a ``> action`` line, is taken as the action, because
    small models often drop the labels. ``problem`` explains a failure.
    """
    text = answer.strip()
    if not text:
        return None, None, "the answer was empty"
    thought_m = _THOUGHT.search(text)
    thought = thought_m.group(1).strip() if thought_m else None
    actions = [a.strip().strip("`*").strip() for a in _ACTION.findall(text)]
    actions = [a for a in actions if a]
    if actions:
        return thought, actions[-1], None
    if _ACTION.search(text):
        return thought, None, "the 'Action:' line was empty"
    prompt_like = _PROMPT_LIKE.findall(text)
    if prompt_like:
        return thought, prompt_like[-1].strip(), None
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) == 1 and thought is None:
        return None, lines[0].strip(), None
    return thought, None, "no line starting with 'Action:' was found"
