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
    help="Play N of the experiment's tasks, drawn across its task groups in proportion "
    "(seeded by --seed; a larger N keeps the episodes played). Default: all of them.",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=None,
    help="Runs of each build and row, pooled (default: the experiment's, e.g. AutoManual's "
    "3; one with --simulate).",
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
    repeats: int | None,
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
    a table: the published figure, ours with a 95% interval, the difference with its
    interval, the power to see a 10-point difference, and the verdict (compatible,
    differs, too few episodes; none for a setup that is not the experiment's). Exits 1
    when an episode ended in an error, 3 when it stopped at --max-cost. With --simulate
    (scripted models) or --model local (the bundled small model) the summary says so:
    such a run checks that every row plays, it reproduces nothing."""
    from lorekit.agents import needs_model
    from lorekit.cli.prepare import kv, prepare_config
    from lorekit.cli.reproduce_budget import expect_row, reproduction_guard
    from lorekit.cli.reproduce_build import run_builds
    from lorekit.cli.reproduce_cost import load_table
    from lorekit.cli.reproduce_local import check_local_fit, option_changes, with_agent_opts
    from lorekit.cli.reproduce_rows import (
        harness_for,
        repeat_count,
        row_env_options,
        row_player,
        row_tasks,
    )
    from lorekit.cli.reproduce_save import (
        TaskChooser,
        check_resumes,
        compare_and_save,
        env_setup,
        row_setup,
        setup_changes,
        setup_config,
        store_of,
    )
    from lorekit.cli.run import Played, play
    from lorekit.eval.reproduce import find_experiment
    from lorekit.eval.reproduce_plan import repeat_prefixes
    from lorekit.ids import new_run_id

    exp = _loaded(lambda: find_experiment(experiment))
    if not exp.runnable:
        raise UserError(f"experiment {exp.id!r} cannot run here: {exp.reason}")
    picked = _pick_rows(exp, rows_opt)
    rows = with_agent_opts(picked, agent_opt)
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
    tasks = TaskChoice(split or exp.split, None, (*base_opts, *env_opt), None)
    prefix = harness.run_id or new_run_id()
    prefixes = repeat_prefixes(prefix, repeat_count(exp, repeats, simulate))
    # no verdict for another setup (a split, env option or row option of the command line)
    changes = [*setup_changes(exp, split, env_opt, simulate), *option_changes(picked, rows)]
    setups = {
        f"{pfx}.{r.id}": row_setup(
            exp,
            r,
            tasks.split,
            {**env_setup(exp, env_opt, simulate), **row_env_options(exp, r, env_opt, simulate)},
            simulate,
        )
        for pfx in prefixes
        for r in rows
    }
    check_resumes(store_of(models, harness.store), setups)
    choosers = {
        r.id: TaskChooser(tasks.split, exp.episodes, episodes, harness.seed)
        for r in rows
        if row_player(r.agent) is None  # a row played its own way names its tasks
    }
    played_runs: list[dict[str, Played]] = []
    built_runs: list[dict[str, Any]] = []
    table = load_table(prices)
    guard = reproduction_guard(exp, rows, models, harness, prefixes, max_cost, table)
    for run, pfx in enumerate(prefixes, 1):
        if guard is not None and guard.tripped:
            break  # no later repeat builds once the limit is reached
        played: dict[str, Played] = {}
        played_runs.append(played)
        run_harness = harness_for(harness, run)
        built = run_builds(
            exp, rows, models=models, harness=run_harness, env_opt=tasks.env_opt, prefix=pfx,
            simulate=simulate, resume_id=prefix, budget=guard,
        )  # fmt: skip
        built_runs.append(built)
        for row in rows:
            if guard is not None and guard.tripped:
                break
            if guard is not None:
                expect_row(guard, exp, row, table, models, harness)
            options = {**row.options, **(built[row.build].options if row.build else {})}
            shown = f", run {run} of {len(prefixes)}" if len(prefixes) > 1 else ""
            err_console.print(f"[bold]{exp.id}[/]: row {row.id} ({row.label}){shown}")
            choice = row_tasks(exp, row, tasks.split, None, env_opt, simulate)
            player = row_player(row.agent)
            if player is not None:  # an agent that plays its rows its own way (a team)
                choice = row_tasks(exp, row, tasks.split, episodes, env_opt, simulate)
                played[row.id] = player(
                    exp, row, run_id=f"{pfx}.{row.id}", models=models, harness=run_harness,
                    tasks=choice, simulate=simulate,
                )  # fmt: skip
                continue
            played[row.id] = play(
                exp.env,
                row.agent,
                tuple(f"{k}={_opt_text(v)}" for k, v in row.options.items()),
                models,
                choice,
                dataclasses.replace(run_harness, run_id=f"{pfx}.{row.id}"),
                max_initial_failures,
                backend,
                agent_kwargs=options,
                roles_for=roles_for if needs_model(row.agent) else None,
                before_episode=guard,
                on_episode=None if guard is None else guard.ended,
                wrap_models=None if guard is None else guard.wrap_models,
                price_table=table,
                resume=f"--run-id {prefix}",
                choose_tasks=choosers[row.id],
                extra_config=setup_config(setups[f"{pfx}.{row.id}"]),
            )
        if guard is not None and guard.tripped:
            break
    if guard is not None and guard.tripped:
        from lorekit.cli.reproduce_limit import CostLimitReached

        raise CostLimitReached(guard.message(prefix))
    cfg, _ = prepare_config(models, cache=harness.cache, store=harness.store, prices=table)
    run_ids = [p.run_id for played in played_runs for p in played.values()]
    answered = _answered(exp, rows, cfg, simulate, run_ids)
    builds = [{build: b.run_id for build, b in built.items()} for built in built_runs]
    compare_and_save(
        exp, played_runs[0], cfg, answered, prefix, out, builds=builds[0], choosers=choosers,
        setups=setups, changes=changes, prices=prices, more_runs=played_runs[1:],
        more_builds=builds[1:],
    )  # fmt: skip
    errored = [p for played in played_runs for p in played.values() if p.errored]
    if errored:
        raise RunFailed(errored[0].errored_message())


def _simulation_check(exp: Any, rows: list[Any], models: ModelChoice) -> Any:
    """The scripted models' builder, once every row is known to have some."""
    from lorekit.agents import needs_model
    from lorekit.agents.simulated import simulated_roles, supported

    if models.given or models.base_url:
        raise UserError("--simulate plays with scripted models: drop --model/--role/--config")
    from lorekit.cli.reproduce_rows import row_player

    for row in rows:
        if row_player(row.agent) is not None:
            continue  # it plays its own scripted models
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
    from lorekit.cli.reproduce_rows import check_named, default_rows
    from lorekit.eval.reproduce import ExperimentError

    if rows_opt is None:
        return default_rows(exp)
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
    check_named(picked)
    return picked


def _opt_text(value: Any) -> str:
    """An option value as the ``KEY=VALUE`` text the preparation reads back as YAML."""
    return value if isinstance(value, str) else json.dumps(value)


def _print_builds(exp: Any, rows: list[Any]) -> None:
    """The builds a dry run's rows need first (played before the rows that test with them)."""
    from lorekit.cli.reproduce_build import needed_builds

    needed = needed_builds(exp, rows)
    for b in exp.builds:
        if b.id in needed:
            models = ", ".join(f"{k}={v}" for k, v in b.paper_models.items()) or "-"
            console.print(
                f"first, build {b.id}: {b.variant} on {b.per_type} tasks per type of "
                f"{b.split} (paper's models: {models}), then the rows that test with it"
            )


reproduce.add_command(replay_cmd)
