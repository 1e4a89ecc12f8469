"""Identifiers every layer may mint: run ids.

At the bottom of the package (it imports nothing of LoreKit), so the run store
(:mod:`lorekit.eval.store`) and trainers below the harness (:mod:`lorekit.laws.rl`)
name runs the same way without one importing the other.
"""

from __future__ import annotations

import secrets
import time

__all__ = ["new_run_id"]


def new_run_id() -> str:
    """A sortable id a person can read and type: local time plus a random suffix."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
