"""S-Agents' team study on crafter-party, with scripted models on a virtual clock.

The paper's experiment first (Fig. 7a): ToA(3) against a 3-agent chain (CoA,
played as the paper's relay: one agent after another) and a 3-agent graph
(GoA), and a solo agent, on the 50-item collections (wood: "mine 50 logs";
stone: the figure's "50 stones"), with TC and mPT. Then, unless
``--paper-only``: every organization (solo; CoA and GoA with 3 agents; ToA with
1..3 workers, the root planning and delegating only) on collection (wood,
stone, iron, small and large) and shelter tasks -- the eight stone walls and
the paper's staged shelter (``house-0_-3``: stone foundation, then walls of
wood, then stone roof, each stage only on the finished one below; the paper
gives no figures for it, Fig. 5 only shows a run, so its table reports how far
each team got and how many pieces fell); and relay vs round vs async
for ToA(``--mode-leaves``) -- "async beats rounds" is only an illustration in
the paper (its Fig. 4), not one of its findings.

Every run uses the same simulated models (lorekit.agents.teams.testing),
fresh per run, latencies seeded log-normal draws slept on a virtual clock, so
a run is deterministic and takes no real waiting. Skills, the world, the clock
and the modes are the real ones. TC is virtual seconds to success; mPT is
planning passes per agent.

Teams are compared fairly: on the same (task, seed) pairs (every team plays
every pair), failures counted (a run that did not finish scores the time
limit, a lower bound for the paper's NaN), as geometric means of paired TC
ratios with 95% bootstrap intervals; a finding holds when its interval lies
on one side of 1, and is unclear when it spans 1. Default 10 seeds.

The study runs in two worlds (``--world``, default both): crafter's hostile
world (zombies at night, skeletons in tunnels) and the peaceful party world
(no zombies or skeletons, everything else the same). How the runs ended is
tallied per world.

Usage: python benchmarks/teams.py [--world hostile|peaceful|both] [--peaceful]
       [--paper-only] [--seeds 0,...,9] [--tasks collect-50-wood,...]
       [--leader-s 8] [--worker-s 4] [--sigma 0.5] [--mode-leaves 2]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import math
import random
import re
import statistics
import time
from typing import Any

from lorekit.agents.teams.clock import VirtualClock
from lorekit.agents.teams.metrics import TeamMetrics, summarize
from lorekit.agents.teams.modes import Mode
from lorekit.agents.teams.org import Organization, build_org
from lorekit.agents.teams.team import run_team
from lorekit.agents.teams.testing import simulated_roles
from lorekit.agents.teams.world.party import CrafterParty
from lorekit.agents.teams.world.teamworld import TeamWorld

TASKS = [
    "collect-20-wood",
    "collect-50-wood",
    "collect-20-stone",
    "collect-50-stone",
    "collect-2-iron",
    "collect-5-iron",
    "shelter-0_-3",
    "house-0_-3",
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


async def one(
    org: Organization, mode: Mode, task: str, seed: int, args: Any
) -> tuple[TeamMetrics, str, int]:
    """One run: its metrics, the world's progress at the end, and the shelter pieces
    that fell (built before the stage under them was finished)."""
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
    fell = len(party.shelter.fell) if party.shelter is not None else 0
    return result.metrics, world.progress(), fell


def study(
    orgs: list[tuple[str, Organization]], mode: Mode, args: Any, tasks: list[str]
) -> dict[tuple[str, str], Any]:
    """Per (task, label): the summary, with the seeds' own metrics under ``"seeds"``."""
    out = {}
    for task in tasks:
        for label, org in orgs:
            how: Mode = "relay" if org.kind == "chain" else mode  # CoA: the paper's relay
            print(f"  ... {how}, {label}, {task}: {len(args.seeds)} seed(s)", flush=True)
            played = [asyncio.run(one(org, how, task, s, args)) for s in args.seeds]
            runs = [m for m, _, _ in played]
            out[(task, label)] = {
                **summarize(runs),
                "seeds": runs,
                "progress": [p for _, p, _ in played],
                "fell": sum(f for _, _, f in played),
            }
    return out


