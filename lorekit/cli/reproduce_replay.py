"""``lorekit reproduce replay FILE``: play a published result file through LoreKit.

The file's format is found by the registered replay readers (``lorekit plugins``
lists them); the replay is stored as a run (``lorekit show``, ``lorekit report``)
and its comparison, the published figure beside the replayed one per task group
with every divergence counted by class, is printed and saved as JSON and
Markdown (see :mod:`lorekit.eval.replay`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from lorekit.cli.console import console, err_console
from lorekit.cli.errors import UserError


def _readers() -> list[Any]:
    from lorekit.registry import REGISTRY

    return [entry.load() for entry in REGISTRY.entries("replay")]


def pick_reader(path: Path, data: object, name: str | None) -> Any:
    """The reader named ``name``, or the one that claims ``data``; a clear error otherwise."""
    readers = _readers()
    if name is not None:
        for reader in readers:
            if reader.name == name:
                return reader
        known = ", ".join(r.name for r in readers) or "(none)"
        raise UserError(f"--format: unknown replay format {name!r}; known: {known}")
    for reader in readers:
        if reader.claims(data):
            return reader
    known = ", ".join(r.name for r in readers) or "(none)"
    raise UserError(f"{path}: no replay reader recognises this file (readers: {known})")


@click.command("replay")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "format_name", default=None, help="Reader name (default: detected).")
@click.option("--tasks", "tasks_opt", default=None, help="Task ids to replay, comma-separated.")
@click.option("--env-opt", multiple=True, help="KEY=VALUE over the reader's env options.")
@click.option("--episodes", "-n", type=click.IntRange(min=1), default=None, help="First N only.")
@click.option("--run-id", default=None, help="Name the replay's run; an existing id resumes it.")
@click.option("--store", default=None, help="Run store (default: as `lorekit run`).")
@click.option("-j", "concurrency", type=click.IntRange(min=1), default=4, show_default=True)
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for the table.")
@click.option(
    "--progress/--no-progress", default=None, help="A progress bar (default: on a terminal)."
)
@click.option("--show", "show_n", type=click.IntRange(min=0), default=5, show_default=True,
              help="Print the divergences (other than gaps) of this many episodes.")  # fmt: skip
def replay_cmd(
    file: Path,
    format_name: str | None,
    tasks_opt: str | None,
    env_opt: tuple[str, ...],
    episodes: int | None,
    run_id: str | None,
    store: str | None,
    concurrency: int,
    out: str | None,
    progress: bool | None,
    show_n: int,
) -> None:
    """Replay a published result FILE: LoreKit's agent and env, the record's model outputs.

    Each model call is answered with the recorded output at that point of the record;
    LoreKit's env answers the actions. Prints the published figure beside the replayed
    one per task group, with the divergences by class, and where the record has gaps
    what the replay did there."""
    from lorekit.cli.console import show_progress
    from lorekit.cli.options import ModelChoice
    from lorekit.cli.prepare import kv, prepare_config
    from lorekit.eval.replay import KINDS, ReplayError, markdown, replay, save
    from lorekit.eval.store import RunStore
    from lorekit.ids import new_run_id

    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{file}: cannot read JSON ({exc})") from None
    reader = pick_reader(file, data, format_name)
    options = kv(env_opt, "--env-opt")
    try:
        source = reader.open(file, env_options=options) if options else reader.open(file)
        tasks = source.tasks()
    except (ReplayError, ValueError, OSError, TypeError) as exc:
        raise UserError(f"{file.name}: {exc}") from None
    if tasks_opt:
        wanted = [t.strip() for t in tasks_opt.split(",") if t.strip()]
        unknown = sorted(set(wanted) - {t.id for t in tasks})
        if unknown:
            raise UserError(f"--tasks: not in {file.name}: {', '.join(unknown)}")
        tasks = [t for t in tasks if t.id in set(wanted)]
    tasks = tasks[:episodes] if episodes else tasks
    cfg, _ = prepare_config(ModelChoice(), store=store)
    rid = run_id or new_run_id()
    with RunStore(cfg.store) as db:
        result = asyncio.run(
            replay(
                source, db, run_id=rid, tasks=tasks, concurrency=concurrency,
                progress=err_console if show_progress(progress) else False,
            )
        )  # fmt: skip
    _print(source, result, show_n, KINDS)
    folder = Path(out) if out else Path(cfg.store).parent / "replay"
    record = {
        "file": str(file),
        "reader": reader.name,
        "run": result.run_id,
        "replay": source.describe(),
        "rows": [r.cells() for r in result.rows],
        "limits": list(source.limits),
        "episodes": result.summaries,
    }
    saved = save(
        folder,
        f"{file.stem}-{result.run_id}",
        record,
        markdown(source.title, result.rows, source.limits),
    )
    console.print(f"run: {result.run_id} (lorekit show {result.run_id} EPISODE)   saved: {saved}")


def _print(source: Any, result: Any, show_n: int, kinds: Mapping[str, str]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from lorekit.eval.replay import HEADERS
    from lorekit.tables import fit_table

    table = Table(*HEADERS, title=f"Replay: {source.title}")
    for row in result.rows:
        table.add_row(*(escape(c) for c in row.cells()))
    fit_table(console, table)
    console.print(table)
    for line in source.limits:
        console.print(f"- {escape(line)}", highlight=False)
    shown = 0
    for task_id, summary in result.summaries.items():
        found = [d for d in summary.get("divergences") or [] if d.get("kind") not in ("gap",)]
        if not found or shown >= show_n:
            continue
        shown += 1
        record = escape(str(summary.get("record")))
        console.print(f"[bold]{escape(task_id)}[/] ({record}): {len(found)} divergence(s)")
        for d in found[:5]:
            text = (
                f"  call {d['call']} {d['role']} ({d['kind']}): record has {d['recorded']!r}; "
                f"LoreKit: {d['asked']!r}"
            )
            console.print(escape(text), highlight=False)
    used = sorted(
        {d["kind"] for s in result.summaries.values() for d in s.get("divergences") or []}
    )
    for kind in used:
        console.print(f"[dim]{escape(kind)}: {escape(kinds.get(kind, ''))}[/]")
