"""Steps per second of the TextCraft environment on one core.

Claim: >= 20,000 env steps/second for a realistic action mix. The mix replays
oracle trajectories (precomputed, so the solver's planning cost is not
counted), interleaved with invalid actions and inventory checks, which is what
an LLM agent's stream of actions looks like. Also reports reset time.

Usage: python benchmarks/textcraft_env.py [--source minecraft-data|datapack]
       [--compat] [--episodes 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

from lorekit.envs.textcraft import TextCraftEnv

GOAL_STEPS_PER_SECOND = 20_000
INVALID_ACTIONS = (
    "get 1 diamond pickaxe",
    "craft 1 stick using 1 oak log",
    "craft 2 torch using 1 stick",
    "get 3 unobtainium",
    "dance wildly",
    "Get 2 Oak_Log.",
)


def build_scripts(env: TextCraftEnv, episodes: int) -> list[tuple[str, list[str]]]:
    """Per task: oracle actions with an invalid action and an inventory between."""
    scripts = []
    for index, task in enumerate(env.tasks("all")[:episodes]):
        env.reset(task)
        actions: list[str] = []
        while True:
            action = env.expert_action()
            if action is None:
                break
            actions.append(INVALID_ACTIONS[(index + len(actions)) % len(INVALID_ACTIONS)])
            actions.append("inventory")
            actions.append(action)
            if env.step(action).done:
                break
        scripts.append((task.id, actions))
    return scripts


def measure(env: TextCraftEnv, scripts: list[tuple[str, list[str]]]) -> tuple[float, float]:
    """(steps per second, mean reset seconds) over one pass of every script."""
    steps = 0
    step_time = 0.0
    reset_time = 0.0
    clock = time.perf_counter
    for task_id, actions in scripts:
        start = clock()
        env.reset(task_id)
        reset_time += clock() - start
        start = clock()
        for action in actions:
            env.step(action)
        step_time += clock() - start
        steps += len(actions)
    return steps / step_time, reset_time / len(scripts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="minecraft-data")
    parser.add_argument("--compat", action="store_true")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    start = time.perf_counter()
    env = TextCraftEnv(args.source, compat=args.compat, max_steps=10_000)
    print(f"env construction (book + task sets): {time.perf_counter() - start:.3f} s")
    scripts = build_scripts(env, args.episodes)
    best_rate, best_reset = 0.0, float("inf")
    for _ in range(args.repeats):
        rate, reset = measure(env, scripts)
        best_rate, best_reset = max(best_rate, rate), min(best_reset, reset)
    total = sum(len(a) for _, a in scripts)
    print(f"source={args.source} compat={args.compat} episodes={len(scripts)} steps/pass={total}")
    print(f"steps/second: {best_rate:,.0f}")
    print(f"ratio to goal {GOAL_STEPS_PER_SECOND:,}: {best_rate / GOAL_STEPS_PER_SECOND:.2f}x")
    print(f"reset: {best_reset * 1e6:,.0f} us per reset")


if __name__ == "__main__":
    main()
