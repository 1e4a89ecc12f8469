"""The SPRING graph's action check: the answer of node ``action`` must name one allowed action.

Named in ``spring.yaml`` as ``lorekit.agents.spring.hooks.choose_action``. A
rejected answer raises :class:`AfterQueryError`, whose text the model reads
when it is asked again (up to the node's ``max_retries``); after that the pass
fails for that node and the agent falls back to ``noop`` and records it.
"""

from __future__ import annotations

import re

from lorekit.graph import AfterQueryError, NodeContext

_ACTION_LINE = re.compile(r"^[\s>*_`#-]*action[\s*_`]*[:=]\s*(.*)$", re.IGNORECASE)
_TRIM = " \t`'\"*_.,;:!()[]<>"


def allowed_actions(listed: str) -> list[str]:
    """The action names of the database's comma-separated ``actions``."""
    return [name.strip() for name in listed.split(",") if name.strip()]


def parse_action(answer: str, allowed: list[str]) -> str:
    """The allowed action ``answer`` names, or :class:`AfterQueryError` saying what to fix.

    The last ``Action: name`` line counts (models often think first); an answer
    that is nothing but an action name is taken as it is. Case, surrounding
    quotes or markdown, and spaces or hyphens for underscores are forgiven;
    anything else (a count, a second word, an unknown name) is refused rather
    than guessed at, so what the agent does is always what the model said.
    """
    names = ", ".join(allowed)
    lines = [m.group(1) for m in map(_ACTION_LINE.match, answer.splitlines()) if m]
    if lines:
        raw = lines[-1]
    elif len(answer.strip().splitlines()) == 1:
        raw = answer
    else:
        raise AfterQueryError(
            f"No line 'Action: <name>' was found. End with one such line; <name> is one of: {names}"
        )
    name = re.sub(r"[\s\-]+", "_", raw.strip(_TRIM).lower())
    if name in allowed:
        return name
    for candidate in allowed:
        if name.startswith(candidate + "_") and name[len(candidate) + 1 :].isdigit():
            raise AfterQueryError(
                f"Give the action name alone, without a count: 'Action: {candidate}'."
            )
    shown = raw.strip()[:60] or "(nothing)"
    raise AfterQueryError(f"{shown!r} is not an allowed action. Choose exactly one of: {names}")


def choose_action(ctx: NodeContext, answer: str) -> str:
    """After-query hook of node ``action``: the validated action name."""
    return parse_action(str(answer), allowed_actions(str(ctx.db["actions"])))
