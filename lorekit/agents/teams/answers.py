"""The hourglass agent's prompts and the checks of its answers.

Kept apart from :mod:`lorekit.agents.teams.hourglass` so the agent module holds
the iteration only: the prompt texts live in ``prompts.yaml`` next to this
file, and every model answer passes one of these strict checks (a failed
check goes back to the model with the error).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from lorekit import yamlio
from lorekit.llm.ask import ParseError

STATUSES = ("success", "fail", "ongoing")


class AnswerError(ParseError):
    """A model answer that does not follow the asked JSON form (fed back to the model)."""


@cache
def prompts() -> dict[str, str]:
    text = resources.files("lorekit.agents.teams").joinpath("prompts.yaml").read_text()
    data = yamlio.safe_load(text, source="teams/prompts.yaml")
    assert isinstance(data, dict)
    return {str(k): str(v) for k, v in data.items()}


def parse_json(text: str, required: Mapping[str, type | tuple[type, ...]]) -> dict[str, Any]:
    """One JSON object with the ``required`` keys of the given types; else AnswerError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AnswerError(f"not valid JSON ({exc.msg} at character {exc.pos})") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # a huge number, deep nesting
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:120]
        raise AnswerError(f"not valid JSON ({why or type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise AnswerError(f"expected a JSON object, got {type(data).__name__}")
    for key, kind in required.items():
        if key not in data:
            raise AnswerError(f"missing key {key!r}")
        if not isinstance(data[key], kind):
            raise AnswerError(f"{key!r} has the wrong type ({type(data[key]).__name__})")
    return data


def check_task_plan(text: str) -> dict[str, Any]:
    return parse_json(text, {"objective": str, "plan": list, "task": str})


def inventory_line(observation: str) -> str:
    """The inventory line of an observation, for failure reports."""
    match = re.search(r"^Inventory: .*$", observation, re.MULTILINE)
    return match.group(0).rstrip(".") if match else "Inventory: unknown"


def check_monitor(text: str) -> dict[str, Any]:
    data = parse_json(text, {"status": str, "rationale": str})
    if data["status"] not in STATUSES:
        raise AnswerError(f"status must be one of {', '.join(STATUSES)}, got {data['status']!r}")
    return data
