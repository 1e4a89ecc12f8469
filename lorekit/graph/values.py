"""How values appear in prompts and how placeholders find them.

At the bottom of the graph engine (it imports no other graph module), so the
node's compose input, the composer and the traces share one rendering.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["lookup", "present", "render_value"]


def render_value(value: Any) -> str:
    """How a value appears in a prompt: text as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def lookup(root: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    """Follow a dotted path through mappings and lists; (found, value)."""
    value = root
    for part in path:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list | tuple) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def present(value: Any) -> bool:
    """Whether a database value counts as set for a node's ``when``: not null, not an
    empty text or collection (whitespace counts as empty)."""
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (Mapping, list, tuple, set, frozenset)):
        return len(value) > 0
    return True
