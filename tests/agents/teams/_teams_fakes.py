"""Small stand-ins for helper B's TeamWorld/clock and helper A's skills.

They follow the agreed names and shapes only as far as the hourglass agent
needs them; the real pieces replace them once merged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


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
        return f"player {player} at tick {self.tick}\nInventory: sapling 1."

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


class TwoStage:
    """Lets a test script one answer per planning pass, as before the planners were
    split: the scripted task-planner answer also lists ``actions``, and the action
    planner's call that follows gets those actions back (it is not passed to the
    scripted model, so its ``calls`` count task plans and monitor verdicts only)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.actions: list[Any] = []
        self.action_prompts: list[str] = []

    @property
    def model(self) -> str:
        return str(self.inner.model)

    @property
    def calls(self) -> Any:
        return self.inner.calls

    async def complete(self, messages: Any, params: Any = None) -> Any:
        from lorekit.llm.base import Completion

        user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        if '{"actions"' in user:
            self.action_prompts.append(user)
            return Completion(json.dumps({"actions": self.actions}), model=self.model)
        out = await self.inner.complete(messages, params=params)
        try:
            data = json.loads(out.text)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and "task" in data:
            self.actions = data.get("actions", [])
        return out
