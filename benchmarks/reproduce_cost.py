"""The dry run's estimate against the metered tokens of the same simulated run.

``lorekit reproduce run EXPERIMENT --dry-run`` plays 2 scripted episodes per
row and scales them to the experiment's size. Here the same scripted models
(:mod:`lorekit.agents.shape_models`) then play every one of the first ``-n``
tasks, metered by the store as any run is, and the two are printed side by
side: calls and tokens per row and in total, and estimate / metered (goal:
within 20% for the total). The price of each experiment at today's default
table (the paper's models) is printed too.

    PYTHONPATH=. python benchmarks/reproduce_cost.py adapt-table2-textcraft -n 40
"""

from __future__ import annotations

import argparse
import time

from lorekit.agents.shape_models import shape_roles
from lorekit.cli.reproduce_cost import DRY_EPISODES, paper_model
from lorekit.eval.cost import RowMeasure, Tokens, measure_rows, price_row
from lorekit.eval.prices import price_table
from lorekit.eval.reproduce import find_experiment


def _total(m: RowMeasure) -> Tokens:
    out = Tokens()
    for episode in m.episodes:
        for tokens in episode.values():
            out.add(tokens)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment")
    parser.add_argument("-n", type=int, default=None, help="tasks per row (default: all)")
    parser.add_argument("--rows", default=None, help="row ids, comma-separated")
    args = parser.parse_args()
    exp = find_experiment(args.experiment)
    rows = [r for r in exp.runnable_rows if not args.rows or r.id in args.rows.split(",")]
    n = args.n or exp.episodes
    table = price_table()
    t0 = time.perf_counter()
    dry = measure_rows(
        exp.env, exp.env_options, exp.split, rows, shape_roles, planned=n, episodes=DRY_EPISODES
    )
    t1 = time.perf_counter()
    size = n or len(dry[0].episodes)
    full = measure_rows(
        exp.env, exp.env_options, exp.split, rows, shape_roles, planned=n, episodes=size
    )
    t2 = time.perf_counter()
    print(f"{exp.id}: {size} episodes per row; dry run {t1 - t0:.1f}s, full run {t2 - t1:.1f}s")
    print(
        f"{'row':14} {'est. calls':>10} {'met. calls':>10} {'est. tokens':>12} "
        f"{'met. tokens':>12} {'ratio':>6}  stable prefix (est./met.)"
    )
    est_sum, met_sum = Tokens(), Tokens()
    usd = 0.0
    for row, d, f in zip(rows, dry, full, strict=True):
        estimate = price_row(d, len(f.episodes), paper_model(row), table)
        metered = _total(f)
        est_sum.add(estimate.total)
        met_sum.add(metered)
        usd += estimate.usd or 0.0
        est_tok = estimate.total.prompt + estimate.total.completion
        met_tok = metered.prompt + metered.completion
        ratio = est_tok / met_tok if met_tok else float("nan")
        print(
            f"{row.id:14} {estimate.total.calls:10,.0f} {metered.calls:10,.0f} "
            f"{est_tok:12,.0f} {met_tok:12,.0f} {ratio:6.2f}  "
            f"{estimate.total.stable_share:.0%} / {metered.stable_share:.0%}"
        )
    est_tok = est_sum.prompt + est_sum.completion
    met_tok = met_sum.prompt + met_sum.completion
    print(
        f"{'total':14} {est_sum.calls:10,.0f} {met_sum.calls:10,.0f} {est_tok:12,.0f} "
        f"{met_tok:12,.0f} {est_tok / met_tok if met_tok else float('nan'):6.2f}"
    )
    print(f"priced at the paper's models ({table.dated}): ${usd:,.2f} for {size} ep/row")


if __name__ == "__main__":
    main()
