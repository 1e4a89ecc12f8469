"""``lorekit reproduce``: a paper's table as one command, our figures beside the published.

The tables are data (:mod:`lorekit.experiments`, read by
:mod:`lorekit.eval.reproduce`); each row plays as one ``lorekit run`` would
(:func:`lorekit.cli.run.play`: the same checks, store, cache, resume and
backends), named ``RUN_ID.ROW`` so that rerunning with the same ``--run-id``
resumes every row. The comparison is printed and saved as JSON and Markdown.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click

from lorekit.cli.console import console, err_console
from lorekit.cli.errors import RunFailed, UserError
from lorekit.cli.options import (
    BackendChoice,
    HarnessOptions,
    ModelChoice,
    TaskChoice,
    backend_options,
    harness_options,
    model_options,
)
from lorekit.cli.reproduce_replay import replay_cmd
from lorekit.cli.sandbox_option import unsafe_sandbox_option


@click.group("reproduce")
def reproduce() -> None:
    """Rerun a paper's table with your model; see ours beside the published figures."""


_prices_option = click.option(
    "--prices",
    type=click.Path(dir_okay=False),
    default=None,
    help="A price table (YAML, USD per million tokens) over the dated default.",
)


@reproduce.command("list")
@_prices_option
def list_cmd(prices: str | None) -> None:
    """The experiments: paper and table, env, the paper's models, and our cost estimate."""
    from lorekit.cli.reproduce_cost import listed_estimate, load_table
    from lorekit.eval.reproduce import load_all

    table = load_table(prices)
    rows = []
    for exp in _loaded(load_all):
        models = sorted({m for r in exp.rows for m in r.paper_models.values()})
        if exp.runnable:
            state = f"yes ({len(exp.runnable_rows)}/{len(exp.rows)} rows)"
            text = listed_estimate(exp, table)
        else:
            state, text = f"no: {exp.reason}", "-"
        rows.append(
            [
                exp.id,
                f"{exp.paper}, {exp.source}",
                f"{exp.env} {exp.split}",
                ", ".join(models),
                state,
                text,
            ]
        )
    headers = ["experiment", "paper", "env", "paper's models", "runnable", "our estimate"]
    _print_table(headers, rows)
    from lorekit.envs.alfworld.variants import installed  # files only: no extra needed

    for line in installed():  # which official games source=official would play
        console.print(f"ALFWorld data: {line}", highlight=False, soft_wrap=True)
    console.print(
        "estimates: what `reproduce run EXPERIMENT --dry-run` measured (~ a model like the "
        "paper's, from a perfect model to one that wanders to its budget; docs/reproduce.md); "
        f"{table.dated}"
    )


def _print_table(headers: list[str], rows: list[list[str]]) -> None:
    """A table that fits the terminal without cutting a cell short."""
    from rich.table import Table

    from lorekit.tables import fit_table

    table = Table(*headers)
    for row in rows:
        table.add_row(*row)
    fit_table(console, table)
    console.print(table)


def _loaded(load: Any) -> Any:
    from lorekit.eval.reproduce import ExperimentError

    try:
        return load()
    except ExperimentError as exc:
        raise UserError(str(exc)) from None


