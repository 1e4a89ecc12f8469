"""``lorekit automanual build/formulate/rules`` and ``lorekit manual export``.

The three stages of AutoManual from the command line: ``build`` plays tasks
one at a time with the planner, builder and consolidator (a run in the run
store whose episodes carry every rule change), ``formulate`` turns the build's
rules into a Markdown manual stored with the build, and testing is a plain
``lorekit run ENV --agent automanual --agent-opt manual=BUILD``. A build is
resumable: run the same command with ``--run-id BUILD`` after a kill.
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
from lorekit.cli_errors import Interrupted, RunFailed, UserError
from lorekit.cli_options import (
    cache_option,
    model_options,
    progress_option,
    retry_errors_option,
    store_option,
)
from lorekit.cli_runs import _open_store, _store_option
from lorekit.envs.base import Task


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


async def run_build(
    store_path: str | Path,
    *,
    env_name: str,
    env_kwargs: dict[str, Any],
    tasks: Sequence[Task],
    roles: Any,
    run_id: str | None = None,
    variant: str = "automanual",
    per_type: int = 6,
    seed: int = 0,
    max_rules: int = 12,
    retire_after: int = 3,
    max_replans: int | None = None,
    retriever: str = "bm25",
    config: dict[str, Any] | None = None,
    episode_timeout_s: float | None = 1_800.0,
    retry_errors: bool = False,
    progress: Any = False,
    shuffle: bool = True,
) -> BuildOutcome:
    """Play (or resume) a build; everything goes to the run store at ``store_path``."""
    from lorekit.agents.automanual.build_agent import AutoManualBuildAgent, CommittedEpisode
    from lorekit.envs import EnvSpec
    from lorekit.eval.runner import plan_episodes, run_eval
    from lorekit.eval.store import RunStore, new_run_id

    chosen = build_plan(tasks, per_type=per_type, seed=seed, shuffle=shuffle)
    plan = plan_episodes(chosen, seed=seed)
    rid = run_id or new_run_id()
    options = {
        "variant": variant,
        "per_type": per_type,
        "max_rules": max_rules,
        "retire_after": retire_after,
        "max_replans": max_replans,
        "retriever": retriever,
    }
    with RunStore(store_path) as store:
        rid = store.create_run(
            rid,
            env=env_name,
            agent=f"automanual-build:{variant}",
            config={
                **(config or {}),
                "automanual": options,
                "env_kwargs": env_kwargs,
                "seed": seed,
                "plan": [t.id for t in chosen],
            },
            meta={"episodes": len(plan)},
        )
        _same_options(store, rid, options, seed, [t.id for t in chosen])
        agent = AutoManualBuildAgent(
            db_path=str(store_path),
            build_id=rid,
            env_name=env_name,
            variant="planner-lib" if variant == "planner-lib" else "automanual",
            max_rules=max_rules,
            retire_after=retire_after,
            max_replans=max_replans,
            retriever=retriever,
        )
        agent.name = f"automanual-build:{variant}"
        try:
            committed = sorted(store.episodes(rid), key=lambda e: e.index)
            dropped = agent.restore(
                CommittedEpisode(
                    e.episode_key,
                    e.task_group or "task",
                    e.status,
                    dict(e.info.get("notes") or {}),
                )
                for e in committed
            )
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
            )
        finally:
            agent.close()


def _same_options(
    store: Any, run_id: str, options: dict[str, Any], seed: int, plan: list[str]
) -> None:
    """A resumed build must be played as it began: same options, seed and task plan.

    Otherwise its rule history would mix two curricula; refuse with what differs.
    """
    from lorekit.eval.store import RunMismatchError

    info = store.get_run(run_id)
    stored = info.config if info is not None else {}
    if "automanual" not in stored:
        return
    now = {**options, "seed": seed}
    before = {**stored["automanual"], "seed": stored.get("seed")}
    changed = [f"{k} {before.get(k)!r} -> {now[k]!r}" for k in now if before.get(k) != now[k]]
    if stored.get("plan") is not None and stored["plan"] != plan:
        changed.append("the task plan (split, tasks or --per-type)")
    if changed:
        raise RunMismatchError(
            f"build {run_id!r} was started with other settings ({'; '.join(changed)}); "
            "resume it with the same ones, or choose another run id"
        )


@click.group()
def automanual() -> None:
    """AutoManual: build rules by playing, formulate a manual, test with it."""


@automanual.command("build")
@click.argument("env_name", metavar="ENV")
@model_options
@click.option("--split", default="dev", show_default=True, help="Tasks to build on.")
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
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--run-id", default=None, help="Name the build; an existing id resumes it.")
@click.option("--timeout", "timeout_s", type=float, default=1_800.0, show_default=True)
@cache_option
@click.option("--env-opt", multiple=True, help="KEY=VALUE passed to the environment.")
@click.option("--tasks", "tasks_opt", default=None, help="Task list (miniwob: feedback-9, ...).")
@retry_errors_option
@progress_option
@store_option
def build_cmd(
    env_name: str,
    config_path: str | None,
    model: str | None,
    base_url: str | None,
    roles_opt: tuple[str, ...],
    request_timeout: float | None,
    split: str,
    per_type: int,
    variant: str,
    max_rules: int,
    retire_after: int,
    max_replans: int | None,
    retriever: str,
    seed: int,
    run_id: str | None,
    timeout_s: float,
    cache: str | None,
    env_opt: tuple[str, ...],
    tasks_opt: str | None,
    retry_errors: bool,
    progress: bool | None,
    store: str | None,
) -> None:
    """Building stage: play tasks with the planner; the builder keeps the rules.

    Exits 1 when an episode ended in an error (resume with --run-id and --retry-errors)."""
    from lorekit.agents.automanual.profiles import profile_for
    from lorekit.agents.automanual.retrieval import make_retriever
    from lorekit.cli import (
        _show_progress,
        console,
        err_console,
        prepare_config,
        prepare_tasks,
        with_defaults,
    )
    from lorekit.cli_checks import (
        build_models,
        check_api_keys,
        check_cache,
        check_roles,
        check_writable,
        role_names,
    )
    from lorekit.eval.report import render_run
    from lorekit.eval.store import RunMismatchError

    if not math.isfinite(timeout_s) or timeout_s <= 0:
        raise UserError(f"--timeout: expected a positive number of seconds, got {timeout_s}")
    if not (model or config_path or roles_opt):
        raise UserError("the build needs models: pass --model (and --base-url) or --config")
    try:
        profile = profile_for(env_name)
        make_retriever(retriever)
    except ValueError as exc:
        raise UserError(str(exc).strip("'\"")) from None
    cfg, store_setting = prepare_config(
        config_path, model, base_url, roles_opt, request_timeout, cache, store
    )
    check_roles(
        cfg,
        STAGE_ROLES,
        owner="automanual build",
        from_flags=role_names(roles_opt),
        config_path=config_path,
    )
    check_api_keys(cfg, config_path=config_path)
    env_opt = with_defaults(env_opt, dict(profile.env_options))
    env_kwargs, tasks, provenance = prepare_tasks(env_name, env_opt, tasks_opt, split)
    check_writable(cfg.store, what="run store", setting=store_setting)
    check_cache(cfg, config_path=config_path)
    config = {
        "run": cfg.model_dump(),
        "env": env_name,
        "split": split,
        "tasks_from": provenance,
        "seed": seed,
    }
    roles = build_models(cfg, config_path=config_path)
    try:
        outcome = asyncio.run(
            run_build(
                cfg.store,
                env_name=env_name,
                env_kwargs=env_kwargs,
                tasks=tasks,
                roles=roles,
                run_id=run_id,
                variant=variant,
                per_type=per_type,
                seed=seed,
                max_rules=max_rules,
                retire_after=retire_after,
                max_replans=max_replans,
                retriever=retriever,
                config=config,
                episode_timeout_s=timeout_s,
                retry_errors=retry_errors,
                progress=err_console if _show_progress(progress) else False,
            )
        )
    except RunMismatchError as exc:
        raise UserError(f"--run-id: {exc}") from None
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted; resume with --run-id {run_id or '<the build id>'}"
        ) from None
    with _open_store(str(cfg.store)) as db:
        render_run(db, outcome.run_id, console)
    if outcome.dropped_on_resume:
        err_console.print(
            f"resumed: dropped {outcome.dropped_on_resume} rows of an episode that never finished"
        )
    console.print(
        f"build: {outcome.run_id}   rules: {outcome.rules} (version {outcome.rules_version})   "
        f"retired types: {', '.join(outcome.retired) or 'none'}   "
        f"played {outcome.played}, skipped {outcome.skipped}, retired-type tasks {outcome.declined}"
    )
    console.print(f"next: lorekit automanual formulate {outcome.run_id} --store {cfg.store}")
    if outcome.errors:
        raise RunFailed(
            f"{outcome.errors} build episodes ended in an error; resume with --run-id "
            f"{outcome.run_id} --retry-errors"
        )


def _build_run(store: str, build: str) -> None:
    """Refuse anything that is not an AutoManual build in ``store``."""
    with _open_store(store) as db:
        info = db.get_run(build)
    if info is None:
        raise UserError(f"BUILD: no run {build!r} in {store} (see `lorekit runs list`)")
    if not info.agent.startswith("automanual-build"):
        raise UserError(
            f"BUILD: run {build!r} is a {info.agent!r} run, not an AutoManual build "
            "(made by `lorekit automanual build`)"
        )


def _world(store: str, build: str) -> str:
    """The build env's title and code API, as the formulator sees the world."""
    from lorekit.agents.automanual.profiles import profile_for

    with _open_store(store) as db:
        info = db.get_run(build)
    try:
        profile = profile_for(info.env if info is not None else "")
    except ValueError:
        return ""
    return f"{profile.title}. The agent's code calls:\n{profile.api_text}"


