"""``lorekit automanual build``: AutoManual's building stage, resumable.

The build plays tasks one at a time with the planner, builder and consolidator
(a run in the run store whose episodes carry every rule change); after a kill,
the same command with ``--run-id BUILD`` continues it. :func:`run_build` is the
loop itself, for studies that drive it from Python. ``--from BUILD`` starts a
new build from a copy of a finished one, and ``--library-only`` keeps its rules
as they are (the paper's second MiniWoB++ step: libraries on the 44 task types
without feedback; see :mod:`lorekit.cli.automanual_from`).
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from lorekit.agents.automanual.core import STAGE_ROLES
from lorekit.cli.automanual_from import (
    BuildSourceError,
    inherit,
    open_source,
    same_options,
    source_options,
)
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
from lorekit.envs.base import Task

LIBRARIES = "-libraries"
"""The run id suffix of the library-only pass that ``--libraries-on`` adds."""


def build_plan(
    tasks: Sequence[Task], *, per_type: int, seed: int, shuffle: bool = True
) -> list[Task]:
    """``per_type`` tasks of each task type (in split order), shuffled by ``seed``.

    The paper builds on 6 tasks per type, shuffled; the same seed gives the
    same order on every resume. ``shuffle=False`` keeps the given order (studies
    and tests that need a set curriculum).
    """
    if per_type < 1:
        raise ValueError(f"per_type must be >= 1, got {per_type}")
    by_type: dict[str, list[Task]] = {}
    for task in tasks:
        by_type.setdefault(task.group or "task", []).append(task)
    chosen = [t for group in by_type.values() for t in group[:per_type]]
    if shuffle:
        random.Random(f"automanual-build/{seed}").shuffle(chosen)
    else:
        chosen = [t for t in tasks if t in chosen]
    return chosen


@dataclass(frozen=True, slots=True)
class BuildOutcome:
    run_id: str
    played: int
    skipped: int
    declined: int
    errors: int
    rules: int
    rules_version: int
    retired: tuple[str, ...]
    dropped_on_resume: int
    from_build: str | None = None
    library_only: bool = False
    skills: int = 0
    reflections: int = 0


async def run_build(
    store_path: str | Path,
    *,
    env_name: str,
    env_kwargs: dict[str, Any],
    tasks: Sequence[Task],
    roles: Any,
    run_id: str | None = None,
    variant: str | None = "automanual",
    per_type: int = 6,
    seed: int = 0,
    max_rules: int = 12,
    retire_after: int = 3,
    max_replans: int | None = None,
    retriever: str = "bm25",
    examples: int | None = None,
    config: dict[str, Any] | None = None,
    episode_timeout_s: float | None = 1_800.0,
    retry_errors: bool = False,
    progress: Any = False,
    shuffle: bool = True,
    from_build: str | None = None,
    library_only: bool = False,
) -> BuildOutcome:
    """Play (or resume) a build; everything goes to the run store at ``store_path``.

    ``from_build`` starts from a copy of that finished build's rules, libraries
    and manuals; ``library_only`` (which needs it) never changes the rules, so
    only the skill and reflection libraries grow. ``variant=None`` takes the
    source build's (or ``automanual``). ``examples``: how many of the env
    profile's human examples the planner is shown (default all). Raises
    :class:`BuildSourceError` when the source cannot be started from.
    """
    from lorekit.agents.automanual.build_agent import AutoManualBuildAgent, CommittedEpisode
    from lorekit.envs import EnvSpec
    from lorekit.eval.runner import plan_episodes, run_eval
    from lorekit.eval.store import RunStore, new_run_id

    if library_only and from_build is None:
        raise BuildSourceError("a library-only pass needs the build whose rules it keeps (--from)")
    from lorekit.sandbox import check_os_layer

    check_os_layer()  # the planner runs model-written code: NoOSSandbox before any record
    chosen = build_plan(tasks, per_type=per_type, seed=seed, shuffle=shuffle)
    plan = plan_episodes(chosen, seed=seed)
    rid = run_id or new_run_id()
    source, variant = open_source(
        store_path,
        from_build,
        variant,
        env_name=env_name,
        env_kwargs=env_kwargs,
        plan=[spec.key for spec in plan],
    )
    variant = variant or "automanual"
    agent_name = f"automanual-build:{variant}" + (":library-only" if library_only else "")
    options = {
        "variant": variant,
        "per_type": per_type,
        "max_rules": max_rules,
        "retire_after": retire_after,
        "max_replans": max_replans,
        "retriever": retriever,
    }
    if examples is not None:  # recorded only when set: builds from before it resume
        options["examples"] = examples
    if source is not None:
        options.update(from_build=source.run_id, library_only=library_only)
    with RunStore(store_path) as store:
        rid = store.create_run(
            rid,
            env=env_name,
            agent=agent_name,
            config={
                **(config or {}),
                "automanual": options,
                "env_kwargs": env_kwargs,
                "seed": seed,
                "plan": [t.id for t in chosen],
            },
            meta={"episodes": len(plan)},
        )
        same_options(store, rid, options, seed, [t.id for t in chosen])
        if source is not None:
            inherit(store_path, source, rid)
        agent = AutoManualBuildAgent(
            db_path=str(store_path),
            build_id=rid,
            env_name=env_name,
            variant="planner-lib" if variant == "planner-lib" else "automanual",
            max_rules=max_rules,
            retire_after=retire_after,
            max_replans=max_replans,
            retriever=retriever,
            examples=examples,
            learn_rules=not library_only,
        )
        agent.name = agent_name
        try:
            committed = sorted(store.episodes(rid), key=lambda e: e.index)
            dropped = agent.restore(
                [
                    *(source.committed if source is not None else ()),
                    *(
                        CommittedEpisode(
                            e.episode_key,
                            e.task_group or "task",
                            e.status,
                            dict(e.info.get("notes") or {}),
                        )
                        for e in committed
                    ),
                ]
            )
            rules_before = agent.rules.version
            result = await run_eval(
                store,
                env_factory=EnvSpec(env_name, env_kwargs),
                agent=agent,
                roles=roles,
                episodes=plan,
                run_id=rid,
                env_name=env_name,
                config=config,
                concurrency=1,
                episode_timeout_s=episode_timeout_s,
                retry_errors=retry_errors,
                progress=progress,
                before_episode=lambda spec: agent.should_play(spec.task),
            )
            if library_only and agent.rules.version != rules_before:
                raise RuntimeError(  # a bug: the agent calls no builder then
                    f"library-only build {rid!r} changed its rules (version {rules_before} -> "
                    f"{agent.rules.version})"
                )
            return BuildOutcome(
                rid,
                result.played,
                result.skipped,
                result.declined,
                result.errors,
                len(agent.rules.rules()),
                agent.rules.version,
                tuple(sorted(agent.retired)),
                dropped,
                None if source is None else source.run_id,
                library_only,
                len(agent.libraries.skills()),
                len(agent.libraries.reflections()),
            )
        finally:
            agent.close()


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
@click.option("--max-replans", type=click.IntRange(min=0), default=None)
@click.option(
    "--retriever",
    default="bm25",
    show_default=True,
    help="How a skill of another task type is picked when none of the type exists: "
    "bm25, or embedding:MODEL (an OpenAI-compatible embeddings server, see docs).",
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
    max_replans: int | None,
    retriever: str,
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
        make_retriever(retriever)
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
