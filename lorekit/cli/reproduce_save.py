"""``reproduce run``'s tasks, setups and verdict: what each row plays, that a resumed row
plays what it played before, and the comparison printed and saved with all of it.

The saved JSON is the record a reader trusts or not: it names the split, every
env and agent option each row ran with, the tasks played (and how they were
drawn), what each row spent, the rule behind each verdict, and whether the
whole is a reproduction at all (real models, the experiment's setup, all its
tasks). A run whose setup is not the experiment's keeps its figures and gets
no verdict; a run id whose stored setup is not the one asked for is refused
before anything plays.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lorekit.cli.console import console
from lorekit.cli.errors import UserError
from lorekit.eval.reproduce_sample import TaskPlan, plan_tasks
from lorekit.eval.reproduce_setup import (
    SETUP_KEY,
    Setup,
    changed_options,
    differences,
    from_experiment,
)


class TaskChooser:
    """``play``'s ``choose_tasks`` for one row: the experiment's tasks, or ``n`` of them
    drawn across the task groups (:func:`lorekit.eval.reproduce_sample.plan_tasks`);
    keeps the plan and the episode keys it makes for the comparison."""

    def __init__(self, split: str, experiment_episodes: int | None, n: int | None, seed: int):
        self.split, self.experiment_episodes, self.n, self.seed = (
            split,
            experiment_episodes,
            n,
            seed,
        )
        self.plan: TaskPlan | None = None
        self.keys: set[str] = set()

    def __call__(self, tasks: list[Any]) -> list[Any]:
        from lorekit.eval.runner import plan_episodes

        chosen, self.plan = plan_tasks(
            tasks,
            self.split,
            experiment_episodes=self.experiment_episodes,
            n=self.n,
            seed=self.seed,
        )
        self.keys = {spec.key for spec in plan_episodes(chosen, seed=self.seed)}
        return chosen


def _env_default(env: str) -> Callable[[str], Any]:
    """The env's own default of an option (``inspect.Parameter.empty`` for none known)."""
    from lorekit.cli.prepare import env_factory

    factory = env_factory(env)
    params = inspect.signature(factory).parameters if factory is not None else {}

    def default(key: str) -> Any:
        return params[key].default if key in params else inspect.Parameter.empty

    return default


def _theirs(exp: Any, simulate: bool) -> dict[str, Any]:
    return {**exp.env_options, **(exp.simulate_env_options if simulate else {})}


def setup_changes(exp: Any, split: str | None, env_opt: Sequence[str], simulate: bool) -> list[str]:
    """How ``--split`` and ``--env-opt`` change the experiment's setup (one phrase each)."""
    from lorekit.cli.prepare import kv

    given = kv(env_opt, "--env-opt")
    return from_experiment(exp.split, _theirs(exp, simulate), split, given, _env_default(exp.env))


def env_setup(exp: Any, env_opt: Sequence[str], simulate: bool) -> dict[str, Any]:
    """The env options a row's setup records: the experiment's, and those ``--env-opt``
    changes (one that gives an option its env default changes nothing)."""
    from lorekit.cli.prepare import kv

    theirs = _theirs(exp, simulate)
    given = kv(env_opt, "--env-opt")
    return {**theirs, **changed_options(theirs, given, _env_default(exp.env))}


def row_setup(
    exp: Any, row: Any, split: str, env_options: Mapping[str, Any], simulate: bool
) -> Setup:
    return Setup(exp.id, row.id, row.agent, split, dict(env_options), dict(row.options), simulate)


def store_of(models: Any, store_flag: str | None) -> str:
    """The run store a command will use, found without starting anything (the bundled
    model's server starts when a row first needs it)."""
    from lorekit.cli.stores import pick_store
    from lorekit.config import RunConfig, load_config

    cfg = load_config(models.config_path) if models.config_path else RunConfig()
    return pick_store(store_flag, cfg, models.config_path)[0]


