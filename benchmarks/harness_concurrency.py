"""Episodes per second of the evaluation harness at concurrency 1 and 32.

A ReAct agent plays TextCraft against a ScriptedLLM that takes 200 ms per
answer (like a remote API). Both settings run in this process, one after the
other, into a temporary run store, with everything recorded as in a real run.
Concurrency should turn waiting into throughput: goal >= 25x.

    python benchmarks/harness_concurrency.py [--turns 2] [--serial 12] [--parallel 96]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from lorekit.agents import ReActAgent
from lorekit.envs import make
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM


async def episodes_per_second(store: RunStore, n: int, concurrency: int, turns: int) -> float:
    tasks = make("textcraft").tasks("test")[:n]
    llm = ScriptedLLM(default="Thought: check what I hold\nAction: inventory", latency=0.2)
    t0 = time.perf_counter()
    res = await run_eval(
        store,
        env_factory=lambda: make("textcraft"),
        agent=ReActAgent(max_turns=turns),
        roles=Roles(llm),
        episodes=plan_episodes(tasks),
        concurrency=concurrency,
        env_name="textcraft",
    )
    wall = time.perf_counter() - t0
    assert res.played == n and res.errors == 0 and len(llm.calls) == n * turns
    return n / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=2, help="model calls per episode")
    ap.add_argument("--serial", type=int, default=12, help="episodes at concurrency 1")
    ap.add_argument("--parallel", type=int, default=96, help="episodes at concurrency 32")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, RunStore(Path(tmp) / "bench.sqlite3") as db:
        one = asyncio.run(episodes_per_second(db, args.serial, 1, args.turns))
        many = asyncio.run(episodes_per_second(db, args.parallel, 32, args.turns))
    ideal = 1 / (args.turns * 0.2)
    print(f"concurrency  1: {one:7.2f} episodes/s (ideal {ideal:.2f})")
    print(f"concurrency 32: {many:7.2f} episodes/s (ideal {32 * ideal:.2f})")
    print(f"speed-up      : {many / one:7.1f}x (goal >= 25x)")


if __name__ == "__main__":
    main()
