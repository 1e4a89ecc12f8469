"""``lorekit laws scores RUN...``: Crafter score and reward of runs, side by side.

The laws paper's Table 1 compares SPRING under three contexts; run each with
``lorekit run crafter --agent spring --agent-opt context=...`` (the same tasks
and seeds), then put the runs in one table. Works for any Crafter run.

Attach with ``laws.add_command(scores)`` in :mod:`lorekit.cli_laws`.
"""

from __future__ import annotations

import click
from rich.table import Table

from lorekit.cli_errors import UserError
from lorekit.cli_runs import _console, _open_store, _store_option
from lorekit.eval.tables import fit_table


@click.command("scores")
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN...")
@_store_option
def scores(run_ids: tuple[str, ...], store: str) -> None:
    """Crafter score (geometric mean of success rates) and reward per run."""
    from lorekit.eval.crafter_runs import crafter_run_score

    table = Table(
        "run", "agent + context", "episodes", "score %", "reward", "unlocked", title="Crafter"
    )
    with _open_store(store) as db:
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
    fit_table(_console(), table, keep=("run", "episodes", "score %", "reward"))
    _console().print(table)
