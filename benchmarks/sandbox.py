"""Costs of running model-written code safely, measured side by side in one run.

Every goal is a ratio to a baseline measured in the same run on the same
machine, interleaved with it where it can be: absolute microseconds triple on
a busy machine, a ratio to the same kind of work done plainly moves far less.
The script reports; it never fails.

- API call overhead: a run making N proxied calls minus a run making none,
  per call, next to a bare pickled request and answer over a pipe to another
  process, measured in turn with it (the least any proxied call costs; goal:
  <= 15x it: a proxied call also crosses the guard, the policy and the host's
  dispatcher; measured 6-11x at load 12), and the same method called in-process.
- Start to first result: ``run_code("print(1)")`` with a warm pool next to
  starting a fresh interpreter (``python -c pass``; goal: <= 0.5x it) and a
  cold start that spawns its worker on demand.
- Both of the above with the OS layer on (bubblewrap + seccomp, what every
  run uses) and off (the in-process guard only), and their ratio.
- Audit-heavy run: a snippet that makes 30 dataclasses and 30 namedtuples
  (each one code generated at run time, so a few dozen audit events the
  hook judges), per run.
- Attribute writes: a loop that sets an attribute of the code's own object,
  per iteration, next to the same loop in plain Python (every write in the
  sandbox goes through the guard's write check first). Reported, no goal.
- Compiled predicate: calls per second of a 5-condition reward predicate
  next to the same function written as ordinary Python (goal: >= 0.5x it);
  and a predicate that loops over a 3x3 neighbourhood, which pays for the
  per-call step budget (goal: >= 0.25x plain).

    python benchmarks/sandbox.py [--repeats 15] [--calls 2000]
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import subprocess
import sys
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


GOALS = {"api_vs_pipe": 15.0, "warm_vs_interpreter": 0.5, "predicate": 0.5, "looping": 0.25}
"""Ratios to the same run's baselines: at most (API, warm start) or at least (predicates)."""


_ECHO = """
import pickle, sys
read, write = sys.stdin.buffer, sys.stdout.buffer
while True:
    try:
        message = pickle.load(read)
    except EOFError:
        break
    pickle.dump(message, write)
    write.flush()
"""


