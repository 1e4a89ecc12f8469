"""``lorekit reproduce run``: each row's setup as its experiment file states it.

What :mod:`lorekit.eval.reproduce_plan` reads from the file, applied to one
run: the rows a run without ``--rows`` plays (those whose needed file
exists; the others are named with how to make the file), each row's tasks
(the experiment's split, or the sample of it the paper played) and env
options (the experiment's, then the row's own, then ``--simulate``'s, then
the command line's), and the runs a repeated experiment plays (each build and
row again, as ``RUN_ID.rK.ROW``), pooled for the comparison.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from lorekit.cli.console import err_console
from lorekit.cli.errors import UserError
from lorekit.cli.options import TaskChoice


def option_text(value: Any) -> str:
    """An option value as the ``KEY=VALUE`` text the preparation reads back as YAML."""
    return value if isinstance(value, str) else json.dumps(value)


def default_rows(exp: Any) -> list[Any]:
    """The rows a run without ``--rows`` plays; a row left out for a missing file is
    named on stderr with the command that makes the file."""
    rows = list(exp.default_rows())
    for row in exp.runnable_rows:
        if row not in rows:
            err_console.print(f"{exp.id}: left out: {row.needs_file.message(row.id)}")
    return rows


def check_named(rows: Sequence[Any]) -> None:
    """A row asked for by name whose needed file is missing: one line, exit 2."""
    for row in rows:
        if row.needs_file is not None and row.needs_file.missing():
            raise UserError(f"--rows: {row.needs_file.message(row.id)}")


def env_opt_for(
    exp: Any, row: Any | None, cli_env_opt: Sequence[str], simulate: bool
) -> tuple[str, ...]:
    """``KEY=VALUE`` env options: the experiment's, the row's (None: the builds'),
    ``--simulate``'s, then the command line's; a later one wins."""
    options = {
        **exp.env_options,
        **(row.env_options if row is not None else {}),
        **(exp.simulate_env_options if simulate else {}),
    }
    return (*(f"{k}={option_text(v)}" for k, v in options.items()), *cli_env_opt)


def row_tasks(
    exp: Any, row: Any, split: str, episodes: int | None, cli_env_opt: Sequence[str], simulate: bool
) -> TaskChoice:
    """The tasks and env options ``row`` plays with (see the module docstring)."""
    env_opt = env_opt_for(exp, row, cli_env_opt, simulate)
    picked = None
    if row.tasks:  # named tasks: -n plays the first N of them
        picked = ",".join(row.tasks[:episodes] if episodes else row.tasks)
    elif exp.select is not None and split == exp.split:
        picked = ",".join(t.id for t in _sample(exp, env_opt, split))
    return TaskChoice(split, episodes, env_opt, picked)


def _sample(exp: Any, env_opt: Sequence[str], split: str) -> list[Any]:
    from lorekit.cli.prepare import prepare_tasks
    from lorekit.eval.reproduce_plan import select_tasks

    _, tasks, _ = prepare_tasks(exp.env, env_opt, None, split)
    try:
        return select_tasks(tasks, exp.select)
    except ValueError as exc:
        raise UserError(f"{exp.path.name}: {exc} (split {split!r})") from None


class RowPlayer(Protocol):
    """Plays one row of an experiment as run ``run_id`` in the agent's own way (a team:
    ``team run``'s loop) and returns :class:`lorekit.cli.run.Played`. An agent names its
    player in its registration (``play=``: an import string or the function)."""

    def __call__(
        self,
        exp: Any,
        row: Any,
        *,
        run_id: str,
        models: Any,
        harness: Any,
        tasks: TaskChoice,
        simulate: bool,
    ) -> Any: ...


def row_player(agent: str) -> RowPlayer | None:
    """The row player ``agent``'s registration names, or None (rows play as ``lorekit run``)."""
    import pkgutil

    from lorekit.extras import requires_extra
    from lorekit.registry import REGISTRY

    entry = REGISTRY.find("agent", agent)
    if entry is None or not entry.meta.get("play"):
        return None
    target = entry.meta["play"]
    if isinstance(target, str):
        with requires_extra(f"the {agent!r} agent's rows", entry.meta.get("extra")):
            target = pkgutil.resolve_name(target)
    player: RowPlayer = target
    return player


def repeat_count(exp: Any, given: int | None, simulate: bool = False) -> int:
    """``--repeats`` or the experiment's (``--simulate``: one run, a check of the
    wiring, unless asked for more); more runs than one are said on stderr, with what a
    cache would do to them."""
    repeats = (1 if simulate else exp.repeats) if given is None else given
    if repeats > 1:
        err_console.print(
            f"{exp.id}: {repeats} runs of each build and row, pooled as the paper's mean of "
            f"{exp.repeats}; runs after the first play with the model cache off, so each "
            "draws its own answers"
        )
    return repeats


def harness_for(harness: Any, run: int) -> Any:
    """The harness options of the ``run``-th run (from 1): later runs skip the cache,
    which would hand them the first run's answers."""
    return harness if run == 1 else replace(harness, cache="off")


def per_run_figures(
    exp: Any, runs: Sequence[Mapping[str, Sequence[Any]]]
) -> dict[str, dict[str, list[float | None]]]:
    """Row -> column -> our figure in each run (what the paper averaged)."""
    from lorekit.eval.reproduce_compare import compare

    out: dict[str, dict[str, list[float | None]]] = {}
    for episodes in runs:
        for cell in compare(exp, episodes, {row: row for row in episodes}):
            out.setdefault(cell.row, {}).setdefault(cell.column, []).append(cell.ours)
    return out


def runs_lines(figures: Mapping[str, Mapping[str, Sequence[float | None]]]) -> list[str]:
    """``row column: 86.2, 85.1, 87.3 (mean 86.2)`` per cell of a repeated experiment."""
    lines = []
    for row, columns in figures.items():
        for column, values in columns.items():
            shown = ", ".join("-" if v is None else f"{v:.1f}" for v in values)
            known = [v for v in values if v is not None]
            mean = f" (mean {sum(known) / len(known):.1f})" if known else ""
            lines.append(f"{row} {column}: runs {shown}{mean}")
    return lines


def priced_cells(
    exp: Any, cells: Sequence[Any], store: Any, run_ids: Mapping[str, Sequence[str]], table: Any
) -> list[Any]:
    """``cells`` with each ``usd`` column's figure filled in: what the row's runs cost at
    ``table``, per the experiment's ``episodes`` (the paper's figure is its own total
    over that many games: AgentKit's 3). A model without a price leaves it unknown."""
    from lorekit.eval.prices import spent

    priced = {c.name for c in exp.columns if c.metric == "usd"}
    out = []
    for cell in cells:
        if cell.column in priced and cell.n:
            spend = spent(store, run_ids.get(cell.row, ()), table)
            usd = None if spend.unpriced else spend.usd / cell.n * (exp.episodes or cell.n)
            cell = replace(cell, ours=usd)
        out.append(cell)
    return out


def row_env_options(exp: Any, row: Any, env_opt: Sequence[str], simulate: bool) -> dict[str, Any]:
    """The row's own env options that its recorded setup adds to the experiment's
    (:func:`lorekit.cli.reproduce_save.env_setup`): those ``--env-opt`` and
    ``--simulate``'s shorter game leave as the file says."""
    from lorekit.cli.prepare import kv

    given = kv(env_opt, "--env-opt")
    simulated = exp.simulate_env_options if simulate else {}
    return {k: v for k, v in row.env_options.items() if k not in given and k not in simulated}


def paper_n_of_runs(exp: Any, paper_n: Mapping[str, int] | None) -> dict[str, int] | None:
    """The episodes behind each published figure: a mean of the paper's ``repeats`` runs
    stands on that many times the tasks of one run."""
    if paper_n is None or exp.repeats == 1:
        return None if paper_n is None else dict(paper_n)
    return {group: n * exp.repeats for group, n in paper_n.items()}
