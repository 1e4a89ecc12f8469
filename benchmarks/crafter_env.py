"""Crafter text-mode speed next to the plain crafter package with images.

Claims: the text environment runs >= 1,500 steps/second on one core, and a
reset (world generation) takes < 0.2 s after warm-up. Both are printed beside
crafter.Env (which renders a 64x64 image every step and generates worlds
cell by cell), as ratios measured in the same run.

Usage: python benchmarks/crafter_env.py [--steps 3000] [--resets 20]
"""

from __future__ import annotations

import argparse
import os
import random
import time

import crafter

from lorekit.envs.crafter import CrafterTextEnv
from lorekit.envs.crafter.worldgen import warm_up

GOAL_STEPS_PER_SECOND = 1_500
GOAL_RESET_SECONDS = 0.2


def text_env_rates(steps: int, resets: int) -> tuple[float, float]:
    env = CrafterTextEnv(length=10_000)
    rng = random.Random(0)
    actions = env.candidate_actions()
    env.reset("score/seed-0")
    start = time.perf_counter()
    for _ in range(steps):
        if env.step(rng.choice(actions)).done:
            env.reset("score/seed-1")
    rate = steps / (time.perf_counter() - start)
    start = time.perf_counter()
    for seed in range(resets):
        env.reset("score/seed-0", seed=1000 + seed)
    return rate, (time.perf_counter() - start) / resets


def crafter_rates(steps: int, resets: int) -> tuple[float, float]:
    env = crafter.Env(seed=0)
    rng = random.Random(0)
    env.reset()
    start = time.perf_counter()
    for _ in range(steps):
        if env.step(rng.randrange(17))[2]:
            env.reset()
    rate = steps / (time.perf_counter() - start)
    start = time.perf_counter()
    for _ in range(resets):
        env.reset()
    return rate, (time.perf_counter() - start) / resets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--resets", type=int, default=20)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    start = time.perf_counter()
    warm_up()
    print(f"warm-up (numba compile or cache load): {time.perf_counter() - start:.2f} s")
    crafter.Env(seed=0).reset()  # crafter's own noise compiles on first use too
    ours_rate, ours_reset = text_env_rates(args.steps, args.resets)
    base_rate, base_reset = crafter_rates(args.steps, args.resets)
    print(f"text env steps/s:       {ours_rate:,.0f}  (goal {GOAL_STEPS_PER_SECOND:,})")
    print(f"crafter.Env steps/s:    {base_rate:,.0f}  (with images)")
    print(f"steps/s ratio ours/crafter: {ours_rate / base_rate:.1f}x; "
          f"ratio to goal: {ours_rate / GOAL_STEPS_PER_SECOND:.2f}x")  # fmt: skip
    print(
        f"text env reset:         {ours_reset * 1000:.1f} ms"
        f"  (goal < {GOAL_RESET_SECONDS * 1000:.0f} ms)"
    )
    print(f"crafter.Env reset:      {base_reset * 1000:.1f} ms")
    print(f"reset speed-up ours vs crafter: {base_reset / ours_reset:.1f}x; "
          f"ratio goal/ours: {GOAL_RESET_SECONDS / ours_reset:.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
