"""The core's agents and views, registered like any plugin's.

The oracle and random agents need no model and play any env (the floor and the
ceiling of a comparison); the graph-pass view draws the notes of every agent
built on :mod:`lorekit.graph` (SPRING's and AgentKit's). LoreKit's
``pyproject.toml`` names :func:`register` in the ``lorekit.plugins`` group.
"""

from __future__ import annotations

from lorekit.registry import Registry


def register(registry: Registry) -> None:
    """Add the oracle and random agents and the graph-pass view."""
    registry.add_agent(
        "oracle",
        "lorekit.agents.simple:OracleAgent",
        "follows the environment's built-in expert (no model)",
        needs_model=False,
    )
    registry.add_agent(
        "random",
        "lorekit.agents.simple:RandomAgent",
        "uniform over the environment's candidate actions (no model)",
        needs_model=False,
    )
    registry.add_view("graph-pass", "lorekit.agents.graph_pass_view:VIEW", order=30)
