"""``lorekit laws score``: an experience beside crafter's true laws, as a table."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from lorekit.cli.errors import UserError
from lorekit.extras import requires_extra

COLUMNS = ("achievement", "precision", "recall", "revealed", "costs", "gains", "missing", "extra")
KEPT = ("achievement", "precision", "recall", "revealed", "costs", "gains")
"""The columns a narrow terminal keeps (the rest are named as left out)."""


@click.command("score")
@click.argument("experience", type=click.Path(dir_okay=False))
@click.option("--records", type=click.Path(dir_okay=False), help="Records: adds revealable recall.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Also write JSON here.")
def score_cmd(experience: str, records: str | None, json_out: str | None) -> None:
    """Compare EXPERIENCE (JSON) with crafter's true laws."""
    with requires_extra("lorekit laws", "crafter"):
        from lorekit.laws.experience import Experience, ExperienceError
        from lorekit.laws.records import RecordError, read_records
        from lorekit.laws.score import score

    from lorekit.cli.console import console
    from lorekit.tables import fit_table, say_left_out

    try:
        result = score(Experience.load(experience), read_records(records) if records else None)
    except (ExperienceError, RecordError) as exc:
        raise UserError(str(exc)) from None
    table = Table(title=f"laws of {experience} vs crafter")
    for col in COLUMNS:
        table.add_column(col)
    for row in result.rows:
        shown = "-" if row.revealable is None else f"{row.revealed}/{row.revealable}"
        table.add_row(
            row.achievement,
            f"{row.precision:.2f}",
            f"{row.recall:.2f}",
            shown,
            "ok" if row.costs_ok else "wrong",
            "ok" if row.gains_ok else "wrong",
            ", ".join(row.missing),
            ", ".join(row.extra),
        )
    say_left_out(console, fit_table(console, table, keep=KEPT))
    console.print(table)
    click.echo("totals: " + json.dumps(result.totals()))
    if json_out:
        Path(json_out).write_text(json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")
