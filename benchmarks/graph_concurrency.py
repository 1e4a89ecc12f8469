"""Concurrency of the graph engine, and its own overhead per node.

One run, side by side:

1. A 20-node graph whose critical path has 6 nodes, on a ScriptedLLM that
   takes 100 ms per call. Concurrent wall time (goal: at most 1.15 x 6 x
   100 ms = 690 ms) and its ratio to the sequential mode (20 x 100 ms).
2. The same graph on a zero-latency ScriptedLLM: the engine's overhead per
   node (scheduling, composing, parsing, tracing), which is the time per
   node of a pass minus the time of the bare model calls, measured in
   interleaved batches (goal: under 300 us).

    python benchmarks/graph_concurrency.py [--repeats 3] [--batches 30] [--passes 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from lorekit.graph import Graph
from lorekit.llm import ScriptedLLM

LEVELS = [4, 4, 3, 3, 3, 3]  # 20 nodes in 6 levels: the critical path has 6 nodes
LATENCY_S = 0.1


def build(llm: ScriptedLLM) -> Graph:
    g = Graph(llm, name="bench", system="You are one step of a benchmark graph.")
    previous: list[str] = []
    for level, width in enumerate(LEVELS):
        current = []
        for i in range(width):
            key = f"l{level}n{i}"
            # each node depends on one or two nodes of the level above
            deps = (
                sorted({previous[i % len(previous)], previous[(i + 1) % len(previous)]})
                if previous
                else []
            )
            g.add_node(key, f"Goal: {{goal}}. Do step {key}.", deps=deps)
            current.append(key)
        previous = current
    return g


async def wall(g: Graph, sequential: bool) -> float:
    t0 = time.perf_counter()
    await g.evaluate({"goal": "benchmark"}, sequential=sequential)
    return time.perf_counter() - t0


async def bare_calls_s(llm: ScriptedLLM, messages: list[list[dict[str, str]]]) -> float:
    t0 = time.perf_counter()
    for m in messages:
        await llm.complete(m)
    return time.perf_counter() - t0


async def main(repeats: int, batches: int, passes: int) -> dict[str, float]:
    slow = build(ScriptedLLM(default="done", latency=LATENCY_S))
    conc = statistics.median([await wall(slow, False) for _ in range(repeats)])
    seq = await wall(slow, True)

    llm = ScriptedLLM(default="done")
    fast = build(llm)
    n = len(fast.nodes)
    await wall(fast, False)  # warm-up, and a real prompt set for the bare baseline
    assert fast.last_report is not None
    messages = [t.messages for t in fast.last_report.traces]
    over_c, over_s = [], []
    for _ in range(batches):
        bare = await bare_calls_s(llm, messages * passes)
        c = sum([await wall(fast, False) for _ in range(passes)])
        s = sum([await wall(fast, True) for _ in range(passes)])
        bare2 = await bare_calls_s(llm, messages * passes)
        ref = (bare + bare2) / 2
        over_c.append((c - ref) / (passes * n) * 1e6)
        over_s.append((s - ref) / (passes * n) * 1e6)
    return {
        "nodes": n,
        "concurrent_s": conc,
        "sequential_s": seq,
        "overhead_concurrent_us": statistics.median(over_c),
        "overhead_sequential_us": statistics.median(over_s),
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--passes", type=int, default=20)
    args = ap.parse_args()
    r = asyncio.run(main(args.repeats, args.batches, args.passes))
    goal = 1.15 * len(LEVELS) * LATENCY_S
    print(f"graph: {r['nodes']:.0f} nodes, critical path {len(LEVELS)}, model latency 100 ms")
    print(
        f"concurrent pass               : {r['concurrent_s'] * 1000:8.1f} ms "
        f"(goal <= {goal * 1000:.0f} ms; {r['concurrent_s'] / goal:.2f} x goal)"
    )
    print(
        f"sequential pass               : {r['sequential_s'] * 1000:8.1f} ms "
        f"(concurrent is {r['sequential_s'] / r['concurrent_s']:.2f} x faster)"
    )
    for mode in ("concurrent", "sequential"):
        us = r[f"overhead_{mode}_us"]
        print(
            f"engine overhead, {mode:<10}   : {us:8.1f} us/node "
            f"(goal < 300 us; {us / 300:.2f} x goal)"
        )
