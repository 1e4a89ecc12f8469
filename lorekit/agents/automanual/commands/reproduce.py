"""AutoManual's stage before ``lorekit reproduce``'s rows: building, then formulating.

An experiment names its builds (``builds:`` in its file: the variant, the split
built on, tasks per type); a row that tests with one names it (``build:``).
The reproduce command knows no method: it finds this function through the
``build`` entry of the ``automanual`` agent's registration (the variants it
makes are in ``build_variants``) and calls it once per build its chosen rows
need, with the run id ``RUN_ID.build-ID``. The build plays through
:func:`~lorekit.agents.automanual.build.run_build` (so a build of that id is
resumed, not replayed), an ``automanual`` build's manual is formulated once,
and the rows get ``manual=RUN_ID.build-ID``. A build may name its own env
options (the task set it builds on), how many human examples the planner sees,
and an earlier build it starts from, keeping that build's rules
(``library_only``: the second step of the paper's MiniWoB++ build). With
``--simulate`` the build's four roles are the scripted AutoManual models, and
the experiment's ``simulate:`` may shorten it (``per_type``; ``types``: only the
first N task types of its set, the build's run recording how many its whole set
has, ``task_types``, which the dry run prices). A
``published`` build plays nothing: it is the authors' own published run of the
experiment's env, found or fetched (checked by sha256) and imported as that
run, so the rows test with the manual and skills the paper's GPT-4 build made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from lorekit.cli.console import err_console, show_progress
from lorekit.cli.errors import RunFailed, UserError
from lorekit.cli.options import HarnessOptions, ModelChoice
from lorekit.cli.prepare import prepare_config, prepare_tasks, with_defaults
from lorekit.cli.reproduce_rows import option_text


def reproduce_build(
    exp: Any,
    build: Any,
    *,
    run_id: str,
    resume_id: str,
    models: ModelChoice,
    harness: HarnessOptions,
    env_opt: Sequence[str],
    simulate: bool,
    budget: Any = None,
) -> dict[str, Any]:
    """Play (or resume) ``build`` of experiment ``exp`` as run ``run_id``, formulate
    its manual, and return the agent options of the rows that test with it.
    ``resume_id`` is the ``--run-id`` that resumes the whole reproduction; ``budget``
    (``--max-cost``'s guard) bounds every call of the build and the formulation, and
    once it stops the work nothing more is played or formulated (the caller exits 3)."""
    from lorekit.agents.automanual.build import run_build
    from lorekit.agents.automanual.formulate import formulate_build
    from lorekit.agents.automanual.formulator import FormulatorError
    from lorekit.agents.automanual.profiles import profile_for
    from lorekit.agents.simulated import simulated_roles
    from lorekit.cli.checks import build_models
    from lorekit.llm.budget import SpendLimitReached

    cfg, _ = prepare_config(models, cache=harness.cache, store=harness.store)
    if build.variant == "published":
        return _published(exp, build, run_id, str(cfg.store))
    try:
        profile = profile_for(exp.env)
    except ValueError as exc:
        raise UserError(f"experiment {exp.id!r}: {exc}") from None
    per_type = (exp.simulate_per_type if simulate else None) or build.per_type
    err_console.print(
        f"[bold]{exp.id}[/]: build {build.id} ({build.variant}, {per_type} per type "
        f"on {build.split}) as run {run_id}"
    )
    own = tuple(f"{k}={option_text(v)}" for k, v in build.env_options.items())
    options = with_defaults((*env_opt, *own), dict(profile.env_options))  # its task set
    env_kwargs, tasks, provenance = prepare_tasks(exp.env, options, None, build.split)
    tasks, whole = first_types(tasks, build.types)  # the build as the file sets it
    types = (exp.simulate_types if simulate else None) or build.types
    tasks, _ = first_types(tasks, types)
    source = None  # the second step of a two-step build starts from the first
    if build.from_build is not None:
        source = f"{run_id.rpartition('.build-')[0]}.build-{build.from_build}"
    roles = (
        simulated_roles(exp.env, env_kwargs, "automanual")
        if simulate
        else build_models(cfg, config_path=models.config_path)
    )
    if budget is not None:
        roles = budget.wrap_models(roles)
    outcome = asyncio.run(
        run_build(
            cfg.store,
            env_name=exp.env,
            env_kwargs=env_kwargs,
            tasks=tasks,
            roles=roles,
            run_id=run_id,
            variant=build.variant,
            per_type=per_type,
            seed=harness.seed,
            config={
                "experiment": exp.id,
                "tasks_from": provenance,
                "simulated": simulate,
                "task_types": whole,
            },
            episode_timeout_s=harness.timeout_s,
            retry_errors=harness.retry_errors,
            progress=err_console if show_progress(harness.progress) else False,
            examples=build.examples,
            from_build=source,
            library_only=build.library_only,
        )
    )
    if budget is not None and budget.tripped:
        return {"manual": run_id}  # stopped at --max-cost: the caller says so and exits 3
    if outcome.errors:
        raise RunFailed(
            f"build {run_id}: {outcome.errors} episodes ended in an error; resume it with "
            f"--run-id {resume_id} --retry-errors"
        )
    if build.variant == "automanual":
        done = formulate_build(cfg.store, run_id, roles, prices=cfg.prices(), keep_existing=True)
        try:  # once: a resumed reproduction keeps the manual it formulated
            asyncio.run(done)
        except SpendLimitReached:  # --max-cost: the caller says so and exits 3
            return {"manual": run_id}
        except FormulatorError as exc:
            if budget is not None and budget.tripped:
                return {"manual": run_id}
            raise RunFailed(
                f"build {run_id}: the formulator gave no usable manual: {exc}"
            ) from None
    return {"manual": run_id}


def first_types(tasks: Sequence[Any], types: int | None) -> tuple[list[Any], int]:
    """The tasks of the first ``types`` task types (groups, in task order; None: all)
    and how many types ``tasks`` has in all."""
    groups = list(dict.fromkeys(t.group for t in tasks))
    kept = set(groups if types is None else groups[:types])
    return [t for t in tasks if t.group in kept], len(groups)


def _published(exp: Any, build: Any, run_id: str, store: str) -> dict[str, Any]:
    """The authors' published run of ``exp.env`` as run ``run_id`` (imported once)."""
    from lorekit.agents.automanual.published import (
        PublishedError,
        fetch_published,
        locate,
        read_published,
        run_files,
    )
    from lorekit.agents.automanual.published_import import import_build

    try:
        folder = locate(exp.env)
        if folder is None:
            err_console.print(f"fetching {exp.env}'s published AutoManual run")
            folder = fetch_published(exp.env)
        run = read_published(*run_files(folder))
        done = import_build(store, run_id, run, env=exp.env)
    except (PublishedError, ValueError) as exc:
        raise UserError(f"experiment {exp.id!r}, build {build.id}: {exc}") from None
    said = "already imported" if done.already else "imported"
    err_console.print(
        f"[bold]{exp.id}[/]: build {build.id} is {done.source}; {said} as run {run_id}",
        highlight=False,
    )
    return {"manual": run_id}
