"""The virtual clock against the wall clock, on the same team run.

Claims: a team run on ``VirtualClock`` takes the same schedule as on
``WallClock`` (planning iterations and engine ticks agree up to the wall
clock's jitter) while costing only the computation, so virtual time runs
many times faster than real time; and a virtual run repeats exactly.

Three members in one crafter-party world, each iteration one scripted model
call with seeded lognormal latency (the first member slower) and three
actions, in ``async`` mode. The walkers neither drink nor fight, so crafter's
thirst and night-time zombies end an episode after a minute or so (200-300
ticks): a run is a series of episodes (seeds 0, 1, ...) until its time is
up. The wall run is scaled down (short latencies and ticks) so that it
finishes in a few seconds; the virtual run is then timed at the realistic
scale (seconds of latency, 0.2 s ticks).

Usage: python benchmarks/team_clock.py [--wall-s 3] [--virtual-s 1800]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from lorekit.agents.teams.clock import Clock, VirtualClock, WallClock
from lorekit.agents.teams.modes import ModeOutcome, run_members
from lorekit.agents.teams.world.party import CrafterParty
from lorekit.agents.teams.world.teamworld import TeamWorld
from lorekit.envs.base import Task
from lorekit.envs.crafter.worldgen import warm_up
from lorekit.llm import Latency, ScriptedLLM

TASK = Task("walk", "walk about", "collect",
            {"kind": "collect", "item": "diamond", "amount": 99, "seed": 0})  # fmt: skip
MOVES = ["move_east", "move_north", "move_west", "move_south", "do"]


class Walker:
    def __init__(self, name: str, player: str, world: TeamWorld, median_s: float, seed: int):
        self.name, self.player, self.world = name, player, world
        latency = Latency.lognormal(median_s, 0.6)
        self.model = ScriptedLLM(default="go", latency=latency, seed=seed, sleep=world.clock.sleep)
        self.k = 0

    async def iterate(self) -> bool:
        await self.model.complete(self.world.observe(self.player))
        for _ in range(3):
            self.k += 1
            await self.world.act(self.player, MOVES[self.k % len(MOVES)])
        return False


async def episode(clock: Clock, scale: float, seed: int, left_s: float) -> ModeOutcome:
    world = TeamWorld(CrafterParty(players=3), clock, seconds_per_tick=0.2 * scale)
    world.reset(TASK, seed=seed)
    members = [
        Walker(f"m{i}", f"p{i + 1}", world, (6.0 if i == 0 else 2.0) * scale, seed=100 * seed + i)
        for i in range(3)
    ]
    return await run_members(members, "async", world, cutoff_s=left_s * 2, max_time_s=left_s)


async def team_run(clock: Clock, scale: float, limit_s: float) -> tuple[list[ModeOutcome], float]:
    """Episodes until ``limit_s`` clock seconds are spent; also the real seconds taken."""
    outcomes: list[ModeOutcome] = []
    spent = 0.0
    start = time.perf_counter()
    while spent < limit_s - 1e-9:
        outcomes.append(await episode(clock, scale, len(outcomes), limit_s - spent))
        spent += outcomes[-1].elapsed_s
    return outcomes, time.perf_counter() - start


def totals(outcomes: list[ModeOutcome]) -> tuple[int, int]:
    """(model calls, engine ticks) over a run's episodes."""
    return sum(sum(o.iterations.values()) for o in outcomes), sum(o.ticks for o in outcomes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wall-s", type=float, default=3.0, help="length of the wall run")
    parser.add_argument("--virtual-s", type=float, default=1800.0, help="virtual run length")
    args = parser.parse_args()
    warm_up()
    scale = 0.01  # wall run: 60 ms / 20 ms median latencies, 2 ms ticks
    wall, wall_real = asyncio.run(team_run(WallClock(), scale, args.wall_s))
    virt, virt_real = asyncio.run(team_run(VirtualClock(), scale, args.wall_s))
    (wall_calls, wall_ticks), (virt_calls, virt_ticks) = totals(wall), totals(virt)
    print(f"same run, {args.wall_s:g} s at 1/100 scale   wall clock   virtual clock")
    print(f"  episodes               {len(wall):>12}   {len(virt):>13}")
    print(f"  model calls            {wall_calls:>12,}   {virt_calls:>13,}")
    print(f"  engine ticks           {wall_ticks:>12,}   {virt_ticks:>13,}")
    print(f"  real seconds           {wall_real:>12.2f}   {virt_real:>13.3f}")
    print(f"  speed-up               {wall_real / virt_real:>28.0f}x")
    big, big_real = asyncio.run(team_run(VirtualClock(), 1.0, args.virtual_s))
    again, _ = asyncio.run(team_run(VirtualClock(), 1.0, args.virtual_s))
    calls, ticks = totals(big)
    speed = args.virtual_s / big_real
    print(f"realistic scale: {args.virtual_s:g} virtual s ({len(big)} episodes, "
          f"{ticks:,} ticks, {calls:,} model calls) in {big_real:.2f} real s: "
          f"{speed:,.0f}x real time; repeats exactly: {big == again}")  # fmt: skip


if __name__ == "__main__":
    main()