@reproduce.command("run")
@click.argument("experiment")
@click.option(
    "--rows", "rows_opt", default=None, help="Row ids, comma-separated (default: all runnable)."
)
@click.option(
    "--episodes",
    "-n",
    type=click.IntRange(min=1),
    default=None,
    help="Play the first N tasks of the split (default: the experiment's).",
)
@click.option("--split", default=None, help="Another split than the experiment's.")
@click.option("--env-opt", multiple=True, help="KEY=VALUE over the experiment's env options.")
@click.option(
    "--agent-opt",
    multiple=True,
    help="KEY=VALUE over the options of every row whose agent takes KEY "
    "(e.g. max_turns=20 to fit a small model's context).",
)
@model_options
@harness_options(
    concurrency=8,
    timeout_s=600.0,
    run_id_help="Name the reproduction (rows run as RUN_ID.ROW); an existing id resumes it.",
)
@click.option(
    "--max-initial-failures",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Stop a row when its first N episodes all fail with the same error (0: never).",
)
@backend_options
@click.option(
    "--simulate",
    is_flag=True,
    help="Play every row with scripted models (offline; a check, not a reproduction).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Play a few scripted episodes per row (one per task group; no model, no store) "
    "and print the measured calls, tokens, stable prompt prefix and priced estimate.",
)
@_prices_option
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Stop (exit 3) once the spend the store records for this reproduction reaches "
    "USD; resume with the same --run-id and a higher limit.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder for the saved comparison (default: reproduce/ beside the run store).",
)
@unsafe_sandbox_option
def run_cmd(
    experiment: str,
    rows_opt: str | None,
    episodes: int | None,
    split: str | None,
    env_opt: tuple[str, ...],
    agent_opt: tuple[str, ...],
    models: ModelChoice,
    harness: HarnessOptions,
    max_initial_failures: int,
    backend: BackendChoice,
    simulate: bool,
    dry_run: bool,
    prices: str | None,
    max_cost: float | None,
    out: str | None,
) -> None:
    """Play each row of EXPERIMENT (an id from `reproduce list`, or a YAML file) and print
    a table: the published figure, ours with a 95% interval, the difference, and whether
    they are compatible. Exits 1 when an episode ended in an error, 3 when it
    stopped at --max-cost. With --simulate (scripted models) or --model local (the
    bundled small model) the summary says so: such a run checks that every row
    plays, it reproduces nothing."""
    from lorekit.agents import needs_model
    from lorekit.cli.prepare import kv, prepare_config
    from lorekit.cli.reproduce_budget import expect_row, reproduction_guard
    from lorekit.cli.reproduce_build import run_builds
    from lorekit.cli.reproduce_cost import load_table
    from lorekit.cli.reproduce_local import check_local_fit, with_agent_opts
    from lorekit.cli.run import Played, play
    from lorekit.eval.reproduce import find_experiment
    from lorekit.ids import new_run_id

    exp = _loaded(lambda: find_experiment(experiment))
    if not exp.runnable:
        raise UserError(f"experiment {exp.id!r} cannot run here: {exp.reason}")
    rows = with_agent_opts(_pick_rows(exp, rows_opt), agent_opt)
    _check_row_options(exp, rows)
    n = episodes or exp.episodes
    if dry_run:
        from lorekit.cli.reproduce_cost import load_table, print_dry_run

        given = prepare_config(models)[0] if models.given else None
        _print_builds(exp, rows)
        print_dry_run(exp, rows, n, split or exp.split, load_table(prices), given)
        return
    # what can be told before any row plays: malformed options, a missing model
    kv(env_opt, "--env-opt")
    check_local_fit(exp, rows, models, n or 1)
    wanting = [r.agent for r in rows if needs_model(r.agent)]
    roles_for = _simulation_check(exp, rows, models) if simulate else None
    if wanting and not models.given and not simulate:
        raise UserError(
            f"rows with {', '.join(dict.fromkeys(wanting))} need a model: "
            "pass --model (and --base-url) or --config"
        )
    env_options = {**exp.env_options, **(exp.simulate_env_options if simulate else {})}
    base_opts = tuple(f"{k}={_opt_text(v)}" for k, v in env_options.items())
    tasks = TaskChoice(split or exp.split, n, (*base_opts, *env_opt), None)
    prefix = harness.run_id or new_run_id()
    table = load_table(prices)
    guard = reproduction_guard(exp, rows, models, harness, prefix, max_cost, table)
    built = run_builds(
        exp, rows, models=models, harness=harness, env_opt=tasks.env_opt, prefix=prefix,
        simulate=simulate, budget=guard,
    )  # fmt: skip
    played: dict[str, Played] = {}
    for row in rows:
        if guard is not None and guard.tripped:
            break
        if guard is not None:
            expect_row(guard, exp, row, table, models, harness)
        options = {**row.options, **(built[row.build].options if row.build else {})}
        err_console.print(f"[bold]{exp.id}[/]: row {row.id} ({row.label})")
        played[row.id] = play(
            exp.env,
            row.agent,
            tuple(f"{k}={_opt_text(v)}" for k, v in row.options.items()),
            models,
            tasks,
            dataclasses.replace(harness, run_id=f"{prefix}.{row.id}"),
            max_initial_failures,
            backend,
            agent_kwargs=options,
            roles_for=roles_for if needs_model(row.agent) else None,
            before_episode=guard,
            on_episode=None if guard is None else guard.ended,
            wrap_models=None if guard is None else guard.wrap_models,
            price_table=table,
            resume=f"--run-id {prefix}",
        )
    if guard is not None and guard.tripped:
        from lorekit.cli.reproduce_cost import CostLimitReached

        raise CostLimitReached(guard.message(prefix))
    cfg, _ = prepare_config(models, cache=harness.cache, store=harness.store, prices=table)
    answered = _answered(exp, rows, cfg, simulate, [p.run_id for p in played.values()])
    runs = {build: b.run_id for build, b in built.items()}
    _compare_and_save(exp, played, cfg.store, answered, prefix, out, runs)
    errored = [p for p in played.values() if p.errored]
    if errored:
        raise RunFailed(errored[0].errored_message())


