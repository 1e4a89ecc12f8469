"""``lorekit laws learn``: an experience from records by the symbolic learner (no model)."""

from __future__ import annotations

import click

from lorekit.cli.errors import UserError
from lorekit.extras import requires_extra


@click.command("learn")
@click.argument("records", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
def learn_cmd(records: str, output: str) -> None:
    """Infer an experience from RECORDS with the symbolic learner (no LLM)."""
    with requires_extra("lorekit laws", "crafter"):
        from lorekit.laws.record_format import RecordError, read_nonempty_records
        from lorekit.laws.symbolic import learn

    try:
        rows = read_nonempty_records(records)
    except RecordError as exc:
        raise UserError(str(exc)) from None
    learn(rows, {"records_file": records}).save(output)
    click.echo(f"laws for {len({r.achievement for r in rows})} achievements -> {output}")
