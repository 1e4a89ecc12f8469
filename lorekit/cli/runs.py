"""``lorekit runs list/show/export`` and ``lorekit show``: read recorded runs.

These commands only read: they open the store read-only, so inspecting a run
never changes the file, even while another process is still writing it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.table import Table

from lorekit.cli.console import console, err_console
from lorekit.cli.errors import UserError
from lorekit.cli.options import lookup_run_ids, read_store_option
from lorekit.cli.stores import open_store
from lorekit.tables import fit_table
from lorekit.textsafe import safe_json


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
                r.run_id,
                _when(r.created_at),
                r.env,
                r.agent,
                db.run_status(r.run_id, r.status),
                str(len(eps)),
                rate,
            )
    if not rows:
        console.print(f"no runs in {store}")
        return
    fit_table(console, table, keep=("run", "episodes", "success"), drop=("created",))
    console.print(table)


@runs.command("show")
@click.argument("run_id", callback=lookup_run_ids)
@read_store_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the summary as JSON: the run, success by group, usage by role, "
    "and the env's own figures (Crafter's score).",
)
def runs_show(run_id: str, store: str, as_json: bool) -> None:
    """Summary of one run: episodes, success, usage by role."""
    from lorekit.eval.report import render_run

    with open_store(store) as db:
        if db.get_run(run_id) is None:
            raise UserError(f"RUN: no run {run_id!r} in {store} (see `lorekit runs list`)")
        if as_json:
            click.echo(safe_json(json.dumps(_summary_json(db, run_id), ensure_ascii=False)))
            return
        render_run(db, run_id, console)


def _summary_json(db: Any, run_id: str) -> dict[str, Any]:
    """``runs show --json``: what ``runs show`` prints, as data a script can read."""
    from lorekit.eval.report import env_summary, run_summary, stop_reasons

    run = db.get_run(run_id)
    episodes = db.episodes(run_id)
    env_figures = env_summary(db, run.env, run_id)
    return {
        "run": {**run.to_dict(), "status": db.run_status(run_id, run.status)},
        **run_summary(db, run_id),
        "episodes": len(episodes),
        "stop_reasons": stop_reasons(episodes),
        "env_summary": env_figures["figures"] if env_figures else None,
    }


@runs.command("rm")
@click.argument("run_ids", metavar="RUN...", nargs=-1, required=True, callback=lookup_run_ids)
@read_store_option
@click.option("--yes", "-y", is_flag=True, help="Remove without asking.")
def runs_rm(run_ids: tuple[str, ...], store: str, yes: bool) -> None:
    """Remove runs from the store: each run with its episodes, steps and model calls.

    Asks first unless --yes; without a terminal to ask on, --yes is required."""
    import sys

    from lorekit.eval.store import RunStore, StoreError

    with open_store(store) as db:
        missing = [r for r in run_ids if not db.has_run(r)]  # a damaged run can go too
        if missing:
            raise UserError(f"RUN: no run {missing[0]!r} in {store} (see `lorekit runs list`)")
        counts = {r: db.episode_count(r) for r in dict.fromkeys(run_ids)}  # damaged ones too
    listed = ", ".join(f"{r} ({n} episodes)" for r, n in counts.items())
    if not yes:
        if not sys.stdin.isatty():
            raise UserError(f"runs rm: pass --yes to remove {listed} (no terminal to ask on)")
        if not click.confirm(f"remove {listed} from {store}?", default=False, err=True):
            raise UserError("runs rm: nothing removed")
    try:
        with RunStore(store) as db:
            for run_id in counts:
                db.delete_run(run_id)
    except StoreError as exc:
        raise UserError(f"--store: {exc}") from None
    err_console.print(f"removed {listed} from {store}")


@runs.command("export")
@click.argument("run_id", callback=lookup_run_ids)
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
@click.argument("run_id", metavar="RUN", callback=lookup_run_ids)
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
