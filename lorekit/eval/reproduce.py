"""Published tables as experiments: read and check the files of :mod:`lorekit.experiments`.

An experiment file says, in data, how one table or figure of a paper was
measured (env, split, each row's agent and options, the paper's models) and
what the paper reports. This module reads those files strictly (a mistake
names the file and the field), checks that each runnable row builds its
agent and env without calling a model (what a run will cost is the dry run's:
:mod:`lorekit.cli.reproduce_cost`). Agents are built through
:func:`lorekit.agents.make_agent` and envs through :func:`lorekit.envs.make`,
so the harness stays ignorant of any one method.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lorekit import yamlio
from lorekit.eval.reproduce_columns import METRICS as METRICS  # re-exported
from lorekit.eval.reproduce_columns import Column as Column  # part of an experiment
from lorekit.eval.reproduce_columns import parse_column
from lorekit.eval.reproduce_fields import Build as Build  # part of an experiment
from lorekit.eval.reproduce_fields import ExperimentError as ExperimentError
from lorekit.eval.reproduce_fields import Figure as Figure
from lorekit.eval.reproduce_fields import Row as Row
from lorekit.eval.reproduce_fields import Where, count, parse_build, parse_row
from lorekit.eval.reproduce_fields import build_makers as build_makers
from lorekit.eval.reproduce_plan import TaskSample, parse_sample
from lorekit.experiments import DIRECTORY

_TOP = {
    "paper": True,
    "source": True,
    "title": True,
    "env": True,
    "split": True,
    "metric": True,
    "aggregation": True,
    "columns": True,
    "rows": True,
    "runnable": True,
    "env_options": False,
    "episodes": False,
    "scale": False,
    "spread_kind": False,
    "reason": False,
    "needs_data": False,
    "notes": False,
    "simulate": False,
    "builds": False,
    "repeats": False,
    "select": False,
}
"""Top-level fields of an experiment file -> whether each is required."""


@dataclass(frozen=True, slots=True)
class Experiment:
    """One published table or figure, as an experiment LoreKit can (or cannot) run."""

    id: str
    path: Path
    paper: str
    source: str
    title: str
    env: str
    split: str
    metric: str
    aggregation: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    runnable: bool
    env_options: Mapping[str, Any] = field(default_factory=dict)
    episodes: int | None = None
    scale: float = 1.0
    spread_kind: str | None = None
    reason: str | None = None
    needs_data: str | None = None
    notes: str | None = None
    simulate_env_options: Mapping[str, Any] = field(default_factory=dict)
    """Env options over ``env_options`` for ``reproduce run --simulate`` only (e.g. a
    shorter Crafter game), so the offline check of every row stays quick."""
    builds: tuple[Build, ...] = ()
    simulate_per_type: int | None = None
    """Tasks per type of each build under ``--simulate`` (a shorter build)."""
    simulate_types: int | None = None
    """Task types each build plays under ``--simulate``: the first N of its task set (a
    build over many types kept short; the dry run still prices the whole set)."""
    repeats: int = 1
    """Runs the paper's figure is the mean of (AutoManual: 3): each run plays the builds
    and the rows anew, and our figure pools them as the paper averaged them."""
    select: TaskSample | None = None
    """Which tasks of the split the paper played, when not the whole split (ADaPT's
    ALFWorld dev set: 10 games per type, drawn as its code drew them)."""

    def row(self, row_id: str) -> Row:
        for row in self.rows:
            if row.id == row_id:
                return row
        known = ", ".join(r.id for r in self.rows)
        raise ExperimentError(f"experiment {self.id!r} has no row {row_id!r}; its rows: {known}")

    @property
    def runnable_rows(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.runnable) if self.runnable else ()

    def default_rows(self, folder: Path | None = None) -> tuple[Row, ...]:
        """The rows a run without ``--rows`` plays: the runnable ones whose needed file
        (:class:`~lorekit.eval.reproduce_plan.NeededFile`) exists in ``folder``."""
        return tuple(
            r
            for r in self.runnable_rows
            if r.needs_file is None or not r.needs_file.missing(folder)
        )


# ----------------------------------------------------------------------- reading
def experiment_files(directory: Path = DIRECTORY) -> list[Path]:
    """Every experiment file shipped (all YAML files but ``costs.yaml``)."""
    return sorted(p for p in directory.glob("*.yaml") if p.name != "costs.yaml")


def load_all(directory: Path = DIRECTORY) -> list[Experiment]:
    return [load_experiment(p) for p in experiment_files(directory)]


def find_experiment(name: str, directory: Path = DIRECTORY) -> Experiment:
    """An experiment by id (its file name without ``.yaml``) or by the path of a file."""
    path = Path(name)
    if name.endswith((".yaml", ".yml")) or path.is_file():
        if not path.is_file():
            raise ExperimentError(f"{name}: no such experiment file")
        return load_experiment(path)
    candidate = directory / f"{name}.yaml"
    if candidate.name == "costs.yaml" or not candidate.is_file():
        known = ", ".join(p.stem for p in experiment_files(directory))
        raise ExperimentError(f"unknown experiment {name!r}; known: {known}")
    return load_experiment(candidate)


def load_experiment(path: Path) -> Experiment:
    """Read and check one experiment file; any problem is an :class:`ExperimentError`."""
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ExperimentError(yamlio.describe_error(exc, path.name)) from None
    except UnicodeDecodeError:
        raise ExperimentError(f"{path}: not a text (UTF-8) file; experiments are YAML") from None
    except OSError as exc:
        raise ExperimentError(f"{path}: {exc.strerror or exc}") from None
    where = Where(path.name)
    data = where.mapping(data, "", _TOP)
    columns = tuple(
        parse_column(where, c, f"columns[{i}]") for i, c in enumerate(where.items(data, "columns"))
    )
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        where.fail("columns", f"column names repeat: {names}")
    metric = where.text(data, "metric")
    if metric not in METRICS:
        where.fail("metric", f"expected one of {', '.join(METRICS)}, got {metric!r}")
    runnable = where.flag(data, "runnable")
    reason = where.optional_text(data, "reason")
    if not runnable and not reason:
        where.fail("reason", "a table with runnable: false must say why")
    rows = tuple(
        parse_row(where, r, f"rows[{i}]", set(names))
        for i, r in enumerate(where.items(data, "rows"))
    )
    builds = tuple(
        parse_build(where, b, f"builds[{i}]") for i, b in enumerate(data.get("builds") or [])
    )
    for i, b in enumerate(builds):
        if b.from_build is not None and b.from_build not in {e.id for e in builds[:i]}:
            where.fail(f"builds[{i}].from", f"no earlier build {b.from_build!r}")
    for i, row in enumerate(rows):
        if row.build is not None and row.build not in {b.id for b in builds}:
            where.fail(f"rows[{i}].build", f"no such build; builds: {[b.id for b in builds]}")
    ids = [r.id for r in rows]
    if len(set(ids)) != len(ids):
        where.fail("rows", f"row ids repeat: {ids}")
    episodes = data.get("episodes")
    if episodes is not None and (type(episodes) is not int or episodes < 1):
        where.fail("episodes", f"expected a positive integer, got {episodes!r}")
    scale = data.get("scale", 1.0)
    if type(scale) not in (int, float) or scale <= 0:
        where.fail("scale", f"expected a positive number, got {scale!r}")
    env_options = data.get("env_options") or {}
    if not isinstance(env_options, dict):
        where.fail("env_options", "expected a mapping of option: value")
    simulate = where.mapping(
        data.get("simulate") or {},
        "simulate",
        {"env_options": False, "per_type": False, "types": False},
    )
    simulate_env = simulate.get("env_options") or {}
    if not isinstance(simulate_env, dict):
        where.fail("simulate.env_options", "expected a mapping of option: value")
    repeats = count(where, data.get("repeats"), "repeats") or 1
    return Experiment(
        id=path.stem,
        path=path,
        paper=where.text(data, "paper"),
        source=where.text(data, "source"),
        title=where.text(data, "title"),
        env=where.text(data, "env"),
        split=where.text(data, "split"),
        metric=metric,
        aggregation=where.text(data, "aggregation"),
        columns=columns,
        rows=rows,
        runnable=runnable,
        env_options=dict(env_options),
        episodes=episodes,
        scale=float(scale),
        spread_kind=where.optional_text(data, "spread_kind"),
        reason=reason,
        needs_data=where.optional_text(data, "needs_data"),
        notes=where.optional_text(data, "notes"),
        simulate_env_options=dict(simulate_env),
        builds=builds,
        simulate_per_type=count(where, simulate.get("per_type"), "simulate.per_type"),
        simulate_types=count(where, simulate.get("types"), "simulate.types"),
        repeats=repeats,
        select=None if data.get("select") is None else parse_sample(where, data["select"]),
    )


# ------------------------------------------------------------------------ checks
def build_check(experiment: Experiment, rows: Sequence[Row] | None = None) -> dict[str, str]:
    """Build each runnable row's agent and the env (no model is called).

    Returns row id -> what went wrong (empty when all build). An env whose data
    is missing here (``FileNotFoundError``) is reported under ``"env"``."""
    from lorekit.agents import agent_parameters, make_agent
    from lorekit.envs import make

    problems: dict[str, str] = {}
    if not experiment.runnable:
        return problems  # its env may not exist here at all (the file says why)
    for row in experiment.runnable_rows if rows is None else rows:
        waits = row.build is not None or (row.needs_file is not None and row.needs_file.missing())
        try:
            if not waits:
                make_agent(row.agent, **dict(row.options))
            elif unknown := set(row.options) - set(agent_parameters(row.agent)):
                # built once its build (or needed file) is there
                raise TypeError(f"unknown options {sorted(unknown)}")
        except (LookupError, TypeError, ValueError, OSError) as exc:
            problems[row.id] = f"agent {row.agent!r}: {exc}"
    try:
        env = make(experiment.env, **dict(experiment.env_options))
        try:
            groups = {t.group for t in env.tasks(experiment.split)}
        finally:
            env.close()
        missing = [c.group for c in experiment.columns if c.group and c.group not in groups]
        if missing:
            problems["env"] = f"split {experiment.split!r} has no task group {missing[0]!r}"
    except (LookupError, TypeError, ValueError, OSError) as exc:
        problems["env"] = f"env {experiment.env!r}: {exc}"
    return problems
