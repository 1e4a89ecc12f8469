"""Overhead per call of LoreKit's model wrappers, in microseconds.

Measured side by side in one process over a zero-latency ScriptedLLM:

- bare:       ScriptedLLM alone (the baseline, subtracted)
- limit+acct: MeteredLLM(LimitedLLM(scripted))       goal: < 200 us over bare
- cache hit:  MeteredLLM(CachedLLM(LimitedLLM(...))) goal: < 500 us over bare

Batches of calls are interleaved (bare, stack, cache, bare, ...) so machine
noise hits all three alike; the figure is the median over batches of the
per-call difference to the bare batch next to it.

    python benchmarks/llm_overhead.py [--batches 60] [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from lorekit.llm import CachedLLM, LimitedLLM, Limiter, MeteredLLM, ScriptedLLM, UsageLedger
from lorekit.llm.base import LLM, RequestParams

MESSAGES = [
    {"role": "system", "content": "You are a crafting agent in TextCraft. " * 20},
    {"role": "user", "content": "Inventory: [stick] (2). Goal: craft wooden pickaxe. " * 5},
]


async def per_call_us(llm: LLM, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        await llm.complete(MESSAGES, RequestParams(temperature=0.0))
    return (time.perf_counter() - t0) / calls * 1e6


async def main(batches: int, calls: int) -> dict[str, float]:
    base = ScriptedLLM(default="Action: craft 1 wooden pickaxe using 3 planks, 2 stick")
    ledger = UsageLedger()
    limited = MeteredLLM(LimitedLLM(base, Limiter(max_in_flight=8, rpm=1e9)), "executor", ledger)
    with tempfile.TemporaryDirectory() as tmp:
        cache = CachedLLM(LimitedLLM(base, Limiter(max_in_flight=8)), Path(tmp) / "c.sqlite3")
        cached = MeteredLLM(cache, "executor", ledger)
        await cached.complete(MESSAGES)  # warm: every later call is a hit
        for llm in (base, limited, cached):  # warm-up
            await per_call_us(llm, calls)
        stack_over, hit_over, bare = [], [], []
        for _ in range(batches):
            b = await per_call_us(base, calls)
            s = await per_call_us(limited, calls)
            h = await per_call_us(cached, calls)
            b2 = await per_call_us(base, calls)
            ref = (b + b2) / 2
            bare.append(ref)
            stack_over.append(s - ref)
            hit_over.append(h - ref)
        assert cache.hits >= batches * calls, "cache path did not hit"
    return {
        "bare_us": statistics.median(bare),
        "limit_acct_us": statistics.median(stack_over),
        "cache_hit_us": statistics.median(hit_over),
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=60)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    r = asyncio.run(main(args.batches, args.calls))
    print(f"bare ScriptedLLM call            : {r['bare_us']:8.1f} us (baseline)")
    print(
        f"limit + accounting overhead      : {r['limit_acct_us']:8.1f} us/call "
        f"(goal < 200 us; {r['limit_acct_us'] / 200:.2f} x goal)"
    )
    print(
        f"cache hit (+ limit + accounting) : {r['cache_hit_us']:8.1f} us/call "
        f"(goal < 500 us; {r['cache_hit_us'] / 500:.2f} x goal)"
    )
