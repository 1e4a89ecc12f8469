"""``lorekit automanual build``: AutoManual's building stage from the command line.

Thin: it parses the options, checks models, store and cache before anything
plays, and calls :func:`lorekit.agents.automanual.build.run_build`, which is
the loop itself (resumable: the same command with ``--run-id BUILD`` continues
a killed build). ``--from BUILD`` starts a new build from a copy of a finished
one, ``--library-only`` keeps its rules as they are, and ``--libraries-on
TASKS`` adds that library-only pass in the same command (the paper's two
MiniWoB++ steps).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import click

from lorekit.agents.automanual.build import BuildOutcome, run_build
from lorekit.agents.automanual.build_source import BuildSourceError
from lorekit.agents.automanual.core import STAGE_ROLES
from lorekit.cli.console import console, err_console, show_progress
from lorekit.cli.errors import Interrupted, RunFailed, UserError
from lorekit.cli.options import (
    MAX_RUN_ID,
    HarnessOptions,
    ModelChoice,
    TaskChoice,
    harness_options,
    model_options,
    task_options,
)
from lorekit.cli.prepare import prepare_config, prepare_tasks, with_defaults
from lorekit.cli.sandbox_option import unsafe_sandbox_option
from lorekit.cli.stores import open_store

LIBRARIES = "-libraries"
"""The run id suffix of the library-only pass that ``--libraries-on`` adds."""


def source_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--from BUILD``, ``--library-only`` and ``--libraries-on TASKS`` of ``build``."""
    f = click.option(
        "--libraries-on",
        default=None,
        metavar="TASKS",
        help="Then a library-only pass over this build on TASKS (run id BUILD-libraries): the "
        "paper's two MiniWoB++ steps in one command "
        "(--tasks feedback-9 --libraries-on no-feedback-44).",
    )(f)
    f = click.option(
        "--library-only",
        is_flag=True,
        help="With --from: keep BUILD's rules exactly (no builder, no consolidator); only the "
        "skill and reflection libraries grow (the paper's second MiniWoB++ step).",
    )(f)
    f = click.option(
        "--from",
        "from_build",
        default=None,
        metavar="BUILD",
        help="Start from a copy of this finished build's rules, skills, reflections and manuals "
        "(in the same store; BUILD itself is only read).",
    )(f)
    return f