@automanual.command("formulate")
@click.argument("build", metavar="BUILD")
@model_options
@cache_option
@store_option
def formulate_cmd(
    build: str,
    config_path: str | None,
    model: str | None,
    base_url: str | None,
    roles_opt: tuple[str, ...],
    request_timeout: float | None,
    cache: str | None,
    store: str | None,
) -> None:
    """Formulating stage: group the build's rules into a Markdown manual (role formulator)."""
    from lorekit.agents.automanual.formulator import Formulator, FormulatorError
    from lorekit.agents.automanual.manuals import save_manual
    from lorekit.agents.automanual.rules import RuleSystem
    from lorekit.agents.automanual.store import open_db
    from lorekit.cli import console, prepare_config
    from lorekit.cli_checks import (
        build_models,
        check_api_keys,
        check_cache,
        check_roles,
        role_names,
    )
    from lorekit.eval.store import RunStore
    from lorekit.llm.accounting import UsageLedger

    if not (model or config_path or roles_opt):
        raise UserError("formulating needs a model: pass --model (and --base-url) or --config")
    cfg, _setting = prepare_config(
        config_path, model, base_url, roles_opt, request_timeout, cache, store
    )
    _build_run(str(cfg.store), build)
    check_roles(
        cfg,
        STAGE_ROLES,
        owner="automanual formulate",
        from_flags=role_names(roles_opt),
        config_path=config_path,
    )
    check_api_keys(cfg, config_path=config_path)
    check_cache(cfg, config_path=config_path)
    db = open_db(str(cfg.store))
    try:
        system = RuleSystem(db, build)
        rules = system.rules()
        if not rules:
            raise UserError(
                f"build {build!r} has no rules to formulate (a planner-lib build tests with "
                "its skills alone: `lorekit run ENV --agent automanual --agent-opt manual=BUILD`)"
            )
        with RunStore(cfg.store) as runs:
            roles = build_models(cfg, config_path=config_path).metered(
                UsageLedger(cfg.prices()), lambda record: runs.add_run_llm_call(build, record)
            )
            try:
                formulator = Formulator(roles, world=_world(str(cfg.store), build))
                manual = asyncio.run(formulator.formulate(rules, rules_version=system.version))
            except FormulatorError as exc:
                raise RunFailed(f"the formulator gave no usable manual: {exc}") from None
        version = save_manual(db, build, manual)
    finally:
        db.close()
    console.print(manual.markdown)
    console.print(
        f"manual version {version} of build {build} ({len(rules)} rules, rules version "
        f"{manual.rules_version}); test it with: lorekit run ENV --agent automanual "
        f"--agent-opt manual={build}"
    )


@automanual.command("rules")
@click.argument("build", metavar="BUILD")
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
@_store_option
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
    from lorekit.cli import console

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
@click.argument("build", metavar="BUILD")
@click.option("-o", "--out", "out", required=True, help="Markdown file to write ('-': stdout).")
@_store_option
def export_cmd(build: str, out: str, store: str) -> None:
    """Write the build's latest manual as Markdown."""
    from lorekit.agents.automanual.manuals import latest_manual
    from lorekit.agents.automanual.store import open_db
    from lorekit.cli import console

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
