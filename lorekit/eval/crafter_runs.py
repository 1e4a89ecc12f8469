"""Deprecated: Crafter's run scores moved to :mod:`lorekit.envs.crafter.runs`.

Kept for one release so ``from lorekit.eval.crafter_runs import
crafter_run_score`` (as older docs show) still works; it warns on import.
"""

from __future__ import annotations

import warnings

from lorekit.envs.crafter.runs import CrafterRunScore, crafter_run_score

warnings.warn(
    "lorekit.eval.crafter_runs moved to lorekit.envs.crafter.runs; "
    "the old path goes away in the next release",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["CrafterRunScore", "crafter_run_score"]