class Echo:
    """Another process that answers each pickled request with it: the least a proxied
    call can cost (a request and an answer, pickled, over a pipe), the API call's
    baseline, measured interleaved with it."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.call(("add", 0))

    def call(self, message: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        pickle.dump(message, self.proc.stdin)
        self.proc.stdin.flush()
        return pickle.load(self.proc.stdout)

    def round_trip_us(self, calls: int) -> float:
        t0 = time.perf_counter()
        for i in range(calls):
            self.call(("add", (i,), {}))
        return (time.perf_counter() - t0) / calls * 1e6

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


def interpreter_start_ms(repeats: int) -> float:
    """Milliseconds to start a fresh Python interpreter and run nothing."""
    times = [
        _timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True)) * 1e3
        for _ in range(repeats)
    ]
    return statistics.median(times)


def api_overhead_ms(pool: WorkerPool, repeats: int, calls: int) -> tuple[float, float, float]:
    """(sandboxed, in-process, bare pickled pipe round trip) milliseconds per call, the
    sandboxed and the bare ones measured in turn, so both see the same load."""
    loop = f"for _ in range({calls}):\n    api.add(1)"
    empty = f"for _ in range({calls}):\n    pass"
    diffs, bare = [], []
    echo = Echo()
    try:
        for _ in range(repeats):
            pool.wait_ready()
            with_calls = _timed(lambda: run_code(loop, Counter(), pool=pool, limits=LIMITS))
            pool.wait_ready()
            without = _timed(lambda: run_code(empty, Counter(), pool=pool, limits=LIMITS))
            diffs.append((with_calls - without) / calls * 1e3)
            bare.append(echo.round_trip_us(calls) / 1e3)
    finally:
        echo.close()
    local = Counter()
    direct = _timed(lambda: [local.add(1) for _ in range(calls)]) / calls * 1e3
    return statistics.median(diffs), direct, statistics.median(bare)


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


WRITES = "class P:\n    pass\np = P()\nfor i in range({n}):\n    p.x = i\n"


def write_loop_us(pool: WorkerPool, repeats: int, writes: int = 100_000) -> tuple[float, float]:
    """(sandboxed, plain) microseconds per iteration of a loop writing an attribute;
    the sandboxed figure is the run minus an empty run, so start-up cancels."""
    code = WRITES.format(n=writes)
    compiled = compile(code, "<writes>", "exec")
    sandboxed, plain = [], []
    for _ in range(repeats):
        pool.wait_ready()
        full = _timed(lambda: run_code(code, pool=pool, limits=LIMITS))
        pool.wait_ready()
        empty = _timed(lambda: run_code("pass", pool=pool, limits=LIMITS))
        sandboxed.append((full - empty) / writes * 1e6)
        plain.append(_timed(lambda: exec(compiled, {})) / writes * 1e6)
    return statistics.median(sandboxed), statistics.median(plain)


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
        api_ms, direct_ms, bare_ms = api_overhead_ms(pool, repeats, calls)
        warm_ms, cold_ms = first_result_ms(pool, repeats)
        heavy_ms = audit_heavy_ms(pool, repeats)
        writes_us, plain_writes_us = write_loop_us(pool, repeats)
        confined = pool.report.complete
    return {
        "api_us": api_ms * 1e3,
        "direct_us": direct_ms * 1e3,
        "pipe_us": bare_ms * 1e3,
        "warm_ms": warm_ms,
        "cold_ms": cold_ms,
        "heavy_ms": heavy_ms,
        "writes_us": writes_us,
        "plain_writes_us": plain_writes_us,
        "confined": float(confined),
    }


def _verdict(ratio: float, goal: float, *, at_most: bool) -> str:
    ok = ratio <= goal if at_most else ratio >= goal
    return f"{ratio:.2f}x ({'<=' if at_most else '>='} {goal}x: {'met' if ok else 'MISSED'})"


def main(repeats: int, calls: int) -> dict[str, float]:
    start_ms = interpreter_start_ms(repeats)
    on = run_code_costs("required", repeats, calls)
    off = run_code_costs("off", repeats, calls)
    rates = predicate_rate(repeats)
    print(
        f"baselines: pickled pipe round trip {on['pipe_us']:.1f} / {off['pipe_us']:.1f} us "
        f"(measured beside each layer), interpreter start {start_ms:.1f} ms"
    )
    for label, costs in (("OS layer on ", on), ("OS layer off", off)):
        print(f"{label}:")
        print(
            f"  API call overhead:      {costs['api_us']:8.1f} us/call  vs pipe "
            f"{_verdict(costs['api_us'] / costs['pipe_us'], GOALS['api_vs_pipe'], at_most=True)}; "
            f"in-process call {costs['direct_us']:.2f} us"
        )
        print(
            f"  start to first result:  {costs['warm_ms']:8.1f} ms warm   vs interpreter "
            f"{_verdict(costs['warm_ms'] / start_ms, GOALS['warm_vs_interpreter'], at_most=True)};"
            f" cold start {costs['cold_ms']:.1f} ms"
        )
        print(
            f"  audit-heavy run:        {costs['heavy_ms']:8.1f} ms   (30 dataclasses, 30 tuples)"
        )
        print(
            f"  attribute-write loop:   {costs['writes_us']:8.3f} us/iteration, plain Python "
            f"{costs['plain_writes_us']:.3f} us: "
            f"{costs['writes_us'] / max(costs['plain_writes_us'], 1e-9):.1f}x (each write checked)"
        )
    print(
        f"OS layer on/off:  API call {on['api_us'] / off['api_us']:.2f}x, warm start "
        f"{on['warm_ms'] / off['warm_ms']:.2f}x, cold start {on['cold_ms'] / off['cold_ms']:.2f}x"
    )
    compiled, plain = rates["compiled"], rates["plain"]
    print(
        f"compiled predicate:     {compiled:10,.0f} calls/s vs plain {plain:,.0f} calls/s "
        f"{_verdict(compiled / plain, GOALS['predicate'], at_most=False)} (5 conditions)"
    )
    looped, plain_looped = rates["compiled_loop"], rates["plain_loop"]
    print(
        f"looping predicate:      {looped:10,.0f} calls/s vs plain {plain_looped:,.0f} calls/s "
        f"{_verdict(looped / plain_looped, GOALS['looping'], at_most=False)} (3x3 grid scan, "
        "step budget)"
    )
    return {
        **{f"{k}_on": v for k, v in on.items()},
        **{f"{k}_off": v for k, v in off.items()},
        "pipe_us": on["pipe_us"],
        "start_ms": start_ms,
        "pred_cps": compiled,
        "pred_ratio": compiled / plain,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    main(args.repeats, args.calls)