def _simulation_check(exp: Any, rows: list[Any], models: ModelChoice) -> Any:
    """The scripted models' builder, once every row is known to have some."""
    from lorekit.agents import needs_model
    from lorekit.agents.simulated import simulated_roles, supported

    if models.given or models.base_url:
        raise UserError("--simulate plays with scripted models: drop --model/--role/--config")
    for row in rows:
        if needs_model(row.agent) and not supported(exp.env, row.agent):
            raise UserError(
                f"--simulate: no scripted models for row {row.id!r} "
                f"(agent {row.agent!r} on env {exp.env!r})"
            )
    return simulated_roles


def _answered(exp: Any, rows: list[Any], cfg: Any, simulate: bool, run_ids: list[str]) -> Any:
    from lorekit.agents import needs_model
    from lorekit.agents.simulated import describe
    from lorekit.cli.reproduce_models import from_config, simulated
    from lorekit.eval.store import RunStore

    if simulate and any(needs_model(r.agent) for r in rows):
        return simulated({r.id: describe(exp.env, r.agent) for r in rows if needs_model(r.agent)})
    with RunStore.open_readonly(cfg.store) as db:
        answered = db.models_answered(run_ids)
    return from_config(cfg, [needs_model(r.agent) for r in rows], answered)


def _check_row_options(exp: Any, rows: list[Any]) -> None:
    """Each row's ``options`` against the annotated parameters of its agent, before
    anything plays: a wrong type is one line naming the file, the row and the option
    (``options.max_turns: expected an integer, got 'many'``), not a Python error
    from inside the agent, the dry run or a run."""
    from lorekit.cli.typed import agent_factory, check_options

    for row in rows:
        factory = agent_factory(row.agent)
        if factory is None:
            raise UserError(f"{exp.path.name}: row {row.id!r}: unknown agent {row.agent!r}")
        raw = {k: _opt_text(v) for k, v in row.options.items()}
        check_options(
            factory, dict(row.options), raw, flag=f"{exp.path.name}: row {row.id!r}: options."
        )


def _pick_rows(exp: Any, rows_opt: str | None) -> list[Any]:
    from lorekit.eval.reproduce import ExperimentError

    if rows_opt is None:
        return list(exp.runnable_rows)
    picked = []
    for name in (r.strip() for r in rows_opt.split(",") if r.strip()):
        try:
            row = exp.row(name)
        except ExperimentError as exc:
            raise UserError(f"--rows: {exc}") from None
        if not row.runnable:
            raise UserError(f"--rows: row {name!r} cannot run here: {row.reason}")
        picked.append(row)
    if not picked:
        raise UserError("--rows: name at least one row")
    return picked


def _opt_text(value: Any) -> str:
    """An option value as the ``KEY=VALUE`` text the preparation reads back as YAML."""
    return value if isinstance(value, str) else json.dumps(value)


def _print_builds(exp: Any, rows: list[Any]) -> None:
    """The builds a dry run's rows need first (played before the rows that test with them)."""
    for b in exp.builds:
        if any(r.build == b.id for r in rows):
            models = ", ".join(f"{k}={v}" for k, v in b.paper_models.items()) or "-"
            console.print(
                f"first, build {b.id}: {b.variant} on {b.per_type} tasks per type of "
                f"{b.split} (paper's models: {models}), then the rows that test with it"
            )


def _compare_and_save(
    exp: Any,
    played: dict[str, Any],
    store: str,
    answered: Any,
    prefix: str,
    out: str | None,
    builds: dict[str, str] | None = None,
) -> None:
    from lorekit.eval.reproduce_compare import HEADERS, cell_texts, compare, markdown, recorded
    from lorekit.eval.store import RunStore

    with RunStore(store) as db:
        episodes = {row: recorded(db, p.run_id, exp) for row, p in played.items()}
    cells = compare(exp, episodes, {row: p.run_id for row, p in played.items()})
    console.print(f"{exp.paper}, {exp.source}; {answered.line()}")
    _print_table(HEADERS, [answered.marked(cell_texts(c)) for c in cells])
    if not answered.reproduction and answered.kind != "none":
        console.print(f"[bold]{answered.line()}[/]")
    folder = Path(out) if out else Path(store).parent / "reproduce"
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"{exp.id}-{prefix}"
    record = {
        "experiment": exp.id,
        "paper": exp.paper,
        "source": exp.source,
        "title": exp.title,
        "spread_kind": exp.spread_kind,
        "models": answered.text,
        "answered_by": answered.kind,
        "reproduction": answered.reproduction,
        "runs": {row: p.run_id for row, p in played.items()},
        "builds": builds or {},
        "cells": [c.to_dict() for c in cells],
    }
    Path(f"{stem}.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
    Path(f"{stem}.md").write_text(
        markdown(exp, cells, answered.line().removeprefix("models that answered here: ")),
        encoding="utf-8",
    )
    console.print(f"saved: {stem}.md and .json")


reproduce.add_command(replay_cmd)