CAP_S = 1800.0  # every run's time limit: a failed run counts as taking at least this long
FIG7A = ("collect-50-wood", "collect-50-stone")  # the paper's "mine 50 logs" / "50 stones"
PAPER_7A = "paper Fig. 7a (Minecraft, GPT): ToA(3) 7.5 min, 3.8 mPT; CoA 29.0 min"


def fmt(x: float, digits: int = 1) -> str:
    return "  nan" if math.isnan(x) else f"{x:.{digits}f}"


def scored(m: TeamMetrics) -> float:
    """TC with failures counted: a run that did not finish scores the time limit
    (the paper's NaN, "no progress" after the attempts ran out, as a lower bound)."""
    return m.tc if m.success else CAP_S


def pairs(rows: dict[tuple[str, str], Any], a: str, b: str, tasks: list[str]) -> list[float]:
    """log(TC a / TC b) over every common (task, seed) pair, failures counted."""
    return [
        math.log(scored(x) / scored(y))
        for t in tasks
        for x, y in zip(rows[(t, a)]["seeds"], rows[(t, b)]["seeds"], strict=True)
    ]


def paired(rows: dict[tuple[str, str], Any], a: str, b: str, tasks: list[str]) -> tuple[float, ...]:
    """(geometric mean of TC a / TC b, 95% bootstrap interval low, high, pairs)."""
    logs = pairs(rows, a, b, tasks)
    if not logs:
        return (math.nan, math.nan, math.nan, 0)
    rng = random.Random(0)
    boots = sorted(statistics.fmean(rng.choices(logs, k=len(logs))) for _ in range(2000))
    lo, hi = boots[int(0.025 * len(boots))], boots[int(0.975 * len(boots)) - 1]
    return (math.exp(statistics.fmean(logs)), math.exp(lo), math.exp(hi), len(logs))


def ci(r: tuple[float, ...]) -> str:
    return f"{fmt(r[0], 2)} [{fmt(r[1], 2)}, {fmt(r[2], 2)}] n={r[3]}"


def table(rows: dict[tuple[str, str], Any], labels: list[str], base: str, tasks: list[str]) -> None:
    """Per task and team: successes, median TC with failures at the limit, mean TC
    of the successes, mPT, and the paired TC ratio to ``base`` with its interval."""
    print(
        f"{'task':18} {'team':8} {'succ':>6} {'medTC':>7} {'TC ok':>7} {'mPT':>5}  ratio to {base}"
    )
    for task in tasks:
        for label in labels:
            s = rows[(task, label)]
            runs = s["seeds"]
            ok = sum(m.success for m in runs)
            med = statistics.median(scored(m) for m in runs)
            r = ci(paired(rows, label, base, [task])) if label != base else "-"
            print(
                f"{task:18} {label:8} {ok:>3}/{len(runs):<2} {fmt(med):>7} {fmt(s['tc']):>7} "
                f"{fmt(s['mpt']):>5}  {r}"
            )


def stages(rows: dict[tuple[str, str], Any], labels: list[str], tasks: list[str]) -> None:
    """The staged shelter per team: runs that finished each stage, pieces that fell."""
    for task in (t for t in tasks if t.startswith("house")):
        print(f"\nThe paper's staged shelter, {task}: runs that finished each stage")
        print(f"{'team':8} {'foundation':>10} {'walls':>6} {'roof':>5} {'fell':>5}")
        for label in labels:
            row = rows[(task, label)]
            done: collections.Counter[str] = collections.Counter()
            for text in row["progress"]:
                for name, built, total in re.findall(r"(\w+) (\d+)/(\d+)", text):
                    done[name] += built == total
            n = len(row["progress"])
            print(
                f"{label:8} {done['foundation']:>7}/{n:<2} {done['walls']:>3}/{n:<2} "
                f"{done['roof']:>2}/{n:<2} {row['fell']:>5}"
            )


