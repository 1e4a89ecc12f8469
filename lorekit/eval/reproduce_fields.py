"""The parts of an experiment file below its top level: rows, builds and figures.

:mod:`lorekit.eval.reproduce` reads a file's top level and hands each row and
build to :func:`parse_row` and :func:`parse_build`, which check every field
strictly; a mistake is an :class:`ExperimentError` naming the file and the
field (``bad.yaml: rows[0].published.every: no such column``). What a row may
say beyond its agent's options (its own env options, named tasks, a needed
file) is read here too, through :mod:`lorekit.eval.reproduce_plan`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from lorekit.eval.reproduce_plan import NeededFile, parse_needed_file
from lorekit.registry import REGISTRY, Entry

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
    "env_options": False,
    "needs_file": False,
    "tasks": False,
}
_BUILD = {
    "id": True,
    "variant": True,
    "split": True,
    "per_type": False,
    "types": False,
    "paper_models": False,
    "env_options": False,
    "examples": False,
    "from": False,
    "library_only": False,
}


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
    env_options: Mapping[str, Any] = field(default_factory=dict)
    """Env options of this row over the experiment's (a budget or page that only this
    row's method had in the paper)."""
    needs_file: NeededFile | None = None
    """A file the row's options name that an earlier command makes (laws learned from
    records): until it exists the row is left out of the default set."""
    tasks: tuple[str, ...] = ()
    """The task ids this row plays, where the paper played named tasks rather than a
    split (S-Agents' "mine 50 logs"); empty: the experiment's split."""


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
    env_options: Mapping[str, Any] = field(default_factory=dict)
    """The build's env options over the experiment's (the task set it builds on)."""
    examples: int | None = None
    """How many of the env profile's human examples the planner is shown (None: all)."""
    from_build: str | None = None
    """An earlier build of the file this one starts from (its rules and libraries)."""
    library_only: bool = False
    """With ``from_build``: keep its rules as they are, grow only the libraries (the
    second step of AutoManual's two-step MiniWoB++ build)."""
    types: int | None = None
    """Build on the first ``types`` task types of its task set only (None: every one)."""


@dataclass(frozen=True, slots=True)
class Where:
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


def parse_row(where: Where, value: Any, at: str, columns: set[str]) -> Row:
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
    env_options = data.get("env_options") or {}
    if not isinstance(env_options, dict) or not all(isinstance(k, str) for k in env_options):
        where.fail(f"{at}.env_options", "expected a mapping of option: value")
    needs = data.get("needs_file")
    tasks = data.get("tasks") or []
    if not isinstance(tasks, list) or not all(isinstance(t, str) and t for t in tasks):
        where.fail(f"{at}.tasks", "expected a list of task ids")
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
        env_options=dict(env_options),
        needs_file=None if needs is None else parse_needed_file(where, needs, f"{at}.needs_file"),
        tasks=tuple(tasks),
    )


def count(where: Where, value: Any, at: str) -> int | None:
    if value is not None and (type(value) is not int or value < 1):
        where.fail(at, f"expected a positive integer, got {value!r}")
    return value


def parse_build(where: Where, value: Any, at: str) -> Build:
    data = where.mapping(value, at, _BUILD)
    variant = where.text(data, "variant", f"{at}.")
    known = list(build_makers())
    if variant not in known:
        either = ", ".join(known[:-1]) + " or " + known[-1] if len(known) > 1 else "".join(known)
        where.fail(f"{at}.variant", f"expected {either or 'a build variant'}, got {variant!r}")
    models = data.get("paper_models") or {}
    if not isinstance(models, dict):
        where.fail(f"{at}.paper_models", "expected a mapping of role: model name")
    env_options = data.get("env_options") or {}
    if not isinstance(env_options, dict):
        where.fail(f"{at}.env_options", "expected a mapping of option: value")
    library_only = data.get("library_only", False)
    if not isinstance(library_only, bool):
        where.fail(f"{at}.library_only", f"expected true or false, got {library_only!r}")
    if library_only and data.get("from") is None:
        where.fail(f"{at}.library_only", "a library-only build needs the build it keeps (from)")
    return Build(
        id=where.text(data, "id", f"{at}."),
        variant=variant,
        split=where.text(data, "split", f"{at}."),
        per_type=count(where, data.get("per_type", 6), f"{at}.per_type") or 6,
        paper_models={str(k): str(v) for k, v in models.items()},
        env_options=dict(env_options),
        examples=count(where, data.get("examples"), f"{at}.examples"),
        from_build=where.optional_text(data, "from", f"{at}."),
        library_only=library_only,
        types=count(where, data.get("types"), f"{at}.types"),
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


def _figure(where: Where, value: Any, at: str) -> Figure:
    if type(value) in (int, float):
        return Figure(float(value))
    data = where.mapping(value, at, {"value": True, "spread": False})
    number, spread = data["value"], data.get("spread")
    if type(number) not in (int, float):
        where.fail(f"{at}.value", f"expected a number, got {number!r}")
    if spread is not None and (type(spread) not in (int, float) or spread < 0):
        where.fail(f"{at}.spread", f"expected a non-negative number, got {spread!r}")
    return Figure(float(number), None if spread is None else float(spread))
