"""Costs of running model-written code safely, measured side by side in one run.

- API call overhead: a run making N proxied calls minus a run making none,
  per call (goal: < 1 ms), next to the same method called in-process.
- Start to first result: ``run_code("print(1)")`` with a warm pool (goal:
  < 150 ms) next to a cold start that spawns its worker on demand.
- Both of the above with the OS layer on (bubblewrap + seccomp, what every
  run uses) and off (the in-process guard only), and their ratio.
- Audit-heavy run: a snippet that makes 30 dataclasses and 30 namedtuples
  (each one code generated at run time, so a few dozen audit events the
  hook judges), per run.
- Compiled predicate: calls per second of a 5-condition reward predicate
  (goal: >= 1,000,000), next to the same function written as ordinary Python;
  and a predicate that loops over a 3x3 neighbourhood, which pays for the
  per-call step budget.

    python benchmarks/sandbox.py [--repeats 15] [--calls 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from lorekit.sandbox import Limits, WorkerPool, compile_predicate, run_code

LIMITS = Limits(wall_s=30.0, cpu_s=30.0, max_api_calls=1_000_000)
PREDICATE = """
def reward(state, previous):
    inv = state["inventory"]
    gained = inv.get("wood", 0) - previous["inventory"].get("wood", 0)
    return (
        gained > 0
        and inv.get("wood_pickaxe", 0) >= 1
        and "table" in state["nearby"]
        and state["health"] > 3
        and not state["sleeping"]
    )
"""
LOOPING = """
def reward(state, previous):
    trees = sum(1 for row in state["grid"] for cell in row if cell == "tree")
    return trees >= 2 and state["health"] > 3
"""
STATE = {
    "inventory": {"wood": 3, "wood_pickaxe": 1},
    "nearby": ["grass", "table", "tree"],
    "health": 9,
    "sleeping": False,
    "grid": [["grass", "tree", "sand"], ["tree", "grass", "water"], ["grass", "stone", "tree"]],
}
PREVIOUS = {"inventory": {"wood": 2}}


def plain_reward(state: dict[str, Any], previous: dict[str, Any]) -> bool:
    """The same function as PREDICATE, written as ordinary Python: the baseline."""
    inv = state["inventory"]
    gained = inv.get("wood", 0) - previous["inventory"].get("wood", 0)
    return bool(
        gained > 0
        and inv.get("wood_pickaxe", 0) >= 1
        and "table" in state["nearby"]
        and state["health"] > 3
        and not state["sleeping"]
    )


def plain_looping(state: dict[str, Any], previous: dict[str, Any]) -> bool:
    """The same function as LOOPING, written as ordinary Python."""
    trees = sum(1 for row in state["grid"] for cell in row if cell == "tree")
    return trees >= 2 and state["health"] > 3


class Counter:
    """The smallest useful API: one method that changes state."""

    def __init__(self) -> None:
        self.value = 0

    def add(self, amount: int) -> int:
        self.value += amount
        return self.value


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def api_overhead_ms(pool: WorkerPool, repeats: int, calls: int) -> tuple[float, float]:
    """(sandboxed, in-process) milliseconds per call."""
    loop = f"for _ in range({calls}):\n    api.add(1)"
    empty = f"for _ in range({calls}):\n    pass"
    diffs = []
    for _ in range(repeats):
        pool.wait_ready()
        with_calls = _timed(lambda: run_code(loop, Counter(), pool=pool, limits=LIMITS))
        pool.wait_ready()
        without = _timed(lambda: run_code(empty, Counter(), pool=pool, limits=LIMITS))
        diffs.append((with_calls - without) / calls * 1e3)
    local = Counter()
    direct = _timed(lambda: [local.add(1) for _ in range(calls)]) / calls * 1e3
    return statistics.median(diffs), direct


def first_result_ms(pool: WorkerPool, repeats: int) -> tuple[float, float]:
    """(warm pool, cold start) milliseconds from call to result."""
    warm, cold = [], []
    with WorkerPool(
        size=0, isolation=pool.plan.mode, unsafe_no_os_sandbox=pool.unsafe_no_os_sandbox
    ) as empty_pool:
        for _ in range(repeats):
            pool.wait_ready()
            warm.append(_timed(lambda: run_code("print(1)", pool=pool, limits=LIMITS)) * 1e3)
            cold.append(_timed(lambda: run_code("print(1)", pool=empty_pool, limits=LIMITS)) * 1e3)
    return statistics.median(warm), statistics.median(cold)


AUDIT_HEAVY = """
import collections, dataclasses
for i in range(30):
    dataclasses.make_dataclass(f"D{i}", ["a", "b"])
    collections.namedtuple(f"N{i}", "a b")
