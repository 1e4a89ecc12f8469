"""Dummy team members for the mode and metric tests: think on the clock, then act."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lorekit.agents.teams.clock import Clock
from lorekit.agents.teams.world.party import CrafterParty
from lorekit.agents.teams.world.teamworld import TeamWorld
from lorekit.envs.base import Task
from lorekit.llm import ScriptedLLM

ONE_WOOD = Task("collect-1-wood", "get wood", "collect",
                {"kind": "collect", "item": "wood", "amount": 1, "seed": 0})  # fmt: skip
# On seed 0, p1 starts at (32, 32) with a tree at (28, 29).
TO_TREE = ["move_north"] * 3 + ["move_west"] * 4 + ["do"]


def make_world(clock: Clock, players: int = 2, seconds_per_tick: float = 0.2) -> TeamWorld:
    world = TeamWorld(CrafterParty(players=players), clock, seconds_per_tick=seconds_per_tick)
    world.reset(ONE_WOOD)
    return world


class Dummy:
    """Each iteration: one model call (its latencies in order), then its actions.

    Records (start, thought, end) clock times per iteration; says it is done
    after ``rounds`` iterations (None: never). ``tell`` posts a message to
    that player on the given iteration (0-based).
    """

    def __init__(
        self,
        name: str,
        player: str,
        world: TeamWorld,
        latencies: Sequence[float],
        *,
        actions: Sequence[Sequence[str]] = (),
        rounds: int | None = None,
        tell: tuple[int, str] | None = None,
        role: str = "worker",
    ) -> None:
        self.name, self.player, self.world, self.role = name, player, world, role
        pending = list(latencies)
        self.model = ScriptedLLM(
            default="ok",
            latency=lambda _rng: pending.pop(0) if pending else latencies[-1],
            sleep=world.clock.sleep,
            model=f"scripted-{role}",
        )
        self.actions = [list(a) for a in actions]
        self.rounds = rounds
        self.tell = tell
        self.log: list[tuple[float, float, float]] = []

    async def iterate(self) -> bool:
        clock = self.world.clock
        start = clock.now()
        await self.model.complete(f"{self.name}: {self.world.observe(self.player)[:40]}")
        thought = clock.now()
        k = len(self.log)
        for action in self.actions[k] if k < len(self.actions) else ["noop"]:
            await self.world.act(self.player, action)
        if self.tell is not None and self.tell[0] == k:
            self.world.post(self.player, self.tell[1], "please go on")
        self.log.append((start, thought, clock.now()))
        return self.rounds is not None and len(self.log) >= self.rounds


def times(members: Sequence[Any]) -> list[list[tuple[float, float, float]]]:
    return [[tuple(round(t, 6) for t in row) for row in m.log] for m in members]  # type: ignore[misc]
