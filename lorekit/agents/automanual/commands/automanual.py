"""``lorekit automanual build/formulate/rules`` and ``lorekit manual export``.

The three stages of AutoManual from the command line (and ``import-published``,
the authors' own build as one: :mod:`.published`): ``build`` plays tasks
one at a time with the planner, builder and consolidator (a run in the run
store whose episodes carry every rule change), ``formulate`` turns the build's
rules into a Markdown manual stored with the build, and testing is a plain
``lorekit run ENV --agent automanual --agent-opt manual=BUILD``. A build is
resumable: run the same command with ``--run-id BUILD`` after a kill. The
commands are thin: the stages are library calls
(:func:`~lorekit.agents.automanual.build.run_build`,
:func:`~lorekit.agents.automanual.formulate.formulate_build`); the build
command is in :mod:`.build`. AutoManual's plugin registers both groups.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from lorekit.agents.automanual.commands.build import build_cmd
from lorekit.agents.automanual.commands.published import import_published_cmd
from lorekit.agents.automanual.core import STAGE_ROLES
from lorekit.cli.console import console
from lorekit.cli.errors import RunFailed, UserError
from lorekit.cli.options import (
    ModelChoice,
    cache_option,
    lookup_run_ids,
    model_options,
    read_store_option,
    store_option,
)
from lorekit.cli.prepare import prepare_config
from lorekit.cli.stores import open_store


@click.group()
def automanual() -> None:
    """AutoManual: build rules by playing, formulate a manual, test with it."""


automanual.add_command(build_cmd)
automanual.add_command(import_published_cmd)


def _build_run(store: str, build: str) -> None:
    """Refuse anything that is not an AutoManual build in ``store``."""
    from lorekit.agents.automanual.build_source import not_a_build

    with open_store(store) as db:
        info = db.get_run(build)
    problem = not_a_build(info, build, store)
    if problem:
        raise UserError(f"BUILD: {problem}")


@automanual.command("formulate")
@click.argument("build", metavar="BUILD", callback=lookup_run_ids)
@model_options
@cache_option
@store_option
def formulate_cmd(
    build: str,
    models: ModelChoice,
    cache: str | None,
    store: str | None,
) -> None:
    """Formulating stage: group the build's rules into a Markdown manual (role formulator)."""
    from lorekit.agents.automanual.formulate import formulate_build
    from lorekit.agents.automanual.formulator import FormulatorError
    from lorekit.cli.checks import build_models, check_models

    if not models.given:
        raise UserError("formulating needs a model: pass --model (and --base-url) or --config")
    cfg, _setting = prepare_config(models, cache=cache, store=store)
    _build_run(str(cfg.store), build)
    check_models(cfg, STAGE_ROLES, owner="automanual formulate", models=models)
    try:
        done = asyncio.run(
            formulate_build(
                cfg.store,
                build,
                lambda: build_models(cfg, config_path=models.config_path),
                prices=cfg.prices(),
            )
        )
    except FormulatorError as exc:
        raise RunFailed(f"the formulator gave no usable manual: {exc}") from None
    if done is None:
        raise UserError(
            f"build {build!r} has no rules to formulate (a planner-lib build tests with "
            "its skills alone: `lorekit run ENV --agent automanual --agent-opt manual=BUILD`)"
        )
    console.print(done.manual.markdown)
    console.print(
        f"manual version {done.version} of build {build} ({done.rules} rules, rules version "
        f"{done.manual.rules_version}); test it with: lorekit run ENV --agent automanual "
        f"--agent-opt manual={build}"
    )


@automanual.command("rules")
@click.argument("build", metavar="BUILD", callback=lookup_run_ids)
@click.option(
    "--at",
    "at_version",
    type=click.IntRange(min=0),
    default=None,
    help="Show the rules as they were at this version.",
)
@click.option(
    "--diff",
    nargs=2,
    type=click.IntRange(min=0),
    default=None,
    metavar="A B",
    help="What changed between two versions.",
)
@click.option("--history", is_flag=True, help="Every change: version, episode, actor, rule.")
@click.option(
    "--restore",
    "restore_to",
    type=click.IntRange(min=0),
    default=None,
    help="Make the rules what they were at this version (recorded as new changes).",
)
@read_store_option
def rules_cmd(
    build: str,
    at_version: int | None,
    diff: tuple[int, int] | None,
    history: bool,
    restore_to: int | None,
    store: str,
) -> None:
    """Show a build's rules, their history, a diff between versions, or restore a version."""
    from lorekit.agents.automanual.rules import RuleSystem
    from lorekit.agents.automanual.store import open_db

    _build_run(store, build)
    db = open_db(store)
    try:
        system = RuleSystem(db, build)
        top = system.version
        for flag, value in (("--at", at_version), ("--restore", restore_to)):
            if value is not None and value > top:
                raise UserError(f"{flag}: build {build!r} has versions 0..{top}, not {value}")
        if diff is not None and max(diff) > top:
            raise UserError(f"--diff: build {build!r} has versions 0..{top}, not {max(diff)}")
        if restore_to is not None:
            from lorekit.eval.store import RunStore

            with RunStore(store) as runs:
                runs.lock_run(build)  # never under a build that is still writing its rules
                system.begin(None, succeeded=None, actor="user")
                system.restore(restore_to)
            console.print(f"restored version {restore_to}; now at version {system.version}")
        elif diff is not None:
            console.print(system.diff(*diff).render())
        elif history:
            for event in system.history():
                console.print(
                    f"v{event.version:<4} {event.op:<8} {event.rule_id:<8} by {event.actor:<12} "
                    f"episode {event.episode_id or '-'}",
                    markup=False,
                )
        else:
            shown = system.rules_at(at_version) if at_version is not None else system.rules()
            version = at_version if at_version is not None else top
            console.print(f"build {build}: {len(shown)} rules at version {version}", markup=False)
            for rule in shown:
                console.print(f"\n{rule.rule_id} ({rule.type.value}): {rule.content}", markup=False)
                if rule.example:
                    console.print(rule.example, markup=False)
    finally:
        db.close()


@click.group()
def manual() -> None:
    """Manuals written by AutoManual builds."""


@manual.command("export")
@click.argument("build", metavar="BUILD", callback=lookup_run_ids)
@click.option("-o", "--out", "out", required=True, help="Markdown file to write ('-': stdout).")
@read_store_option
def export_cmd(build: str, out: str, store: str) -> None:
    """Write the build's latest manual as Markdown."""
    from lorekit.agents.automanual.manuals import latest_manual
    from lorekit.agents.automanual.store import open_db

    _build_run(store, build)
    db = open_db(store)
    try:
        found = latest_manual(db, build)
    finally:
        db.close()
    if found is None:
        raise UserError(
            f"build {build!r} has no manual yet; run `lorekit automanual formulate {build}`"
        )
    if out == "-":
        click.echo(found.markdown)
        return
    try:
        Path(out).write_text(
            found.markdown if found.markdown.endswith("\n") else found.markdown + "\n",
            encoding="utf-8",
        )
    except OSError as exc:
        raise UserError(f"--out: cannot write {out}: {exc.strerror or exc}") from None
    console.print(f"wrote {out}")
