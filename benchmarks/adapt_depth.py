"""ADaPT vs its baselines by recipe depth, with scripted models of controlled capability.

Claim (Prasad et al. 2024, TextCraft): ADaPT holds up as recipes get deeper
while ReAct, Plan-and-Execute, Try-Again and Reflexion fall off, and ADaPT
decomposes deeper for deeper recipes. Here the models are scripted
(lorekit.agents.adapt.simulation): an executor that can keep only
``--capability`` crafting levels in mind and sometimes declares success too
early (``--noise``), and a planner that splits a task into its direct
ingredients plus the final craft. Every method gets the same models, which do
not know which method calls them, so the pattern must come from the methods.

Everything runs through the evaluation harness (lorekit.eval.runner.run_eval)
on the TextCraft test set, recorded in a run store.

Usage: python benchmarks/adapt_depth.py [--episodes N] [--capability 2]
       [--noise 0.1] [--d-max 4] [--seed 0] [--store PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lorekit.agents.adapt import AdaptAgent, PlanExecuteAgent, ReflexionAgent, TryAgainAgent
from lorekit.agents.adapt.simulation import textcraft_executor, textcraft_planner
from lorekit.agents.base import Agent
from lorekit.envs.base import Task
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM

METHODS = ("ReAct", "Plan-and-Execute", "Try-Again", "Reflexion", "ADaPT")
SELF_REPORT = "ADaPT, trusting"
"""ADaPT believing the executor's "completed", as the published code does (not in the pattern)."""


def make_agents(d_max: int) -> dict[str, Agent]:
    """The five methods, plus ADaPT trusting self-reports; ReAct is ADaPT's executor
    alone (d_max=1)."""
    return {
        "ReAct": AdaptAgent(d_max=1),
        "Plan-and-Execute": PlanExecuteAgent(),
        "Try-Again": TryAgainAgent(d_max=d_max),
        "Reflexion": ReflexionAgent(d_max=d_max),
        "ADaPT": AdaptAgent(d_max=d_max),
        SELF_REPORT: AdaptAgent(d_max=d_max, trust="self"),
    }


def subsample(tasks: Sequence[Task], n: int | None, seed: int = 0) -> list[Task]:
    """``n`` tasks taken round-robin over depth groups (each group shuffled by
    ``seed``), so a small sample still covers every depth."""
    if n is None or n >= len(tasks):
        return list(tasks)
    groups: dict[str, list[Task]] = {}
    for t in tasks:
        groups.setdefault(t.group, []).append(t)
    rng = random.Random(seed)
    for members in groups.values():
        rng.shuffle(members)
    picked: list[Task] = []
    while len(picked) < n:
        for name in sorted(groups):
            if groups[name] and len(picked) < n:
                picked.append(groups[name].pop())
    return picked


@dataclass
class StudyResult:
    """Success counts per method and depth, and ADaPT's depth reached per recipe depth."""

    success: dict[str, dict[int, tuple[int, int]]] = field(default_factory=dict)
    adapt_depths: dict[int, list[int]] = field(default_factory=dict)
    wall_s: dict[str, float] = field(default_factory=dict)

    def rate(self, method: str, depth: int) -> float:
        ok, n = self.success[method][depth]
        return ok / n if n else 0.0

    @property
    def depths(self) -> list[int]:
        return sorted({d for per in self.success.values() for d in per})


async def run_study(
    tasks: Sequence[Task],
    store: RunStore,
    *,
    capability: int = 2,
    noise: float = 0.1,
    d_max: int = 4,
    seed: int = 0,
    concurrency: int = 16,
    env_factory: Callable[[], TextCraftEnv] = TextCraftEnv,
) -> StudyResult:
    """Run every method on ``tasks`` through ``run_eval`` and tabulate by depth."""
    book = env_factory().book
    result = StudyResult()
    for method, agent in make_agents(d_max).items():
        roles = Roles(
            {
                "executor": ScriptedLLM(
                    fn=textcraft_executor(book, capability=capability, noise=noise, seed=seed)
                ),
                "planner": ScriptedLLM(fn=textcraft_planner(book)),
            }
        )
        started = time.perf_counter()
        run = await run_eval(
            store,
            env_factory=env_factory,
            agent=agent,
            roles=roles,
            episodes=plan_episodes(tasks, seed=seed),
            run_id=f"{method.replace(', ', '-')}-k{capability}-n{noise}-s{seed}-{len(tasks)}",
            env_name="textcraft",
            concurrency=concurrency,
        )
        result.wall_s[method] = time.perf_counter() - started
        per: dict[int, tuple[int, int]] = {}
        for e in store.episodes(run.run_id):
            depth = int(str(e.task_group).rpartition("-")[2])
            ok, n = per.get(depth, (0, 0))
            per[depth] = (ok + int(e.success), n + 1)
            if method == "ADaPT":
                reached = int((e.info.get("notes") or {}).get("depth_reached", 0))
                result.adapt_depths.setdefault(depth, []).append(reached)
        result.success[method] = dict(sorted(per.items()))
    return result


