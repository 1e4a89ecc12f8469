"""The world a team plays in: ``crafter-party`` and the team world on a clock.

- :class:`~.party.CrafterParty`: several players in one crafter world with
  collective tasks (collections, the stone shelter, the paper's staged
  shelter of :mod:`.shelter`); the env ``make("crafter-party")`` builds.
- :class:`~.teamworld.TeamWorld`: that party on a clock, acted on per player
  by agents that each think at their own pace, with a shared message pool.
- :mod:`.skills`: the scripted controllers (``collect(wood, 5)``) the agents
  call by name.

They run on crafter's engine (:mod:`lorekit.envs.crafter`), which needs the
``crafter`` extra; this module itself imports none of it until a world is
built, so the env registry can check a factory's arguments cheaply.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lorekit.agents.teams.world.party import CrafterParty
    from lorekit.agents.teams.world.teamworld import Message, TeamWorld

_LAZY = {
    "CrafterParty": "lorekit.agents.teams.world.party",
    "TeamWorld": "lorekit.agents.teams.world.teamworld",
    "Message": "lorekit.agents.teams.world.teamworld",
}

__all__ = ["CrafterParty", "Message", "TeamWorld", "make_crafter_party"]


def make_crafter_party(
    players: int = 2, *, length: int = 2_000, peaceful: bool = False
) -> CrafterParty:
    """The ``crafter-party`` env: ``players`` (2-9) in one world, ``length`` ticks
    at most, ``peaceful`` for a world without zombies or skeletons."""
    from lorekit.agents.teams.world.party import CrafterParty

    return CrafterParty(players, length=length, peaceful=peaceful)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lorekit.agents.teams.world' has no attribute {name!r}")
