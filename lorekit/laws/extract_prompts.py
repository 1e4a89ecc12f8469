"""The extractor's prompts: templates from ``prompts/extract.yaml`` and the pieces
of state and experience they show.

Kept apart from the extraction loop so that the words a model reads (and
their layout) can be read and changed in one place; the loop only decides
which template to fill with which record.
"""

from __future__ import annotations

import functools
import json
import string
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from lorekit import yamlio

ASPECTS = ("attributes", "tools", "materials")
"""The parts of the player's inventory and vitals that costs and gains are about."""
FACE = "face"
"""The world's side of a success (what the faced cell becomes), learned like an aspect."""


class PromptError(ValueError):
    """A template file or a template's fields are wrong (a bug in LoreKit's data)."""


@functools.cache
def templates() -> dict[str, str]:
    """The prompt templates in ``lorekit/laws/prompts/extract.yaml``."""
    where = "laws/prompts/extract.yaml"
    text = resources.files("lorekit.laws").joinpath("prompts", "extract.yaml")
    data = yamlio.safe_load(text.read_text(encoding="utf-8"), source=where)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise PromptError(f"{where} must map template names to strings")
    return data


def fill(name: str, **values: Any) -> str:
    """Template ``name`` with ``values``; a missing field is an error naming both."""
    template = templates()[name]
    fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    missing = sorted(fields - values.keys())
    if missing:
        raise PromptError(f"extract.yaml template {name!r} needs {', '.join(missing)}")
    return template.format(**values).strip()


def compact(value: Any) -> str:
    """JSON on one line with sorted keys: the same value always reads the same."""
    return json.dumps(value, sort_keys=True, separators=(", ", ": "))


def situation(state: Mapping[str, Any]) -> str:
    """The part of a state that preconditions are about, one aspect a line."""
    lines = [f"{k}: {compact(state.get(k, {}))}" for k in ASPECTS]
    lines.append(f"face: {state.get('face', '?')}")
    nearby = state.get("nearby") or []
    lines.append("nearby:")
    lines += [f"  {' | '.join(str(c) for c in row)}" for row in nearby]
    return "\n".join(lines)


def effects_text(state: Mapping[str, Any]) -> str:
    """What the costs-and-gains steps concluded, per aspect, in words and form."""
    lines = []
    for aspect in ASPECTS:
        slot = state["effects"].get(aspect)
        if slot:
            words = slot["text"] or "(no description)"
            lines.append(f"- {aspect}: {words} {compact(slot['form'])}")
    face = state["effects"].get(FACE)
    if face:
        words = face["text"] or "(no description)"
        lines.append(f"- the faced cell: {words} {compact(face['form'])}")
    return "Costs and gains:\n" + "\n".join(lines)


def costs_text(state: Mapping[str, Any]) -> str:
    """The costs the effect steps concluded, and nothing else (Algorithm 3 starts from them)."""
    costs: dict[str, int] = {}
    for aspect in ASPECTS:
        slot = state["effects"].get(aspect)
        if slot:
            costs.update(slot["form"].get("costs", {}))
    return compact(costs) if costs else "nothing"


def answer_format(schema: Mapping[str, Any]) -> dict[str, str]:
    """The ``answer_format`` field of a step's prompt, showing its schema."""
    return {"answer_format": fill("answer_format", schema=compact(schema))}


def bullets(problems: Sequence[str]) -> str:
    return "\n".join(f"- {p}" for p in problems)
