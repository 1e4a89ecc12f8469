"""The verdict rule's error rates, by seeded simulation, for docs/reproduce.md ("The verdict").

For each true success rate and n (the paper's and ours alike), it simulates
``--reps`` pairs of tables: the paper's figure (printed to a tenth of a point)
and ours, both drawn at that rate, then ours 10 points towards 50%. It prints
how often the rule says "differs" for the faithful rerun (goal: near 5%) and
for the real difference, beside the power the rule reports for it, and, for
contrast, the one-sample rule it replaced (the published figure outside our
Wilson interval). Nothing is asserted: ``tests/eval/test_reproduce_stats.py``
holds the bounds at a smaller size.

    PYTHONPATH=. python benchmarks/reproduce_verdict.py --reps 20000
"""

from __future__ import annotations

import argparse
import random

from lorekit.eval.reproduce_stats import Binomial, calls_differs, proportion_test, wilson

RATES = (0.02, 0.15, 0.3, 0.52, 0.8, 0.95)
SIZES = (40, 77, 134, 200)


def one_sample(p: float, n: int, reps: int, seed: int) -> float:
    """The share of faithful reruns the old rule called "differs"."""
    rng = random.Random(seed)
    draw = Binomial(n, p)
    hits = 0
    for _ in range(reps):
        printed = round(100.0 * draw.draw(rng) / n, 1) / 100.0
        low, high = wilson(draw.draw(rng), n)
        hits += not low <= printed <= high
    return hits / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5000, help="simulated tables per cell")
    args = parser.parse_args()
    print("rate    n  false differs  old rule  power (reported)  10-point diff found  too few")
    falses = []
    for i, p in enumerate(RATES):
        for j, n in enumerate(SIZES):
            seed = 1000 * i + j
            same = calls_differs(p, n, p, n, reps=args.reps, seed=seed)
            shifted = p + 0.1 if p < 0.5 else p - 0.1
            moved = calls_differs(p, n, shifted, n, reps=args.reps, seed=seed + 500)
            power = proportion_test(round(p * n), n, p, n).power or 0.0
            falses.append(same["differs"])
            old = one_sample(p, n, args.reps, seed)
            print(
                f"{p:4.2f} {n:4d}  {same['differs']:13.3f}  {old:8.3f}"
                f"  {power:16.2f}  {moved['differs']:19.3f}  {same['too few episodes']:7.2f}"
            )
    print(
        f"false differs: mean {sum(falses) / len(falses):.3f}, "
        f"range {min(falses):.3f} to {max(falses):.3f} (nominal 0.05)"
    )


if __name__ == "__main__":
    main()
