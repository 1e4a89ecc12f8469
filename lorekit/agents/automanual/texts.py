"""Prompt templates of the AutoManual package, kept as YAML in ``prompts/``.

One loader for every module here (planner, builder, consolidator,
formulator): a template is ``(file, name)``, and a missing field fails loudly
with both names instead of sending a prompt with a hole in it.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from lorekit import yamlio
from lorekit.agents.prompts import PromptError, render


@functools.cache
def templates(file: str) -> dict[str, str]:
    """The templates in ``lorekit/agents/automanual/prompts/<file>.yaml``."""
    where = f"automanual/prompts/{file}.yaml"
    text = resources.files("lorekit.agents.automanual").joinpath("prompts", f"{file}.yaml")
    data = yamlio.safe_load(text.read_text(encoding="utf-8"), source=where)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise PromptError(f"{where} must map template names to strings")
    return data


def fill(file: str, name: str, **values: Any) -> str:
    """Template ``name`` of ``file`` with ``values`` filled in."""
    table = templates(file)
    if name not in table:
        raise PromptError(f"automanual/prompts/{file}.yaml has no template {name!r}")
    return render(table[name], f"automanual.{file}.{name}", **values)