"""


def audit_heavy_ms(pool: WorkerPool, repeats: int) -> float:
    """Median milliseconds of a run dominated by audited code generation."""
    times = []
    for _ in range(repeats):
        pool.wait_ready()
        times.append(_timed(lambda: run_code(AUDIT_HEAVY, pool=pool, limits=LIMITS)) * 1e3)
    return statistics.median(times)


def predicate_rate(repeats: int, calls: int = 100_000) -> dict[str, float]:
    """Calls per second of each predicate, compiled and plain, measured interleaved."""
    pairs: dict[str, Callable[..., Any]] = {
        "compiled": compile_predicate(PREDICATE),
        "plain": plain_reward,
        "compiled_loop": compile_predicate(LOOPING),
        "plain_loop": plain_looping,
    }
    assert pairs["compiled"](STATE, PREVIOUS) is plain_reward(STATE, PREVIOUS) is True
    assert pairs["compiled_loop"](STATE, PREVIOUS) is plain_looping(STATE, PREVIOUS) is True
    rates: dict[str, list[float]] = {name: [] for name in pairs}
    for _ in range(repeats):
        for name, fn in pairs.items():
            elapsed = _timed(lambda fn=fn: [fn(STATE, PREVIOUS) for _ in range(calls)])
            rates[name].append(calls / elapsed)
    return {name: statistics.median(values) for name, values in rates.items()}


def run_code_costs(isolation: str, repeats: int, calls: int) -> dict[str, float]:
    """API overhead and start-up with one isolation mode (``off``: asked for by name)."""
    with WorkerPool(size=2, isolation=isolation, unsafe_no_os_sandbox=isolation == "off") as pool:
        pool.wait_ready()
        run_code("print(0)", pool=pool, limits=LIMITS)  # warm-up
        api_ms, direct_ms = api_overhead_ms(pool, repeats, calls)
        warm_ms, cold_ms = first_result_ms(pool, repeats)
        heavy_ms = audit_heavy_ms(pool, repeats)
        confined = pool.report.complete
    return {
        "api_us": api_ms * 1e3,
        "direct_us": direct_ms * 1e3,
        "warm_ms": warm_ms,
        "cold_ms": cold_ms,
        "heavy_ms": heavy_ms,
        "confined": float(confined),
    }


def main(repeats: int, calls: int) -> dict[str, float]:
    on = run_code_costs("required", repeats, calls)
    off = run_code_costs("off", repeats, calls)
    rates = predicate_rate(repeats)
    for label, costs in (("OS layer on ", on), ("OS layer off", off)):
        print(f"{label}:")
        print(
            f"  API call overhead:      {costs['api_us']:8.1f} us/call  (goal < 1000 us; "
            f"in-process call {costs['direct_us']:.2f} us)"
        )
        print(
            f"  start to first result:  {costs['warm_ms']:8.1f} ms warm   (goal < 150 ms; "
            f"cold start {costs['cold_ms']:.1f} ms)"
        )
        print(
            f"  audit-heavy run:        {costs['heavy_ms']:8.1f} ms   (30 dataclasses, 30 tuples)"
        )
    print(
        f"OS layer on/off:  API call {on['api_us'] / off['api_us']:.2f}x, warm start "
        f"{on['warm_ms'] / off['warm_ms']:.2f}x, cold start {on['cold_ms'] / off['cold_ms']:.2f}x"
    )
    compiled, plain = rates["compiled"], rates["plain"]
    print(
        f"compiled predicate:     {compiled:10,.0f} calls/s (goal >= 1,000,000; 5 conditions; "
        f"plain function {plain:,.0f} calls/s, ratio {compiled / plain:.2f})"
    )
    looped, plain_looped = rates["compiled_loop"], rates["plain_loop"]
    print(
        f"looping predicate:      {looped:10,.0f} calls/s (3x3 grid scan with step budget; "
        f"plain function {plain_looped:,.0f} calls/s, ratio {looped / plain_looped:.2f})"
    )
    return {
        **{f"{k}_on": v for k, v in on.items()},
        **{f"{k}_off": v for k, v in off.items()},
        "pred_cps": compiled,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    main(args.repeats, args.calls)
