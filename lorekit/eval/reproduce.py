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
from typing import Any, NoReturn

import yaml

from lorekit import yamlio
from lorekit.eval.reproduce_columns import METRICS as METRICS  # re-exported
from lorekit.eval.reproduce_columns import Column as Column  # part of an experiment
from lorekit.eval.reproduce_columns import parse_column
from lorekit.experiments import DIRECTORY
from lorekit.registry import REGISTRY, Entry

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
}
"""Top-level fields of an experiment file -> whether each is required."""
_ROW = {
    "id": True,
    "label": True,
    "agent": True,
    "published": True,
    "options": False,
    "paper_models": False,
    "runnable": False,
    "reason": False,
    "notes": False,
    "build": False,
}
_BUILD = {"id": True, "variant": True, "split": True, "per_type": False, "paper_models": False}


class ExperimentError(ValueError):
    """An experiment file that does not read; the message names the file and field."""


@dataclass(frozen=True, slots=True)
class Figure:
    """One published number, with its spread (e.g. a standard deviation) if given."""

    value: float
    spread: float | None = None


@dataclass(frozen=True, slots=True)
class Row:
    """One method of the table: our agent and options, the paper's models and figures."""

    id: str
    label: str
    agent: str
    options: Mapping[str, Any]
    paper_models: Mapping[str, str]
    published: Mapping[str, Figure]
    runnable: bool = True
    reason: str | None = None
    notes: str | None = None
    build: str | None = None
    """The :class:`Build` whose manual (or libraries) this row tests with."""


@dataclass(frozen=True, slots=True)
class Build:
    """A stage that must run before the rows that name it: a build of ``variant`` (one
    an agent's registration makes, see :func:`build_makers`) on ``per_type`` tasks of
    each type of ``split``."""

    id: str
    variant: str
    split: str
    per_type: int = 6
    paper_models: Mapping[str, str] = field(default_factory=dict)


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

    def row(self, row_id: str) -> Row:
        for row in self.rows:
            if row.id == row_id:
                return row
        known = ", ".join(r.id for r in self.rows)
        raise ExperimentError(f"experiment {self.id!r} has no row {row_id!r}; its rows: {known}")

    @property
    def runnable_rows(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.runnable) if self.runnable else ()


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
    where = _Where(path.name)
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
        _row(where, r, f"rows[{i}]", set(names)) for i, r in enumerate(where.items(data, "rows"))
    )
    builds = tuple(_build(where, b, f"builds[{i}]") for i, b in enumerate(data.get("builds") or []))
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
        data.get("simulate") or {}, "simulate", {"env_options": False, "per_type": False}
    )
    simulate_env = simulate.get("env_options") or {}
    if not isinstance(simulate_env, dict):
        where.fail("simulate.env_options", "expected a mapping of option: value")
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
        simulate_per_type=_count(where, simulate.get("per_type"), "simulate.per_type"),
    )


@dataclass(frozen=True, slots=True)
class _Where:
    """Raises errors that name the file and the field."""

    file: str

    def fail(self, at: str, message: str) -> NoReturn:
        raise ExperimentError(f"{self.file}: {at}: {message}" if at else f"{self.file}: {message}")

    def mapping(self, value: Any, at: str, fields: Mapping[str, bool]) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(at, f"expected a mapping, got {type(value).__name__}")
        unknown = sorted(set(value) - set(fields))
        if unknown:
            self.fail(
                f"{at}.{unknown[0]}" if at else str(unknown[0]),
                f"unknown field; known: {', '.join(fields)}",
            )
        for name, required in fields.items():
            if required and name not in value:
                self.fail(f"{at}.{name}" if at else name, "missing")
        return dict(value)

    def items(self, data: Mapping[str, Any], key: str) -> list[Any]:
        value = data[key]
        if not isinstance(value, list) or not value:
            self.fail(key, "expected a non-empty list")
        return list(value)

    def text(self, data: Mapping[str, Any], key: str, at: str = "") -> str:
        value = data.get(key)
        if not isinstance(value, str) or not value.strip():
            self.fail(f"{at}{key}", f"expected non-empty text, got {value!r}")
        return str(value).strip()

    def optional_text(self, data: Mapping[str, Any], key: str, at: str = "") -> str | None:
        return None if data.get(key) is None else self.text(data, key, at)

    def flag(self, data: Mapping[str, Any], key: str, at: str = "") -> bool:
        value = data.get(key)
        if not isinstance(value, bool):
            self.fail(f"{at}{key}", f"expected true or false, got {value!r}")
        return bool(value)


