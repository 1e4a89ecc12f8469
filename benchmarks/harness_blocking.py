"""Blocking env calls must not serialise episodes, and timeouts must be real.

Three measurements in one run, each beside its ideal:

1. overlap: 16 episodes x 20 steps, each step blocking its thread for 50 ms
   (``time.sleep``, like a browser or a simulator waiting), concurrency 16.
   Ideal: one episode's time, 20 x 50 ms = 1.0 s. Goal: <= 1.3x ideal.
2. timeout, thread env: an episode whose step hangs, under a 0.5 s episode
   timeout. Measured from the end of the episode before it (so building the
   env is not counted) to the run's return. Goal: within 10% of the limit,
   the episode recorded as an error, the env discarded.
3. timeout, process env: the same with the env in a child process, which
   the harness kills.

    python benchmarks/harness_blocking.py [--episodes 16] [--steps 20] [--step-ms 50]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from lorekit.agents import OracleAgent
from lorekit.envs import EnvSpec, register
from lorekit.envs.testing import SleepyEnv
from lorekit.eval.envpool import EnvSource
from lorekit.eval.runner import EpisodeOutcome, plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM

ROLES = Roles(ScriptedLLM(default="Action: wait"))
OVERLAP_GOAL = 1.3
TIMEOUT_GOAL = 0.10

register("sleepy-process", SleepyEnv, "SleepyEnv in a child process", execution="process")


async def overlap(db: RunStore, episodes: int, steps: int, step_s: float) -> float:
    tasks = SleepyEnv(n_tasks=episodes).tasks()
    t0 = time.perf_counter()
    res = await run_eval(
        db,
        env_factory=lambda: SleepyEnv(step_s=step_s, steps=steps, n_tasks=episodes),
        agent=OracleAgent(),
        roles=ROLES,
        episodes=plan_episodes(tasks),
        concurrency=episodes,
    )
    wall = time.perf_counter() - t0
    assert res.successes == episodes, res
    return wall


async def hung_episode(db: RunStore, source: EnvSource, limit_s: float) -> tuple[float, str]:
    """Seconds from the end of a normal episode to the run's return, when the
    next episode hangs; and what the store says about the hung one."""
    tasks = SleepyEnv().tasks()[:2]
    ended: list[float] = []

    def note(outcome: EpisodeOutcome) -> None:
        ended.append(time.perf_counter())

    res = await run_eval(
        db,
        env_factory=source,
        agent=OracleAgent(),
        roles=ROLES,
        episodes=plan_episodes(tasks),
        concurrency=1,
        episode_timeout_s=limit_s,
        on_episode=note,
    )
    returned = time.perf_counter()
    hung = next(e for e in db.episodes(res.run_id) if e.task_id == tasks[1].id)
    assert hung.status == "error" and res.envs_discarded == 1, (hung, res)
    return returned - ended[0], hung.error or ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=16)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--step-ms", type=float, default=50.0)
    ap.add_argument("--timeout", type=float, default=0.5, help="episode timeout of the hang case")
    args = ap.parse_args()
    step_s = args.step_ms / 1000
    hang: dict[str, Any] = {"step_s": 0.001, "steps": 3, "hang_tasks": ["sleepy-1"], "hang_s": 30.0}
    with tempfile.TemporaryDirectory() as tmp, RunStore(Path(tmp) / "bench.sqlite3") as db:
        wall = asyncio.run(overlap(db, args.episodes, args.steps, step_s))
        thread_s, thread_err = asyncio.run(
            hung_episode(db, lambda: SleepyEnv(**hang), args.timeout)
        )
        process_s, _ = asyncio.run(hung_episode(db, EnvSpec("sleepy-process", hang), args.timeout))
    ideal = args.steps * step_s
    serial = args.episodes * ideal
    print(
        f"overlap: {args.episodes} episodes x {args.steps} steps x {args.step_ms:g} ms, "
        f"concurrency {args.episodes}"
    )
    print(f"  ideal {ideal:.2f} s   measured {wall:.2f} s   (serial would be {serial:.1f} s)")
    print(f"  ratio measured/ideal: {wall / ideal:.2f}x (goal <= {OVERLAP_GOAL}x)")
    for label, seconds in (("thread env", thread_s), ("process env", process_s)):
        print(f"timeout, {label}: limit {args.timeout:.2f} s   measured {seconds:.3f} s")
        off = seconds / args.timeout - 1
        print(f"  off by {off:+.1%} (goal within {TIMEOUT_GOAL:.0%})")
    print(f"  recorded error: {thread_err}")


if __name__ == "__main__":
    main()