class ReplansType(click.ParamType[int | str | None]):
    """``--max-replans``: a whole number >= 0, or ``paper``."""

    name = "replans"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from lorekit.agents.automanual.profiles import parse_replans

        try:
            return parse_replans(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


@click.command("build")
@click.argument("env_name", metavar="ENV")
@model_options
@click.option("--per-type", type=click.IntRange(min=1), default=6, show_default=True)
@click.option(
    "--variant",
    type=click.Choice(["automanual", "planner-lib"]),
    default="automanual",
    show_default=True,
    help="planner-lib: the paper's Planner+Lib. baseline (skills only, no rules).",
)
@click.option("--max-rules", type=click.IntRange(min=1), default=12, show_default=True)
@click.option("--retire-after", type=click.IntRange(min=1), default=3, show_default=True)
@click.option(
    "--max-replans",
    type=ReplansType(),
    default=None,
    metavar="N|paper",
    help="Replans per episode (answers: 1 + N); default the env's, as the authors' code "
    "(ALFWorld 2, MiniWoB++ 5); 'paper': the paper's \"at most 3 (6) times\".",
)
@click.option(
    "--retriever",
    default=None,
    help="How a skill of another task type is picked when none of the type exists: "
    "bm25, type (never: only the type's own), or embedding:MODEL (an OpenAI-compatible "
    "embeddings server, see docs); default the env's (alfworld bm25, miniwob type).",
)
@click.option(
    "--examples",
    type=click.IntRange(min=1),
    default=None,
    help="How many of the env profile's human examples the planner is shown, from the "
    "first (default all; miniwob has 4, 1 is the search-engine one alone).",
)
@source_options
@task_options(
    split="dev",
    split_help="Tasks to build on.",
    episodes=False,
    tasks_help="Task list (miniwob: feedback-9, ...).",
)
@harness_options(
    concurrency=None,
    timeout_s=1_800.0,
    timeout_help=None,
    range_checked_timeout=False,
    run_id_help="Name the build; an existing id resumes it.",
)
@unsafe_sandbox_option
def build_cmd(
    env_name: str,
    models: ModelChoice,
    tasks: TaskChoice,
    harness: HarnessOptions,
    per_type: int,
    variant: str,
    max_rules: int,
    retire_after: int,
    max_replans: int | str | None,
    retriever: str | None,
    examples: int | None,
    from_build: str | None,
    library_only: bool,
    libraries_on: str | None,
) -> None:
    """Building stage: play tasks with the planner; the builder keeps the rules.

    Exits 1 when an episode ended in an error (resume with --run-id and --retry-errors)."""
    from lorekit.agents.automanual.profiles import profile_for
    from lorekit.agents.automanual.retrieval import make_retriever
    from lorekit.cli.checks import (
        build_models,
        check_cache,
        check_models,
        check_writable,
    )
    from lorekit.eval.report import render_run
    from lorekit.eval.store import RunMismatchError

    timeout_s, config_path = harness.timeout_s, models.config_path
    if not math.isfinite(timeout_s) or timeout_s <= 0:
        raise UserError(f"--timeout: expected a positive number of seconds, got {timeout_s}")
    if not models.given:
        raise UserError("the build needs models: pass --model (and --base-url) or --config")
    if library_only and from_build is None:
        raise UserError("--library-only: name the build whose rules to keep with --from BUILD")
    given_variant = click.get_current_context().get_parameter_source("variant")
    if libraries_on is not None and len(harness.run_id or "") + len(LIBRARIES) > MAX_RUN_ID:
        raise UserError(
            f"--run-id: at most {MAX_RUN_ID - len(LIBRARIES)} characters with "
            "--libraries-on (the pass is BUILD" + LIBRARIES + ")"
        )
    try:
        profile = profile_for(env_name)
        make_retriever(retriever or profile.retriever)
    except ValueError as exc:
        raise UserError(str(exc).strip("'\"")) from None
    cfg, store_setting = prepare_config(models, cache=harness.cache, store=harness.store)
    check_models(cfg, STAGE_ROLES, owner="automanual build", models=models, cache=False)
    env_opt = with_defaults(tasks.env_opt, dict(profile.env_options))
    env_kwargs, chosen, provenance = prepare_tasks(env_name, env_opt, tasks.tasks, tasks.split)
    second = None
    if libraries_on is not None:
        second = prepare_tasks(env_name, env_opt, libraries_on, tasks.split)
    check_writable(cfg.store, what="run store", setting=store_setting)
    check_cache(cfg, config_path=config_path)
    config = {
        "run": cfg.model_dump(),
        "env": env_name,
        "split": tasks.split,
        "tasks_from": provenance,
        "seed": harness.seed,
    }
    roles = build_models(cfg, config_path=config_path)

    def stage(flag: str, resume_id: str | None, **given: Any) -> BuildOutcome:
        """One build (the second of ``--libraries-on`` too): run it and report it.

        ``flag`` names the option a bad source comes from; ``resume_id`` the run id
        that resumes the whole command."""
        try:
            outcome = asyncio.run(
                run_build(
                    cfg.store,
                    env_name=env_name,
                    roles=roles,
                    per_type=per_type,
                    seed=harness.seed,
                    max_rules=max_rules,
                    retire_after=retire_after,
                    max_replans=max_replans,
                    retriever=retriever,
                    examples=examples,
                    episode_timeout_s=timeout_s,
                    retry_errors=harness.retry_errors,
                    progress=err_console if show_progress(harness.progress) else False,
                    **given,
                )
            )
        except RunMismatchError as exc:
            raise UserError(f"--run-id: {exc}") from None
        except BuildSourceError as exc:
            raise UserError(f"{flag}: {exc}") from None
        except KeyboardInterrupt:
            raise Interrupted(
                f"interrupted; resume with --run-id {resume_id or '<the build id>'}"
            ) from None
        with open_store(str(cfg.store)) as db:
            render_run(db, outcome.run_id, console)
        if outcome.dropped_on_resume:
            err_console.print(
                f"resumed: dropped {outcome.dropped_on_resume} rows of an episode that never "
                "finished"
            )
        console.print(
            f"build: {outcome.run_id}   rules: {outcome.rules} (version {outcome.rules_version})"
            f"   retired types: {', '.join(outcome.retired) or 'none'}   played "
            f"{outcome.played}, skipped {outcome.skipped}, retired-type tasks {outcome.declined}"
        )
        if outcome.from_build is not None:
            kept = "kept as they were" if outcome.library_only else "copied, then built on"
            console.print(
                f"from build {outcome.from_build}: rules {kept}   libraries now: "
                f"{outcome.skills} skills, {outcome.reflections} reflections (task types)"
            )
        return outcome

    outcome = stage(
        "--from",
        harness.run_id,
        env_kwargs=env_kwargs,
        tasks=chosen,
        run_id=harness.run_id,
        variant=None
        if from_build and given_variant is click.core.ParameterSource.DEFAULT
        else variant,
        config=config,
        from_build=from_build,
        library_only=library_only,
    )
    if second is not None and not outcome.errors:
        outcome = stage(
            "--libraries-on",
            outcome.run_id,
            env_kwargs=second[0],
            tasks=second[1],
            run_id=outcome.run_id + LIBRARIES,
            variant=None,
            config={**config, "tasks_from": second[2]},
            from_build=outcome.run_id,
            library_only=True,
        )
    console.print(f"next: lorekit automanual formulate {outcome.run_id} --store {cfg.store}")
    if outcome.errors:
        raise RunFailed(
            f"{outcome.errors} build episodes ended in an error; resume with --run-id "
            f"{outcome.run_id} --retry-errors"
        )
