"""The clocks a team plays on: wall time for real models, virtual time for studies.

The interface and its errors are in :mod:`.base`, :class:`WallClock` in
:mod:`.wall`, :class:`VirtualClock` (deterministic discrete-event time) in
:mod:`.virtual`; this package exports them all, so
``from lorekit.agents.teams.clock import VirtualClock`` is the one import to know.
"""

from lorekit.agents.teams.clock.base import (
    Clock,
    ClockDeadlock,
    ClockError,
    ClockEvent,
    ClockKind,
    ClockSpinning,
    ClockStalled,
    join,
)
from lorekit.agents.teams.clock.virtual import VirtualClock
from lorekit.agents.teams.clock.wall import WallClock

__all__ = [
    "Clock",
    "ClockDeadlock",
    "ClockError",
    "ClockEvent",
    "ClockKind",
    "ClockSpinning",
    "ClockStalled",
    "VirtualClock",
    "WallClock",
    "join",
]
