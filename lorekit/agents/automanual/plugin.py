"""AutoManual's registrations: the testing-stage agent, its view, its scripted test
models and its commands (``lorekit automanual``, ``lorekit manual``).

LoreKit's ``pyproject.toml`` names :func:`register` in the ``lorekit.plugins``
entry-point group, exactly as an outside package would.
"""

from __future__ import annotations

from lorekit.registry import Registry


def register(registry: Registry) -> None:
    """Add the ``automanual`` agent, its view, scripted models and commands."""
    registry.add_agent(
        "automanual",
        "lorekit.agents.automanual.agent:AutoManualAgent",
        "AutoManual's planner: Python in the sandbox, guided by a build's manual "
        "(--agent-opt manual=BUILD)",
        tests_with_build=True,
    )
    registry.add_view("automanual", "lorekit.agents.automanual.view:VIEW", order=20)
    registry.add_scripted(
        "alfworld",
        "automanual",
        "lorekit.agents.automanual.simulation_builder:stage_roles",
        "scripted AutoManual planner, builder, consolidator and formulator "
        "(lorekit.agents.automanual.simulation, simulation_builder)",
        takes_env=True,
    )
    registry.add_command(
        "automanual",
        "lorekit.cli.automanual:automanual",
        "AutoManual: build rules by playing, formulate a manual, test with it.",
    )
    registry.add_command(
        "manual", "lorekit.cli.automanual:manual", "Manuals written by AutoManual builds."
    )
