"""S-Agents' registrations: the team view and the ``lorekit team`` commands.

LoreKit's ``pyproject.toml`` names :func:`register` in the ``lorekit.plugins``
entry-point group, exactly as an outside package would.
"""

from __future__ import annotations

from lorekit.registry import Registry


def register(registry: Registry) -> None:
    """Add the team timeline view and ``lorekit team``."""
    registry.add_view("teams", "lorekit.agents.teams.view:VIEW", order=40)
    registry.add_command(
        "team",
        "lorekit.cli.team:team",
        "Teams of agents (S-Agents) in the multi-player Crafter world.",
    )
