"""``lorekit laws collect``: play seeded crafter episodes and write law records."""

from __future__ import annotations

import click

from lorekit.cli.options import SEED
from lorekit.extras import requires_extra

MAX_QUOTA = 1_000
"""Records per achievement: the paper keeps 10; more than this is a typo."""
MAX_STEPS = 100_000_000
"""Engine steps of one collection (hours of work); more is a typo."""


@click.command("collect")
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
