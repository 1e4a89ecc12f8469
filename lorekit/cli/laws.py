"""``lorekit laws``: collect records, learn laws without an LLM, score laws.

Other parts of issue 15 attach their commands to the :func:`laws` group.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from lorekit.cli.errors import UserError
from lorekit.cli.options import SEED
from lorekit.extras import requires_extra

MAX_QUOTA = 1_000
"""Records per achievement: the paper keeps 10; more than this is a typo."""
MAX_STEPS = 100_000_000
"""Engine steps of one collection (hours of work); more is a typo."""


@click.group()
def laws() -> None:
    """Laws of crafter from interaction records: collect, learn, score."""


@laws.command("collect")
@click.option(
    "--successes",
    type=click.IntRange(1, MAX_QUOTA),
    default=10,
    show_default=True,
    help="Successes per achievement.",
)
@click.option(
    "--failures",
    type=click.IntRange(0, MAX_QUOTA),
    default=10,
    show_default=True,
    help="Failures per achievement.",
)
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option(
    "--max-steps",
    type=click.IntRange(1, MAX_STEPS),
    default=200_000,
    show_default=True,
    help="Engine step budget.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
def collect_cmd(successes: int, failures: int, seed: int, max_steps: int, output: str) -> None:
    """Play seeded crafter episodes and write the paper's records (JSONL)."""
    with requires_extra("lorekit laws", "crafter"):
        from lorekit.laws.records import collect_records, write_records

    from lorekit.progress import stderr_progress

    with stderr_progress("engine steps") as progress:
        got = collect_records(
            successes=successes,
            failures=failures,
            seed=seed,
            max_steps=max_steps,
            progress=progress,
        )
    count = write_records(got.records, output)
    short = got.short(successes, failures)
    click.echo(f"{count} records from {got.steps} steps ({got.episodes} episodes) -> {output}")
    if short:
        click.echo(f"short of quota after {max_steps} steps: {', '.join(short)}", err=True)


@laws.command("learn")
@click.argument("records", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
def learn_cmd(records: str, output: str) -> None:
    """Infer an experience from RECORDS with the symbolic learner (no LLM)."""
    with requires_extra("lorekit laws", "crafter"):
        from lorekit.laws.records import RecordError, read_records
        from lorekit.laws.symbolic import learn

    from lorekit.cli.laws_extract import no_records

    try:
        rows = read_records(records)
    except RecordError as exc:
        raise UserError(str(exc)) from None
    if not rows:
        raise UserError(no_records(records))
    learn(rows, {"records_file": records}).save(output)
    click.echo(f"laws for {len({r.achievement for r in rows})} achievements -> {output}")


@laws.command("score")
@click.argument("experience", type=click.Path(dir_okay=False))
@click.option("--records", type=click.Path(dir_okay=False), help="Records: adds revealable recall.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Also write JSON here.")
def score_cmd(experience: str, records: str | None, json_out: str | None) -> None:
    """Compare EXPERIENCE (JSON) with crafter's true laws."""
    with requires_extra("lorekit laws", "crafter"):
        from lorekit.laws.experience import Experience, ExperienceError
        from lorekit.laws.records import RecordError, read_records
        from lorekit.laws.score import score

    try:
        result = score(Experience.load(experience), read_records(records) if records else None)
    except (ExperienceError, RecordError) as exc:
        raise UserError(str(exc)) from None
    table = Table(title=f"laws of {experience} vs crafter")
    cols = ("achievement", "precision", "recall", "revealed", "costs", "gains", "missing", "extra")
    for col in cols:
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
    from lorekit.cli.console import console
    from lorekit.tables import fit_table, say_left_out

    keep = ("achievement", "precision", "recall", "revealed", "costs", "gains")
    say_left_out(console, fit_table(console, table, keep=keep))
    console.print(table)
    click.echo("totals: " + json.dumps(result.totals()))
    if json_out:
        Path(json_out).write_text(json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")


def _attach() -> None:
    """The commands that live next to their part of the method."""
    from lorekit.cli.laws_extract import extract
    from lorekit.cli.laws_rewards import rewards_cmd
    from lorekit.cli.laws_spring import scores
    from lorekit.cli.laws_train import train

    laws.add_command(extract)
    laws.add_command(rewards_cmd)
    laws.add_command(scores)
    laws.add_command(train)


_attach()
