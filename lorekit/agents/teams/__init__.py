"""Teams of agents in one shared world (S-Agents).

The organization, the hourglass agent and the runner (``run_team``,
``TeamResult``) load on first use, so importing the package (as reading its
plugin registration does) costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorekit.lazyexports import lazy_attributes

if TYPE_CHECKING:
    from lorekit.agents.teams.answers import AnswerError
    from lorekit.agents.teams.hourglass import HourglassAgent
    from lorekit.agents.teams.org import (
        KINDS,
        AgentSpec,
        Organization,
        OrgError,
        build_org,
        load_org,
        org_from_spec,
    )
    from lorekit.agents.teams.team import TeamResult, run_team
    from lorekit.agents.teams.testing import simulated_roles

__all__ = [
    "KINDS",
    "AgentSpec",
    "AnswerError",
    "HourglassAgent",
    "OrgError",
    "Organization",
    "TeamResult",
    "build_org",
    "load_org",
    "org_from_spec",
    "run_team",
    "simulated_roles",
]

if not TYPE_CHECKING:  # mypy checks the names above; at run time they load on use
    __getattr__ = lazy_attributes(
        __name__,
        {
            "lorekit.agents.teams.answers": ("AnswerError",),
            "lorekit.agents.teams.hourglass": ("HourglassAgent",),
            "lorekit.agents.teams.org": (
                "KINDS", "AgentSpec", "Organization", "OrgError", "build_org", "load_org",
                "org_from_spec",
            ),
            "lorekit.agents.teams.testing": ("simulated_roles",),
            "lorekit.agents.teams.team": ("TeamResult", "run_team"),
        },
    )  # fmt: skip