def check_resumes(store: str, setups: Mapping[str, Setup]) -> None:
    """Refuse, in one line and before anything plays, a run id whose stored run of a row
    was played with another setup (``setups``: run id -> the setup asked for now)."""
    from lorekit.eval.store import RunStore, StoreError

    if not Path(store).is_file():
        return
    try:
        with RunStore.open_readonly(store) as db:
            stored = {
                rid: run.config
                for rid in setups
                if db.has_run(rid) and (run := db.get_run(rid)) is not None
            }
    except StoreError:
        return  # the run itself reports a damaged store, naming it
    for rid, config in stored.items():
        changed = differences(config, setups[rid])
        if changed:
            raise UserError(
                f"--run-id: run {rid} was played with another setup ({'; '.join(changed)}): "
                "its episodes are no measure of this one; resume it with its own options or "
                "choose another --run-id"
            )


def setup_config(setup: Setup) -> dict[str, Any]:
    """What a row's run stores with its config (read back by :func:`check_resumes`)."""
    return {SETUP_KEY: setup.to_dict()}


def compare_and_save(
    exp: Any,
    played: Mapping[str, Any],
    cfg: Any,
    answered: Any,
    prefix: str,
    out: str | None,
    *,
    builds: Mapping[str, str],
    choosers: Mapping[str, TaskChooser],
    setups: Mapping[str, Setup],
    changes: Sequence[str],
    prices: str | None,
    more_runs: Sequence[Mapping[str, Any]] = (),
    more_builds: Sequence[Mapping[str, str]] = (),
) -> None:
    """Compare the rows played with the paper's figures; print the table and save it
    as JSON and Markdown with the tasks, setup, spend and verdict rule of each row.
    ``more_runs`` (and their ``more_builds``) are a repeated experiment's later runs:
    their episodes are pooled with the first run's, each run's figure is kept
    (:mod:`lorekit.cli.reproduce_rows`)."""
    from lorekit.cli.reproduce_cost import load_table
    from lorekit.cli.reproduce_rows import (
        paper_n_of_runs,
        per_run_figures,
        priced_cells,
        runs_lines,
    )
    from lorekit.eval.reproduce_compare import (
        HEADERS,
        VERDICT_RULE,
        cell_texts,
        compare,
        markdown,
        recorded,
    )
    from lorekit.eval.reproduce_plan import pooled
    from lorekit.eval.store import RunStore

    store = str(cfg.store)
    plan = next((c.plan for c in choosers.values() if c.plan is not None), None)
    all_runs = [played, *more_runs]
    with RunStore(store) as db:
        per_run = [
            {
                row: recorded(db, p.run_id, exp, choosers[row].keys if row in choosers else None)
                for row, p in run.items()
            }
            for run in all_runs
        ]
        rows = {row: _row_record(db, exp, row, p, choosers, setups, cfg, prices)
                for row, p in played.items()}  # fmt: skip
        compared = not changes
        cells = compare(
            exp,
            pooled(per_run),
            {row: p.run_id for row, p in played.items()},
            paper_n=paper_n_of_runs(exp, plan.paper_n if plan is not None else None),
            compared=compared,
        )
        ids = {row: [run[row].run_id for run in all_runs if row in run] for row in played}
        cells = priced_cells(exp, cells, db, ids, load_table(prices))
    why_not = _why_not(answered, changes, plan, rows)
    notes = [plan.describe(compared=compared)] if plan is not None else []
    if changes:
        notes.append(
            "not compared with the paper: the setup differs from the experiment's: "
            + "; ".join(changes)
        )
    partial = f"NOT a reproduction: {'; '.join(why_not)}" if answered.reproduction else ""
    console.print(f"{exp.paper}, {exp.source}; {answered.line()}", highlight=False)
    for note in notes:
        console.print(note, highlight=False, soft_wrap=True)
    _print_table(HEADERS, [answered.marked(cell_texts(c)) for c in cells])
    if not answered.reproduction and answered.kind != "none":
        console.print(f"[bold]{answered.line()}[/]")
    if partial and why_not:
        console.print(f"[bold]{partial}[/]", highlight=False)
        notes.append(partial)
    figures = per_run_figures(exp, per_run) if more_runs else {}
    for line in runs_lines(figures):
        console.print(line, highlight=False)
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
        "reproduction": answered.reproduction and not why_not,
        "why_not": why_not,
        "compared": compared,
        "setup_differs": list(changes),
        "setup": {
            "split": exp.split,
            "env_options": dict(exp.env_options),
            "episodes": exp.episodes,
        },
        "tasks": plan.to_dict() if plan is not None else None,
        "verdict_rule": VERDICT_RULE,
        "runs": {row: p.run_id for row, p in played.items()},
        "rows": rows,
        "builds": dict(builds),
        "cells": [c.to_dict() for c in cells],
    }
    if more_runs:  # the paper's mean of runs: each run's ids and figure
        record["repeats"] = {
            "runs": [{row: p.run_id for row, p in run.items()} for run in all_runs],
            "builds": [dict(builds), *(dict(b) for b in more_builds)],
            "figures": figures,
        }
    Path(f"{stem}.json").write_text(json.dumps(record, indent=2, default=str), encoding="utf-8")
    models = answered.line().removeprefix("models that answered here: ")
    page = markdown(exp, cells, models, notes, plan.split if plan is not None else None)
    Path(f"{stem}.md").write_text(page, encoding="utf-8")
    console.print(f"saved: {stem}.md and .json")


