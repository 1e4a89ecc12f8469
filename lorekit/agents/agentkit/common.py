"""What both AgentKit agents share beyond :class:`lorekit.agents.graph_agent.GraphAgent`:
their texts and how a node's result reads as a line of history.

The loop and the pass (spec check, set-up, the step note, errors, fallbacks)
are :mod:`lorekit.agents.graph_agent` and :mod:`lorekit.agents.graph_pass`, the
same code SPRING runs, so a step's note has SPRING's shape plus the pass's tokens.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.agents.graph_pass import PassError
from lorekit.graph import NodeFailure

HERE = Path(__file__).parent
NOTE_STEPS = 300
"""Steps whose notes keep every answer; later ones keep statuses and costs only."""


AgentKitPassError = PassError
"""AgentKit's name for :class:`lorekit.agents.graph_pass.PassError`."""


@functools.cache
def texts() -> dict[str, str]:
    """``texts.yaml``: manuals and fixed wording."""
    data = yamlio.safe_load((HERE / "texts.yaml").read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items()}


def text_of(value: Any) -> str:
    """A node result as one line of history (failures and skips say so)."""
    if value is None:
        return "(not asked)"
    if isinstance(value, NodeFailure):
        return f"(no answer: {value.error})"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return " ".join(str(value).split())
