"""S-Agents' registrations: the party world, the team view and ``lorekit team``.

LoreKit's ``pyproject.toml`` names :func:`register` in the ``lorekit.plugins``
entry-point group, exactly as an outside package would.
"""

from __future__ import annotations

from lorekit.registry import Registry


def register(registry: Registry) -> None:
    """Add the ``crafter-party`` world, the ``team`` agent (a whole team, for
    ``lorekit reproduce``), the team timeline view and ``lorekit team``."""
    registry.add_env(
        "crafter-party",
        "lorekit.agents.teams.world:make_crafter_party",
        "Several players in one Crafter world, collective tasks (S-Agents' world)",
        extra="crafter",
        expert=False,
    )
    registry.add_agent(
        "team",
        "lorekit.agents.teams.commands.options:team_agent",
        "a whole S-Agents team on crafter-party (options as `lorekit team run`'s: org, "
        "leaves, size, mode, clock); played by `team run` and `reproduce`",
        extra="crafter",
        # `lorekit reproduce` hands this function an experiment's team rows to play
        play="lorekit.agents.teams.commands.reproduce:play_row",
    )
    registry.add_scripted(
        "crafter-party",
        "team",
        "lorekit.agents.teams.commands.reproduce:scripted_team",
        "the team study's scripted leader and workers on the virtual clock "
        "(lorekit.agents.teams.testing)",
        takes_env=True,
    )
    registry.add_view("teams", "lorekit.agents.teams.view:VIEW", order=40)
    registry.add_command(
        "team",
        "lorekit.agents.teams.commands.team:team",
        "Teams of agents (S-Agents) in the multi-player Crafter world.",
    )