def pattern_problems(result: StudyResult) -> list[str]:
    """Where the study fails to show the published pattern (empty when it shows it)."""
    problems = []
    depths = result.depths
    shallow, deep = depths[0], depths[-1]
    for d in depths:
        for m in METHODS[:-1]:
            if result.rate("ADaPT", d) < result.rate(m, d):
                problems.append(f"depth {d}: {m} beats ADaPT")
    if result.rate("ADaPT", deep) < 0.8 * result.rate("ADaPT", shallow):
        problems.append("ADaPT does not hold up: deep success < 80% of shallow success")
    for m in METHODS[:-1]:
        if result.rate(m, deep) >= result.rate("ADaPT", deep):
            problems.append(f"depth {deep}: ADaPT not ahead of {m}")
    means = [statistics.mean(result.adapt_depths[d]) for d in depths]
    if any(b <= a for a, b in itertools.pairwise(means)):
        problems.append(f"ADaPT's mean depth reached does not grow with recipe depth: {means}")
    return problems


def report(result: StudyResult) -> str:
    depths = result.depths
    head = f"{'method':<18}" + "".join(f"{'depth ' + str(d):>14}" for d in depths)
    lines = [head + f"{'all':>10}{'wall s':>9}"]
    for m in [*METHODS, SELF_REPORT]:
        cells = "".join(
            f"{result.rate(m, d):>8.0%} {result.success[m][d][0]:>2}/{result.success[m][d][1]:<2}"
            for d in depths
        )
        ok = sum(v[0] for v in result.success[m].values())
        n = sum(v[1] for v in result.success[m].values())
        lines.append(f"{m:<18}{cells}{ok / n:>10.0%}{result.wall_s[m]:>9.1f}")
    lines.append("")
    lines.append("ADaPT depth reached (1 = executor alone, no decomposition):")
    for d in depths:
        reached = result.adapt_depths[d]
        lines.append(
            f"  recipe depth {d}: mean {statistics.mean(reached):.2f}  max {max(reached)}  "
            f"(n={len(reached)})"
        )
    lines.append("")
    lines.append("ADaPT / ReAct success ratio by depth:")
    for d in depths:
        react = result.rate("ReAct", d)
        ratio = f"{result.rate('ADaPT', d) / react:.2f}x" if react else "inf (ReAct 0%)"
        lines.append(f"  depth {d}: {ratio}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=None, help="subsample N test tasks")
    parser.add_argument("--capability", type=int, default=2, help="executor's crafting levels")
    parser.add_argument("--noise", type=float, default=0.1, help="early 'completed' chance")
    parser.add_argument("--d-max", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--store", type=Path, default=None, help="run store (default: temp)")
    args = parser.parse_args(argv)
    tasks = subsample(TextCraftEnv().tasks("test"), args.episodes, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.store or Path(tmp) / "adapt_depth.sqlite3"
        with RunStore(path) as store:
            result = asyncio.run(
                run_study(
                    tasks,
                    store,
                    capability=args.capability,
                    noise=args.noise,
                    d_max=args.d_max,
                    seed=args.seed,
                    concurrency=args.concurrency,
                )
            )
    print(
        f"TextCraft test set, {len(tasks)} tasks; executor capability {args.capability} "
        f"levels, noise {args.noise}, d_max {args.d_max}, seed {args.seed}\n"
    )
    print(report(result))
    problems = pattern_problems(result)
    print("\npattern:", "shown" if not problems else "NOT shown: " + "; ".join(problems))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
