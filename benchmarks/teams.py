"""S-Agents' team study on crafter-party, with scripted models on a virtual clock.

Claims checked (S-Agents, section 4): a tree of agents (ToA) is the fastest of
the three organizations; ToA(1) (one leader, one worker) is no better than a
single agent; ToA(3) beats a single agent on large collections; agents that
work asynchronously finish sooner than agents that work in rounds when model
latencies vary.

Every run uses the same simulated models (lorekit.agents.teams.simulation):
answers computed from the prompt (tool chains, shares of the goal for the free
subordinates, reassignment after a failure report), latencies drawn from a
seeded log-normal distribution (leader median ``--leader-s``, worker median
``--worker-s``) and slept on a virtual clock, so a run is deterministic and
takes no real waiting. Skills, the world, the clock and the modes are the real
ones. TC is virtual seconds to success (NaN when not completed); mPT is
planning iterations per agent. Means of TC are over successful runs only, so
read them with the success rate beside them.

Table 1: organizations in async mode (solo; CoA and GoA with 3 agents; ToA with
1..3 workers), per task, ratios of TC to solo. Table 2: relay vs round vs async
for ToA(``--mode-leaves``). The findings are printed with a verdict each; the
script does not fail when a finding does not hold (it reports it).

The study runs in two worlds (``--world``, default both): crafter's hostile
world, where zombies kill players that stand still while their agents think,
and the peaceful party world (``CrafterParty(peaceful=True)``: no zombies or
skeletons, everything else the same), which comes closer to the paper's
Minecraft setting and isolates organization and scheduling. How the runs
ended (success, world ended: the party was wiped out or the world's length
ran out, no progress for ``--cutoff-s``, time limit) is tallied per world.
Each finding is also given as a paired ratio: the mean over (task, seed) of
TC team / TC solo where both succeeded on that seed.

Usage: python benchmarks/teams.py [--world hostile|peaceful|both] [--peaceful]
       [--seeds 0,1,2,3,4] [--tasks collect-20-wood,...]
       [--leader-s 8] [--worker-s 4] [--sigma 0.5] [--mode-leaves 2]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import math
import time
from typing import Any

from lorekit.agents.teams.metrics import TeamMetrics, ratio, summarize
from lorekit.agents.teams.modes import Mode
from lorekit.agents.teams.org import Organization, build_org
from lorekit.agents.teams.simulation import simulated_roles
from lorekit.agents.teams.team import run_team
from lorekit.envs.clock import VirtualClock
from lorekit.envs.crafter.party import CrafterParty
from lorekit.envs.crafter.teamworld import TeamWorld

TASKS = [
    "collect-20-wood",
    "collect-50-wood",
    "collect-20-stone",
    "collect-50-stone",
    "collect-2-iron",
    "collect-5-iron",
    "shelter-0_-3",
]
LARGE = ("collect-50-wood", "collect-50-stone", "collect-5-iron")
ORGS: list[tuple[str, Organization]] = [
    ("solo", build_org("solo")),
    ("CoA(3)", build_org("chain", size=3)),
    ("GoA(3)", build_org("graph", size=3)),
    ("ToA(1)", build_org("tree", leaves=1)),
    ("ToA(2)", build_org("tree", leaves=2)),
    ("ToA(3)", build_org("tree", leaves=3)),
]


async def one(org: Organization, mode: Mode, task: str, seed: int, args: Any) -> TeamMetrics:
    clock = VirtualClock()
    party = CrafterParty(players=max(2, len(org.agents)), peaceful=args.peaceful)
    world = TeamWorld(party, clock)
    world.reset(f"{task}/seed-0", seed=seed)  # the task's goal, on world seed ``seed``
    roles = simulated_roles(
        clock.sleep,
        seed=seed,
        leader_median_s=args.leader_s,
        worker_median_s=args.worker_s,
        sigma=args.sigma,
    )
    result = await run_team(
        world, org, roles, mode=mode, clock=clock, cutoff_s=args.cutoff_s, max_time_s=1800
    )
    return result.metrics


def study(
    orgs: list[tuple[str, Organization]], mode: Mode, args: Any
) -> dict[tuple[str, str], Any]:
    """Per (task, label): the summary, with the seeds' own metrics under ``"seeds"``."""
    out = {}
    for task in args.tasks:
        for label, org in orgs:
            print(f"  ... {mode}, {label}, {task}: {len(args.seeds)} seed(s)", flush=True)
            how: Mode = "relay" if org.kind == "chain" else mode  # CoA: the paper's relay
            runs = [asyncio.run(one(org, how, task, s, args)) for s in args.seeds]
            out[(task, label)] = {**summarize(runs), "seeds": runs}
    return out


def fmt(x: float, digits: int = 1) -> str:
    return "  nan" if math.isnan(x) else f"{x:.{digits}f}"


def table(rows: dict[tuple[str, str], Any], labels: list[str], base: str, tasks: list[str]) -> None:
    print(f"{'task':18} {'team':8} {'succ':>5} {'TC(s)':>7} {'xbase':>6} {'mPT':>5} {'ticks':>6}")
    for task in tasks:
        for label in labels:
            s = rows[(task, label)]
            r = ratio(s["tc"], rows[(task, base)]["tc"])
            print(
                f"{task:18} {label:8} {s['success_rate']:5.2f} {fmt(s['tc']):>7} "
                f"{fmt(r, 2):>6} {fmt(s['mpt']):>5} {s['ticks']:6.0f}"
            )


