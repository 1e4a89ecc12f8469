"""What the law-based reward costs per env step, measured side by side in one run.

The same seeded random action sequence is played on the 27-action Crafter
(symbolic observations, what PPO trains on) with the ``health`` reward (no
predicates) and with ``oracle`` (health + laws + penalty: reads the state and
calls up to two compiled predicates per step). Goal: the law reward adds
under 25% to a step, so training speed is set by the game, not the reward.
On a shared machine the two rates are noisy, so the law reward's own time
(the wrapper's judging of each step, timed directly) is printed too.

    python benchmarks/laws_reward_overhead.py [--steps 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from lorekit.envs.crafter import worldgen
from lorekit.laws.wrapper import make_reward_env


def steps_per_second(variant: str, actions: list[int]) -> tuple[float, float]:
    """(steps/s, seconds spent judging actions by the laws)."""
    env = make_reward_env(variant)
    env.reset(seed=0)
    judge = env._judge
    judging = [0.0]

    def timed(action: int) -> tuple[float, float]:
        t0 = time.perf_counter()
        try:
            return judge(action)
        finally:
            judging[0] += time.perf_counter() - t0

    env._judge = timed  # type: ignore[method-assign]
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    elapsed = time.perf_counter() - start
    env.close()
    return len(actions) / elapsed, judging[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    worldgen.warm_up()
    rng = random.Random(0)
    actions = [rng.randrange(27) for _ in range(args.steps)]
    rates: dict[str, list[float]] = {"health": [], "oracle": []}
    judging: list[float] = []
    for _ in range(args.repeats):  # interleaved, so drift hits both alike
        for variant in rates:
            rate, judged = steps_per_second(variant, actions)
            rates[variant].append(rate)
            if variant == "oracle":
                judging.append(judged / len(actions))
    health = statistics.median(rates["health"])
    oracle = statistics.median(rates["oracle"])
    own = statistics.median(judging)
    print(f"health reward : {health:10,.0f} steps/s (median of {args.repeats})")
    print(f"oracle reward : {oracle:10,.0f} steps/s (health + laws + penalty)")
    print(f"overhead      : {health / oracle - 1:10.1%} per step (goal < 25%)")
    print(f"judging alone : {own * 1e6:10.1f} us/step = {own * health:.1%} of a health-only step")


if __name__ == "__main__":
    main()
