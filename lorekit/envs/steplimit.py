"""An episode's step cap, shared by the text envs: checked once, stated in the manual."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

UNCAPPED = 10**9
"""What an env's ``max_steps`` reports when it has no step cap (``max_steps=None``)."""


def check_max_steps(value: object) -> int | None:
    """``value`` if it is a usable step cap (a whole number >= 1) or None for no cap."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(
            f"max_steps must be a whole number of at least 1, or None for no cap; got {value!r}"
        )
    return value


def manual_with_limit(text: Mapping[str, Any], limit: int | None) -> str:
    """``text["manual"]`` with ``{limit}`` filled from ``limit_capped`` or ``limit_uncapped``."""
    phrase = (
        str(text["limit_uncapped"])
        if limit is None
        else str(text["limit_capped"]).format(steps=limit)
    )
    return str(text["manual"]).format(limit=phrase)


def follow_env_cap(own: int | None, env_cap: int, fallback: int) -> int:
    """An agent's step cap: its own when set, else the env's, so an agent never
    stops before the env would; ``fallback`` when the env has no cap."""
    if own is not None:
        return own
    return env_cap if env_cap < UNCAPPED else fallback
