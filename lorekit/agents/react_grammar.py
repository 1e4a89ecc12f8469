"""The answer grammar of ReAct turns: ``Thought: ...`` then ``Action: ...``.

Kept apart from the agents so that the one ReAct loop (ADaPT's executor,
which the ``react`` agent also runs) and anything else reading such answers
share a single parser.
"""

from __future__ import annotations

import re

# Matched against stripped lines, with possessive quantifiers: linear in the
# answer's length whatever it holds (a run of spaces made the multi-line
# versions cubic). A label with nothing after it takes the next non-blank line.
_ACTION = re.compile(r"(?:\*++\s*+)?+action(?:\s*+\*++)?+\s*+[:：](.*)", re.IGNORECASE)
_THOUGHT = re.compile(r"thought\s*+:(.*)", re.IGNORECASE)
_PROMPT_LIKE = re.compile(r">(.*)")


def _labelled(lines: list[str], label: re.Pattern[str]) -> list[str]:
    """The text after ``label`` on each (stripped) line it starts, in order; one pass."""
    found: list[str] = []
    waiting = 0  # labels with nothing after them, waiting for the next non-blank line
    for line in lines:
        if waiting and line:
            found += [line] * waiting
            waiting = 0
        match = label.match(line)
        if match:
            value = match.group(1).strip()
            if value:
                found.append(value)
            else:
                waiting += 1
    return found + [""] * waiting


def parse_react(answer: str) -> tuple[str | None, str | None, str | None]:
    """Split an answer into (thought, action, problem).

    The last ``Action:`` line wins (models sometimes restate). A bare
    one-line answer, or a ``> action`` line, is taken as the action, because
    small models often drop the labels. ``problem`` explains a failure.
    """
    text = answer.strip()
    if not text:
        return None, None, "the answer was empty"
    stripped = [line.strip() for line in text.splitlines()]
    thoughts = _labelled(stripped, _THOUGHT)
    thought = thoughts[0] if thoughts else None
    labelled = _labelled(stripped, _ACTION)
    actions = [a.lstrip("*").strip().strip("`*").strip() for a in labelled]
    actions = [a for a in actions if a]
    if actions:
        return thought, actions[-1], None
    if labelled:
        return thought, None, "the 'Action:' line was empty"
    prompt_like = [p for p in _labelled(stripped, _PROMPT_LIKE) if p]
    if prompt_like:
        return thought, prompt_like[-1], None
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) == 1 and thought is None:
        return None, lines[0].strip(), None
    return thought, None, "no line starting with 'Action:' was found"
