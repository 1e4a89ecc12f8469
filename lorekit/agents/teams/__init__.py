"""Teams of agents in one shared world (S-Agents).

The organization and the hourglass agent import nothing of the world; the
runner (``run_team``, ``TeamResult``) and the scripted study models load on
first use, so reading an organization spec stays light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from lorekit.agents.teams.team import TeamResult, run_team
    from lorekit.agents.teams.testing import simulated_roles

_LAZY = {
    "run_team": "lorekit.agents.teams.team",
    "TeamResult": "lorekit.agents.teams.team",
    "simulated_roles": "lorekit.agents.teams.testing",
}

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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lorekit.agents.teams' has no attribute {name!r}")
