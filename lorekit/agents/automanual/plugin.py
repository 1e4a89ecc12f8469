"""AutoManual's registrations: the testing-stage agent (with the builds it tests with),
its view, its tables in the run store, its scripted test models and its commands
(``lorekit automanual``, ``lorekit manual``).

LoreKit's ``pyproject.toml`` names :func:`register` in the ``lorekit.plugins``
entry-point group, exactly as an outside package would. Everything is named by
import string, so reading these registrations imports nothing of AutoManual.
"""

from __future__ import annotations

from lorekit.registry import Registry


def register(registry: Registry) -> None:
    """Add the ``automanual`` agent, its view, tables, scripted models and commands."""
    registry.add_agent(
        "automanual",
        "lorekit.agents.automanual.agent:AutoManualAgent",
        "AutoManual's planner: Python in the sandbox, guided by a build's manual "
        "(--agent-opt manual=BUILD)",
        tests_with_build=True,
        # `lorekit reproduce` plays an experiment's builds of these variants first
        # (published: the authors' own build, imported rather than played)
        build_variants=("automanual", "planner-lib", "published"),
        build="lorekit.agents.automanual.commands.reproduce:reproduce_build",
    )
    registry.add_view("automanual", "lorekit.agents.automanual.view:VIEW", order=20)
    registry.add_tables(
        "automanual_",
        "AutoManual's rules, skill and reflection libraries and manuals, per build",
        run_column="build_id",
    )
    registry.add_scripted(
        "alfworld",
        "automanual",
        "lorekit.agents.automanual.testing.builder:stage_roles",
        "scripted AutoManual planner, builder, consolidator and formulator "
        "(lorekit.agents.automanual.testing)",
        takes_env=True,
    )
    registry.add_scripted(
        "miniwob",
        "automanual",
        "lorekit.agents.automanual.testing.miniwob:stage_roles",
        "scripted AutoManual planner (plays a shown skill or human example, adapted), "
        "builder, consolidator and formulator for MiniWoB++ "
        "(lorekit.agents.automanual.testing.miniwob)",
        takes_env=True,
    )
    registry.add_command(
        "automanual",
        "lorekit.agents.automanual.commands.automanual:automanual",
        "AutoManual: build rules by playing, formulate a manual, test with it.",
    )
    registry.add_command(
        "manual",
        "lorekit.agents.automanual.commands.automanual:manual",
        "Manuals written by AutoManual builds.",
    )
