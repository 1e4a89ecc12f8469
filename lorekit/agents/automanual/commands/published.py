"""``lorekit automanual import-published``: the authors' published run as a build.

The AutoManual authors ship the rules, manual and skills their GPT-4 build
made, so that the testing stage can run without building again. This command
puts one of them into the run store as a finished build (run id
``published-ENV`` unless ``--run-id`` says otherwise), which ``lorekit run ENV
--agent automanual --agent-opt manual=BUILD`` then tests with. The files come
from ``--from PATH`` (a folder holding ``rule_manager.json`` and
``skill_bank.json``, or either file), else from LoreKit's data folder or a
development checkout's ``shared/data``, else from the authors' repository at the
commit ``published.yaml`` names. Every copy is checked against the recorded
sha256; ``--unverified`` imports another run in the same format (your own run
of the authors' code), said to be so. Nothing here is shipped with LoreKit.
"""

from __future__ import annotations

import click

from lorekit.cli.console import console, err_console
from lorekit.cli.errors import UserError
from lorekit.cli.options import check_run_id
from lorekit.cli.stores import default_store


@click.command("import-published")
@click.option(
    "--env",
    "env_name",
    type=click.Choice(["alfworld", "miniwob"]),
    required=True,
    help="Whose published run: ALFWorld's or MiniWoB++'s.",
)
@click.option(
    "--from",
    "from_path",
    type=click.Path(),
    default=None,
    metavar="PATH",
    help="A folder holding rule_manager.json and skill_bank.json (or either file); "
    "default: a copy found here, else the authors' repository.",
)
@click.option(
    "--run-id",
    default=None,
    metavar="ID",
    help="The build's run id (default: published-ENV).",
)
@click.option(
    "--unverified",
    is_flag=True,
    help="Import files whose sha256 is not the published run's (another run in the "
    "authors' format); the build says so.",
)
@click.option(
    "--store",
    default=default_store,
    show_default="$LOREKIT_STORE, the config's, or runs/lorekit.sqlite3",
    help="Run store (SQLite file) to import into.",
)
def import_published_cmd(
    env_name: str, from_path: str | None, run_id: str | None, unverified: bool, store: str
) -> None:
    """Import the AutoManual authors' published rules, manual and skills as a build."""
    from pathlib import Path

    from lorekit.agents.automanual.published import (
        PublishedError,
        fetch_published,
        locate,
        read_published,
        run_files,
    )
    from lorekit.agents.automanual.published_import import import_build

    build_id = run_id or f"published-{env_name}"
    try:
        check_run_id(build_id)  # the same rule as every command that names a new run
    except click.BadParameter as exc:
        raise UserError(f"--run-id: {exc.message}") from None
    try:
        if from_path is not None:
            folder = Path(from_path)
        else:
            found = locate(env_name)
            if found is None:
                err_console.print(
                    f"fetching {env_name}'s published run from the authors' repository"
                )
                found = fetch_published(env_name)
            folder = found
        run = read_published(*run_files(folder))
    except PublishedError as exc:
        raise UserError(str(exc)) from None
    if run.env is not None and run.env != env_name:
        raise UserError(
            f"--from {from_path}: these are the authors' published {run.env} files, "
            f"not {env_name}'s"
        )
    if run.env is None and not unverified:
        raise UserError(
            f"--from {from_path}: not the authors' published {env_name} run (sha256 "
            f"{run.digests['rule_manager.json'][:12]}... differs from the recorded one); "
            "pass --unverified to import another run in their format"
        )
    Path(store).parent.mkdir(parents=True, exist_ok=True)
    try:
        done = import_build(store, build_id, run, env=env_name)
    except ValueError as exc:
        raise UserError(f"--run-id: {exc}") from None
    said = "already imported" if done.already else "imported"
    console.print(f"{said}: {done.source}", markup=False)
    console.print(f"as build {done.build_id} in {Path(store).resolve()}", markup=False)
    where = (
        " --env-opt source=official --env-opt variant=automanual"
        if env_name == "alfworld"
        else " --tasks feedback-9"
    )
    console.print(
        f"test with it: lorekit run {env_name} --agent automanual "
        f"--agent-opt manual={done.build_id}{where}",
        markup=False,
    )
