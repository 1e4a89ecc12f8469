"""Check a game on the real engine: its walkthrough must win, and only at its end."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorekit.envs.alfworld.engine import AlfredEngine


def play_walkthrough(game: Mapping[str, Any], engine: AlfredEngine | None = None) -> str | None:
    """None when ``game``'s walkthrough is admissible step by step and wins at
    its last command; otherwise what went wrong, in one line."""
    walkthrough = list(game.get("walkthrough") or [])
    if not walkthrough:
        return "the game has no walkthrough"
    engine = engine or AlfredEngine()
    engine.load(game)
    state = engine.reset()
    if state["won"]:
        return "the goal holds before the first command"
    for number, command in enumerate(walkthrough, 1):
        if command not in state["admissible_commands"]:
            return f"command {number} {command!r} is not admissible"
        state, _, _ = engine.step(command)
        if state["won"] and number < len(walkthrough):
            return f"won early, at command {number} of {len(walkthrough)}"
    return None if state["won"] else "the walkthrough ends without winning"