def _row(where: _Where, value: Any, at: str, columns: set[str]) -> Row:
    data = where.mapping(value, at, _ROW)
    runnable = where.flag(data, "runnable", f"{at}.") if "runnable" in data else True
    reason = where.optional_text(data, "reason", f"{at}.")
    if not runnable and not reason:
        where.fail(f"{at}.reason", "a row with runnable: false must say why")
    options = data.get("options") or {}
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        where.fail(f"{at}.options", "expected a mapping of option: value")
    models = data.get("paper_models") or {}
    if not isinstance(models, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in models.items()
    ):
        where.fail(f"{at}.paper_models", "expected a mapping of role: model name")
    published_raw = data["published"]
    if not isinstance(published_raw, dict):
        where.fail(f"{at}.published", "expected a mapping of column: figure")
    published = {}
    for name, figure in published_raw.items():
        if name not in columns:
            where.fail(f"{at}.published.{name}", f"no such column; columns: {sorted(columns)}")
        published[name] = _figure(where, figure, f"{at}.published.{name}")
    return Row(
        id=where.text(data, "id", f"{at}."),
        label=where.text(data, "label", f"{at}."),
        agent=where.text(data, "agent", f"{at}."),
        options=dict(options),
        paper_models=dict(models),
        published=published,
        runnable=runnable,
        reason=reason,
        notes=where.optional_text(data, "notes", f"{at}."),
        build=where.optional_text(data, "build", f"{at}."),
    )


def _count(where: _Where, value: Any, at: str) -> int | None:
    if value is not None and (type(value) is not int or value < 1):
        where.fail(at, f"expected a positive integer, got {value!r}")
    return value


def _build(where: _Where, value: Any, at: str) -> Build:
    data = where.mapping(value, at, _BUILD)
    variant = where.text(data, "variant", f"{at}.")
    known = list(build_makers())
    if variant not in known:
        either = ", ".join(known[:-1]) + " or " + known[-1] if len(known) > 1 else "".join(known)
        where.fail(f"{at}.variant", f"expected {either or 'a build variant'}, got {variant!r}")
    models = data.get("paper_models") or {}
    if not isinstance(models, dict):
        where.fail(f"{at}.paper_models", "expected a mapping of role: model name")
    return Build(
        id=where.text(data, "id", f"{at}."),
        variant=variant,
        split=where.text(data, "split", f"{at}."),
        per_type=_count(where, data.get("per_type", 6), f"{at}.per_type") or 6,
        paper_models={str(k): str(v) for k, v in models.items()},
    )


def build_makers() -> dict[str, Entry]:
    """Each build variant an experiment may name -> the registration of the agent that
    makes it: an agent lists its variants in ``build_variants`` and names the function
    that plays one in ``build`` (its registration's meta), so no method is named here."""
    found: dict[str, Entry] = {}
    for entry in REGISTRY.entries("agent"):
        if entry.meta.get("build"):
            for variant in entry.meta.get("build_variants") or ():
                found.setdefault(str(variant), entry)
    return found


def _figure(where: _Where, value: Any, at: str) -> Figure:
    if type(value) in (int, float):
        return Figure(float(value))
    data = where.mapping(value, at, {"value": True, "spread": False})
    number, spread = data["value"], data.get("spread")
    if type(number) not in (int, float):
        where.fail(f"{at}.value", f"expected a number, got {number!r}")
    if spread is not None and (type(spread) not in (int, float) or spread < 0):
        where.fail(f"{at}.spread", f"expected a non-negative number, got {spread!r}")
    return Figure(float(number), None if spread is None else float(spread))


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
        try:
            if row.build is None:
                make_agent(row.agent, **dict(row.options))
            elif unknown := set(row.options) - set(agent_parameters(row.agent)):
                raise TypeError(f"unknown options {sorted(unknown)}")  # built once its build is
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
