"""``lorekit report`` and ``lorekit view``: recorded runs as a page a person can read.

Both only read the store (opened read-only). ``report`` writes one HTML file
that needs nothing else to open (no server, no network); ``view`` serves the
same page on 127.0.0.1 and rebuilds it on every reload, for runs in progress.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from lorekit.cli.console import err_console
from lorekit.cli.errors import UserError
from lorekit.cli.options import lookup_run_ids, read_store_option
from lorekit.cli.stores import open_store


def _check_runs(db: object, run_ids: tuple[str, ...], store: str) -> None:
    from lorekit.eval.store import RunStore

    assert isinstance(db, RunStore)
    missing = [r for r in run_ids if db.get_run(r) is None]
    if missing:
        known = ", ".join(r.run_id for r in db.list_runs()[:5]) or "none"
        raise UserError(
            f"RUN: no run {missing[0]!r} in {store} (recent runs: {known}; see `lorekit runs list`)"
        )


def _reproductions(files: tuple[Path, ...], store: Path, run_ids: tuple[str, ...]) -> list[Any]:
    """The saved comparisons to draw: those named, else those found beside the store."""
    from lorekit.eval.report_html_reproduce import comparisons_for, load_comparisons

    if not files:
        return comparisons_for(store.parent / "reproduce", run_ids)
    records = load_comparisons(files)
    found = {r["path"] for r in records}
    for path in files:
        if str(path) not in found:
            raise UserError(
                f"--reproduce: {path} is not a comparison saved by `lorekit reproduce run`"
            )
    return records


_max_episodes = click.option(
    "--max-episodes",
    type=click.IntRange(min=0),
    default=None,
    help="Embed at most N episodes per run for paging (the figures use all). Default: all.",
)
_rl_dir = click.option(
    "--rl-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="For `laws train` runs: the OUT/<reward> folder with seed-*/progress.csv "
    "(default: the folder the run recorded).",
)


@click.command("report")
@click.argument(
    "run_ids", metavar="RUN [RUN ...]", nargs=-1, required=True, callback=lookup_run_ids
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("report.html"),
    show_default=True,
    help="HTML file to write.",
)
@read_store_option
@_max_episodes
@_rl_dir
@click.option("--title", default="LoreKit report", show_default=True)
@click.option(
    "--reproduce",
    "reproduce_files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A comparison saved by `reproduce run` (JSON) to draw beside the paper's figures "
    "(default: those in reproduce/ beside the store whose rows' runs are among RUNs).",
)
def report_cmd(
    run_ids: tuple[str, ...],
    output: Path,
    store: str,
    max_episodes: int | None,
    rl_dir: Path | None,
    title: str,
    reproduce_files: tuple[Path, ...],
) -> None:
    """Write one self-contained HTML file comparing RUNs, with their episodes to page through."""
    from lorekit.eval.report_html import build_report

    records = _reproductions(reproduce_files, Path(store), run_ids)
    with open_store(store) as db:
        _check_runs(db, run_ids, store)
        page = build_report(
            db,
            run_ids,
            max_episodes=max_episodes,
            rl_dir=rl_dir,
            title=title,
            reproductions=records,
        )
    try:
        output.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"--output: cannot write {output}: {exc.strerror or exc}") from None
    err_console.print(f"wrote {output} ({len(page.encode()) / 1e6:.1f} MB)", highlight=False)


@click.command("view")
@click.argument(
    "run_ids", metavar="RUN [RUN ...]", nargs=-1, required=True, callback=lookup_run_ids
)
@read_store_option
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free port).",
)
@_max_episodes
@_rl_dir
def view_cmd(
    run_ids: tuple[str, ...], store: str, port: int, max_episodes: int | None, rl_dir: Path | None
) -> None:
    """Serve the report of RUNs on 127.0.0.1, read-only; the page refreshes itself as
    episodes arrive."""
    from lorekit.eval.report_html_serve import ReportServer

    with open_store(store) as db:
        _check_runs(db, run_ids, store)
    try:
        server = ReportServer(
            Path(store), run_ids, port=port, max_episodes=max_episodes, rl_dir=rl_dir
        )
    except OSError as exc:
        raise UserError(
            f"--port: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc} "
            "(pass another --port, or 0 for any free one)"
        ) from None
    try:  # built now, and kept for the first reload: a damaged row fails here, in one line
        server.cache.get()
    except BaseException:
        server.server_close()
        raise
    err_console.print(
        f"serving {', '.join(run_ids)} at {server.url} (read-only; Ctrl-C to stop)",
        highlight=False,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