def _print_table(headers: list[str], rows: list[list[str]]) -> None:
    """The comparison, fitted to the terminal without cutting a cell short."""
    from rich.table import Table

    from lorekit.tables import fit_table

    table = Table(*headers)
    for row in rows:
        table.add_row(*row)
    fit_table(console, table)
    console.print(table)


def _why_not(answered: Any, changes: Sequence[str], plan: TaskPlan | None, rows: Any) -> list[str]:
    """Why the saved figures do not stand for a reproduction (empty when they do)."""
    out = []
    if not answered.reproduction:
        out.append(f"{answered.kind} models answered" if answered.kind != "none" else "no model")
    if changes:
        out.append("the setup differs from the experiment's")
    if plan is not None and plan.sampled:
        out.append(f"a sample: {plan.size} of the experiment's {plan.population} tasks")
    short = [r for r, info in rows.items() if info["episodes"] < info["planned"]]
    if short:
        out.append(f"rows {', '.join(short)} played fewer episodes than planned")
    return out


def _row_record(
    db: Any,
    exp: Any,
    row_id: str,
    played: Any,
    choosers: Mapping[str, TaskChooser],
    setups: Mapping[str, Setup],
    cfg: Any,
    prices: str | None,
) -> dict[str, Any]:
    """One row as run: its setup and the env options its run stored, the tasks it
    played, and what it spent (tokens from the store, priced by the dated table)."""
    from lorekit.cli.reproduce_cost import load_table
    from lorekit.eval.prices import ModelPrice, spent

    run = db.get_run(played.run_id)
    keys = choosers[row_id].keys if row_id in choosers else None
    eps = [e for e in db.episodes(played.run_id) if keys is None or e.episode_key in keys]
    usage = db.usage_by_role(played.run_id)
    table = load_table(prices)
    extra = {m: ModelPrice(m, p.prompt, p.completion) for m, p in cfg.prices().items()}
    spend = spent(db, [played.run_id], table, extra)
    setup = setups.get(played.run_id)
    return {
        "label": exp.row(row_id).label,
        "run_id": played.run_id,
        "setup": setup.to_dict() if setup is not None else None,
        "env_kwargs": (run.config or {}).get("env_kwargs") if run is not None else None,
        "planned": len(keys) if keys is not None else len(eps),
        "episodes": len(eps),
        "errored": sum(1 for e in eps if e.status == "error"),
        "calls": sum(u.get("calls", 0) for u in usage.values()),
        "prompt_tokens": spend.prompt_tokens,
        "completion_tokens": spend.completion_tokens,
        "usd": None if spend.unpriced else spend.usd,
        "unpriced": list(spend.unpriced),
        "prices": table.dated,
    }
