"""Prompt templates kept as YAML next to the agents that use them.

Templates use ``{name}`` fields. Rendering fails loudly on a missing field
(naming the template and the field) instead of sending a prompt with a hole.
"""

from __future__ import annotations

import string
from functools import cache
from importlib import resources
from typing import Any

from lorekit import yamlio


class PromptError(KeyError):
    """A template asked for a value that was not given, or does not exist."""


@cache
def load_prompts(name: str) -> dict[str, str]:
    """The templates in ``lorekit/agents/prompts/<name>.yaml``."""
    text = resources.files("lorekit.agents").joinpath("prompts", f"{name}.yaml").read_text()
    data = yamlio.safe_load(text, source=f"prompts/{name}.yaml")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise PromptError(f"prompts/{name}.yaml must map template names to strings")
    return data


def render(template: str, where: str = "template", **values: Any) -> str:
    """Fill ``{field}`` placeholders; a missing field raises :class:`PromptError`."""
    fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    missing = sorted(fields - values.keys())
    if missing:
        raise PromptError(f"{where} needs {', '.join(missing)}")
    return template.format(**values).strip()
