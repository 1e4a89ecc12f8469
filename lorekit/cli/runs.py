"""``lorekit runs list/show/export`` and ``lorekit show``: read recorded runs.

These commands only read: they open the store read-only, so inspecting a run
never changes the file, even while another process is still writing it.
"""

from __future__ import annotations

import sys

import click
from rich.table import Table

from lorekit.cli.console import console, err_console
from lorekit.cli.errors import UserError
from lorekit.cli.options import read_store_option
from lorekit.cli.stores import open_store
from lorekit.tables import fit_table


@click.group()
def runs() -> None:
    """Inspect recorded runs."""


@runs.command("list")
@read_store_option
def runs_list(store: str) -> None:
    """List runs, newest first."""
    with open_store(store) as db:
        rows = db.list_runs()
        table = Table("run", "created", "env", "agent", "status", "episodes", "success")
        for r in rows:
            eps = db.episodes(r.run_id)
            ok = sum(e.success for e in eps)
            rate = f"{ok / len(eps):.1%}" if eps else "-"
            table.add_row(
                r.run_id, _when(r.created_at), r.env, r.agent, r.status, str(len(eps)), rate
            )
    if not rows:
        console.print(f"no runs in {store}")
        return
    fit_table(console, table, keep=("run", "episodes", "success"), drop=("created",))
    console.print(table)


@runs.command("show")
@click.argument("run_id")
@read_store_option
def runs_show(run_id: str, store: str) -> None:
    """Summary of one run: episodes, success, usage by role."""
    from lorekit.eval.report import render_run

    with open_store(store) as db:
        if db.get_run(run_id) is None:
            raise UserError(f"RUN: no run {run_id!r} in {store} (see `lorekit runs list`)")
        render_run(db, run_id, console)


@runs.command("export")
@click.argument("run_id")
@read_store_option
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="File to write (default: standard output).",
)
def runs_export(run_id: str, store: str, output: str | None) -> None:
    """Export a run as JSON lines: the run, then one line per episode."""
    with open_store(store) as db:
        if db.get_run(run_id) is None:
            raise UserError(f"RUN: no run {run_id!r} in {store} (see `lorekit runs list`)")
        if output is None:
            db.export_jsonl(run_id, sys.stdout)
            return
        try:
            with open(output, "w", encoding="utf-8") as fh:
                n = db.export_jsonl(run_id, fh)
        except OSError as exc:
            raise UserError(f"--output: cannot write {output}: {exc.strerror or exc}") from None
    err_console.print(f"wrote {n} lines to {output}")


def _when(ts: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


@click.command("show")
@click.argument("run_id", metavar="RUN")
@click.argument("episode", metavar="[EPISODE]", required=False)
@read_store_option
def show_cmd(run_id: str, episode: str | None, store: str) -> None:
    """Print one episode: steps, model calls, and an agent's own record
    (e.g. ADaPT's decomposition tree, a team's timeline). EPISODE is an index,
    key or task id; it may be left out when the run has one episode."""
    from lorekit.eval.show import render_episode

    with open_store(store) as db:
        if db.get_run(run_id) is None:
            raise UserError(f"RUN: no run {run_id!r} in {store} (see `lorekit runs list`)")
        if episode is None:
            keys = [e.episode_key for e in db.episodes(run_id)]
            if len(keys) != 1:
                listed = ", ".join(keys[:5]) + (", ..." if len(keys) > 5 else "")
                raise UserError(
                    f"EPISODE: run {run_id!r} has {len(keys)} episodes; name one "
                    f"(an index, key or task id{': ' + listed if keys else ''})"
                )
            episode = keys[0]
        try:
            render_episode(db, run_id, episode, console)
        except LookupError as exc:
            raise UserError(f"EPISODE: {str(exc).strip(chr(39))}") from None
