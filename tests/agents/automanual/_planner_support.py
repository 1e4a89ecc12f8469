"""Pieces the planner tests share (a plain module: a conftest.py is not importable by name)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from lorekit.sandbox import Limits

#: As in tests/sandbox: every OS layer the machine allows; CI insists on all.
ISOLATION = "required" if os.environ.get("CI") else "auto"
#: Generous enough for a room search on a loaded 2-core machine.
LIMITS = Limits(wall_s=30.0, cpu_s=20.0, max_api_calls=200, grace_s=1.0)


class ListRecorder:
    """A recorder that keeps (action, observation, done, info) of every step."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, str, bool, Mapping[str, Any]]] = []

    def add_step(
        self, observation: str, action: str, reward: float, done: bool, info: Mapping[str, Any]
    ) -> None:
        self.steps.append((action, observation, done, info))


def answer(code: str, *, analysis: str = "Looking at the room.", rules: str = "none") -> str:
    """A planner answer in the four-part format around ``code``."""
    return (
        f"### Analysis\n{analysis}\n### Related rules\n{rules}\n### Plan\nDo it.\n"
        f"### Code\n```python\n{code.strip()}\n```"
    )


def skill(code: str, mistakes: str = "") -> str:
    """A success conclusion."""
    head = f"### Mistakes\n{mistakes}\n" if mistakes else ""
    return f"{head}### Code\n```python\n{code.strip()}\n```"