def mean_ratio(rows: dict[tuple[str, str], Any], a: str, b: str, tasks: list[str]) -> float:
    rs = [ratio(rows[(t, a)]["tc"], rows[(t, b)]["tc"]) for t in tasks]
    rs = [r for r in rs if not math.isnan(r)]
    return sum(rs) / len(rs) if rs else math.nan


def paired_ratio(rows: dict[tuple[str, str], Any], a: str, b: str, tasks: list[str]) -> str:
    """Mean of TC a / TC b over (task, seed) pairs where both succeeded, and how many."""
    rs = [
        x.tc / y.tc
        for t in tasks
        for x, y in zip(rows[(t, a)]["seeds"], rows[(t, b)]["seeds"], strict=True)
        if x.success and y.success and y.tc > 0
    ]
    return f"paired {fmt(sum(rs) / len(rs), 2) if rs else '  nan'} over {len(rs)} seeds"


def verdict(name: str, holds: bool, detail: str) -> None:
    print(f"  [{'holds' if holds else 'does not hold'}] {name}: {detail}")


def endings(*tables: dict[tuple[str, str], Any]) -> str:
    """How the runs ended, counted over the tables (success, ended, no_progress ...)."""
    counts: collections.Counter[str] = collections.Counter(
        m.reason for rows in tables for row in rows.values() for m in row["seeds"]
    )
    return ", ".join(f"{reason} {n}" for reason, n in counts.most_common())


def run_world(args: Any) -> None:
    """The whole study in one world (``args.peaceful``), printed."""
    world = "peaceful" if args.peaceful else "hostile"
    print(f"\n===== {world} world =====")
    started = time.perf_counter()
    labels = [label for label, _ in ORGS]
    orgs = study(ORGS, "async", args)
    print(f"Organizations, async mode, seeds {args.seeds} (TC: virtual seconds, successes only)")
    table(orgs, labels, "solo", args.tasks)
    tree = build_org("tree", leaves=args.mode_leaves)
    modes: dict[tuple[str, str], Any] = {}
    mode: Mode
    for mode in ("relay", "round", "async"):
        for key, value in study([(mode, tree)], mode, args).items():
            modes[key] = value
    print(f"\nModes, ToA({args.mode_leaves}), ratios to round")
    table(modes, ["relay", "round", "async"], "round", args.tasks)

    print("\nFindings (mean TC ratio over tasks where both succeeded at least once):")
    toa = mean_ratio(orgs, "ToA(2)", "solo", args.tasks)
    coa = mean_ratio(orgs, "CoA(3)", "solo", args.tasks)
    goa = mean_ratio(orgs, "GoA(3)", "solo", args.tasks)
    verdict(
        "ToA fastest of the organizations",
        toa < min(coa, goa),
        f"TC/solo ToA(2) {fmt(toa, 2)}, CoA(3) {fmt(coa, 2)}, GoA(3) {fmt(goa, 2)}; "
        + ", ".join(
            f"{label} {paired_ratio(orgs, label, 'solo', args.tasks)}"
            for label in ("ToA(2)", "CoA(3)", "GoA(3)")
        ),
    )
    one_r = mean_ratio(orgs, "ToA(1)", "solo", args.tasks)
    verdict(
        "ToA(1) no better than solo",
        one_r >= 0.95,
        f"TC/solo {fmt(one_r, 2)}; {paired_ratio(orgs, 'ToA(1)', 'solo', args.tasks)}",
    )
    large = [t for t in args.tasks if t in LARGE]
    three = mean_ratio(orgs, "ToA(3)", "solo", large)
    verdict(
        "ToA(3) faster than solo on large collections",
        three < 1,
        f"TC/solo {fmt(three, 2)}; {paired_ratio(orgs, 'ToA(3)', 'solo', large)}",
    )
    asy = mean_ratio(modes, "async", "round", args.tasks)
    verdict(
        "async faster than rounds",
        asy < 1,
        f"TC async/round {fmt(asy, 2)}; {paired_ratio(modes, 'async', 'round', args.tasks)}",
    )
    print(f"\nHow runs ended ({world}): {endings(orgs, modes)}")
    print(f"{len(args.seeds) * len(args.tasks) * (len(ORGS) + 3)} runs in "
          f"{time.perf_counter() - started:.1f} s of real time")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--world", choices=("hostile", "peaceful", "both"), default="both")
    ap.add_argument("--peaceful", action="store_true", help="short for --world peaceful")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--leader-s", type=float, default=8.0)
    ap.add_argument("--worker-s", type=float, default=4.0)
    ap.add_argument("--sigma", type=float, default=0.5)
    ap.add_argument("--cutoff-s", type=float, default=300.0)
    ap.add_argument("--mode-leaves", type=int, default=2)
    args = ap.parse_args()
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.tasks = args.tasks.split(",")
    worlds = {"hostile": [False], "peaceful": [True], "both": [False, True]}[
        "peaceful" if args.peaceful else args.world
    ]
    for peaceful in worlds:
        args.peaceful = peaceful
        run_world(args)


if __name__ == "__main__":
    main()
