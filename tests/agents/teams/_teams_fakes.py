"""Small stand-ins for helper B's TeamWorld/clock and helper A's skills.

They follow the agreed names and shapes only as far as the hourglass agent
needs them; the real pieces replace them once merged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Msg:
    time: float
    tick: int
    sender: str
    to: str | None
    text: str


@dataclass(frozen=True)
class Result:
    success: bool
    reason: str
    ticks: int = 1


@dataclass
class FakeWorld:
    """A message pool and a clock; observations name the player and the tick."""

    t: float = 0.0
    tick: int = 0
    done: bool = False
    pool: list[Msg] = field(default_factory=list)

    def now(self) -> float:
        return self.t

    def observe(self, player: str) -> str:
        return f"player {player} at tick {self.tick}"

    def progress(self) -> str:
        return f"{self.tick}/10 wood"

    def post(self, sender: str, to: str | None, text: str) -> Msg:
        msg = Msg(self.t, self.tick, sender, to, text)
        self.pool.append(msg)
        return msg

    def messages(self, since: int = 0) -> list[Msg]:
        return self.pool[since:]

    async def sleep(self, seconds: float) -> None:
        self.t += seconds


@dataclass
class FakeSkills:
    """Skill runner: answers from ``outcomes`` (call -> Result), success otherwise."""

    world: FakeWorld
    outcomes: dict[str, Result] = field(default_factory=dict)
    ran: list[tuple[str, str]] = field(default_factory=list)
    on_run: Callable[[str, str], None] | None = None

    async def __call__(self, player: str, call: str) -> Result:
        self.ran.append((player, call))
        out = self.outcomes.get(call, Result(True, "done"))
        self.world.tick += out.ticks
        if self.on_run is not None:
            self.on_run(player, call)
        return out


def validate(call: str) -> None:
    """Accepts ``name(args)`` shapes, like the skills' parser would."""
    if "(" not in call or not call.endswith(")"):
        raise ValueError(f"{call!r} is not a skill call such as collect(wood, 5)")