def verdict(name: str, holds: bool | None, detail: str) -> None:
    word = "unclear" if holds is None else "holds" if holds else "does not hold"
    print(f"  [{word}] {name}: {detail}")


def below(r: tuple[float, ...]) -> bool | None:
    """True when the interval is below 1, False when above, None when it spans 1."""
    return True if r[2] < 1 else False if r[1] > 1 else None


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
    runs = 0
    print("TC: virtual seconds; failures count as the limit "
          f"({CAP_S:.0f} s) in medians and ratios; ratios are geometric means over common "
          "(task, seed) pairs with 95% bootstrap intervals")  # fmt: skip
    paper = [t for t in args.tasks if t in FIG7A]
    fig: dict[tuple[str, str], Any] = {}
    if paper:
        three = [o for o in ORGS if o[0] in ("solo", "CoA(3)", "GoA(3)", "ToA(3)")]
        fig = study(three, "async", args, paper)
        runs += len(args.seeds) * len(paper) * len(three)
        print(f"\nThe paper's experiment (Fig. 7a) on {', '.join(paper)}; {PAPER_7A}")
        table(fig, [o[0] for o in three], "ToA(3)", paper)
    labels = [label for label, _ in ORGS]
    orgs = study(ORGS, "async", args, args.tasks) if args.full else {}
    if orgs:
        runs += len(args.seeds) * len(args.tasks) * len(ORGS)
        print(f"\nOrganizations (CoA in relay, the others async), seeds {args.seeds}")
        table(orgs, labels, "solo", args.tasks)
        stages(orgs, labels, args.tasks)
    modes: dict[tuple[str, str], Any] = {}
    if args.full:
        tree = build_org("tree", leaves=args.mode_leaves)
        mode: Mode
        for mode in ("relay", "round", "async"):
            modes.update(study([(mode, tree)], mode, args, args.tasks))
        runs += len(args.seeds) * len(args.tasks) * 3
        print(f"\nModes, ToA({args.mode_leaves}) (an illustration of the paper's Fig. 4, "
              "not one of its findings)")  # fmt: skip
        table(modes, ["relay", "round", "async"], "round", args.tasks)

    print("\nFindings (paired TC ratios, failures counted, 95% intervals):")
    if fig:
        for other in ("CoA(3)", "GoA(3)", "solo"):
            r = paired(fig, "ToA(3)", other, paper)
            verdict(f"ToA(3) faster than {other} on 50-item collections", below(r), ci(r))
    if orgs:
        one = paired(orgs, "ToA(1)", "solo", args.tasks)
        holds = None if below(one) is None else not below(one)
        verdict("ToA(1) no better than solo", holds, ci(one))
        large = [t for t in args.tasks if t in LARGE]
        r3 = paired(orgs, "ToA(3)", "solo", large)
        verdict("ToA(3) faster than solo on large collections", below(r3), ci(r3))
        asy = paired(modes, "async", "round", args.tasks)
        verdict("(not a paper finding) async faster than rounds", below(asy), ci(asy))
    print(f"\nHow runs ended ({world}): {endings(*(t for t in (fig, orgs, modes) if t))}")
    print(f"{runs} runs in {time.perf_counter() - started:.1f} s of real time")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--world", choices=("hostile", "peaceful", "both"), default="both")
    ap.add_argument("--peaceful", action="store_true", help="short for --world peaceful")
    ap.add_argument("--seeds", default="0,1,2,3,4,5,6,7,8,9")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--leader-s", type=float, default=8.0)
    ap.add_argument("--worker-s", type=float, default=4.0)
    ap.add_argument("--sigma", type=float, default=0.5)
    ap.add_argument("--cutoff-s", type=float, default=300.0)
    ap.add_argument("--mode-leaves", type=int, default=2)
    ap.add_argument(
        "--paper-only",
        dest="full",
        action="store_false",
        help="only the paper's experiment (Fig. 7a: ToA(3), CoA(3), GoA(3), solo on 50 items)",
    )
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
