"""``lorekit laws scores RUN...``: Crafter score and reward of runs, side by side.

The laws paper's Table 1 compares SPRING under three contexts; run each with
``lorekit run crafter --agent spring --agent-opt context=...`` (the same tasks
and seeds), then put the runs in one table. Works for any Crafter run: the
figures come from the crafter env's run summary
(:func:`lorekit.envs.crafter.runs.crafter_run_score`, which the HTML report
draws too); only the command, whose place is Table 1's workflow, lives here.
"""

from __future__ import annotations

import click
from rich.table import Table

from lorekit.cli.console import console
from lorekit.cli.errors import UserError
from lorekit.cli.options import lookup_run_ids, read_store_option
from lorekit.cli.stores import open_store
from lorekit.tables import fit_table


@click.command("scores")
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN...", callback=lookup_run_ids)
@read_store_option
def scores(run_ids: tuple[str, ...], store: str) -> None:
    """Crafter score (geometric mean of success rates) and reward per run."""
    from lorekit.envs.crafter.runs import crafter_run_score

    table = Table(
        "run", "agent + context", "episodes", "score %", "reward", "unlocked", title="Crafter"
    )
    with open_store(store) as db:
        for run_id in run_ids:
            try:
                s = crafter_run_score(db, run_id)
            except (LookupError, ValueError) as exc:
                raise UserError(str(exc)) from None
            episodes = f"{s.episodes}" + (f" (+{s.errors} errors)" if s.errors else "")
            unlocked = ", ".join(s.unlocked[:6]) + (" ..." if len(s.unlocked) > 6 else "")
            table.add_row(
                s.run_id,
                s.label,
                episodes,
                f"{s.score:.1f}",
                f"{s.reward:.2f} ± {s.reward_se:.2f}",
                unlocked or "none",
            )
    fit_table(console, table, keep=("run", "episodes", "score %", "reward"))
    console.print(table)
