"""``lorekit textcraft``: the data ADaPT's TextCraft needs, fetched on request."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from lorekit.cli.errors import RunFailed, UserError


@click.group()
def textcraft() -> None:
    """TextCraft's optional data."""


@textcraft.command("fetch-data")
@click.option(
    "--dest",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Install here (default: $LOREKIT_DATA/textcraft-recipes-1.16.5, else "
    "~/.local/share/lorekit/textcraft-recipes-1.16.5).",
)
@click.option(
    "--from",
    "from_path",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Copy from a local folder of the recipe files (or a clone of minecraft-assets) "
    "instead of downloading.",
)
@click.option(
    "--url",
    default=None,
    help="Base URL of the recipe files (default: $LOREKIT_TEXTCRAFT_DATAPACK_URL, else "
    "the 1.16.5 branch of InventivetalentDev/minecraft-assets on GitHub).",
)
def fetch_data(dest: Path | None, from_path: Path | None, url: str | None) -> None:
    """Get Minecraft 1.16.5's recipe files for ADaPT's TextCraft (compat mode).

    Every file is checked against the sha256 sums shipped with LoreKit before
    anything is installed."""
    from lorekit.envs.textcraft.datapack import (
        DATAPACK_ENV_VAR,
        SOURCE,
        DataPackError,
        DownloadError,
        default_dest,
        install,
    )

    if from_path is not None and url is not None:
        raise UserError("give one of --from and --url")
    target = dest or default_dest()
    where = f"--from {from_path}" if from_path else (url or SOURCE)
    blocker = next((p for p in (target, *target.parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        raise UserError(f"--dest {target}: {blocker} is a file, not a folder")
    show = sys.stderr.isatty()
    if show:  # a note for a person watching; a log gets the result line only
        click.echo(f"fetching 860 recipe files from {where} into {target}", err=True)

    def progress(done: int, total: int) -> None:
        if show:
            click.echo(f"\r{done}/{total} files checked", err=True, nl=done == total)

    try:
        path = install(target, url=url, from_path=from_path, progress=progress)
    except DownloadError as exc:
        raise RunFailed(
            f"{exc}; without network, copy the files from a folder that has them: "
            "lorekit textcraft fetch-data --from PATH (a clone of InventivetalentDev/"
            "minecraft-assets at branch 1.16.5, or its data/minecraft/recipes folder; "
            "every file is checked the same way)"
        ) from None
    except DataPackError as exc:
        raise RunFailed(str(exc)) from None
    except OSError as exc:
        raise UserError(f"{target}: {exc.strerror or exc}") from None
    click.echo(f"installed: {path}")
    if dest is not None and dest != default_dest():
        click.echo(f"point ${DATAPACK_ENV_VAR} at it: export {DATAPACK_ENV_VAR}={path}")
