"""The stage before ``lorekit reproduce``'s rows: the builds some rows test with.

An experiment may name builds (``builds:`` in its file: an id, a variant, the
split built on, tasks per type), and a row the build it tests with
(``build:``). The command knows no method that builds: an agent whose rows
test with a build says so in its registration, with ``build_variants`` (the
variants it makes) and ``build`` (the function that plays one, see
:class:`BuildMaker`, by import string or itself). Each build the chosen rows
need is played once, as run ``RUN_ID.build-ID``, so rerunning with the same
``--run-id`` resumes it; what the maker returns is added to the options of
the rows that name it.

Under ``--max-cost`` a maker that takes ``budget`` gets the reproduction's guard
(:class:`~lorekit.cli.reproduce_cost.CostGuard`): it plays its episodes and calls
through it as the rows do (``wrap_models``, ``before_episode``, ``on_episode``), so
a build cannot spend past the limit; a build stopped by the limit ends the command
with exit code 3 before any row plays. A maker without ``budget`` is refused a
``--max-cost`` run, since what it spends would not be bounded.
"""

from __future__ import annotations

import pkgutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from lorekit.cli.errors import UserError
from lorekit.cli.options import HarnessOptions, ModelChoice
from lorekit.extras import requires_extra


class BuildMaker(Protocol):
    """Plays (or resumes) one build of an experiment as run ``run_id`` and returns the
    agent options of the rows that test with it (AutoManual's: ``{"manual": run_id}``).
    ``resume_id`` is the ``--run-id`` that resumes the whole reproduction; a failure
    the user can act on is a :class:`~lorekit.cli.errors.UserError` or ``RunFailed``.
    A maker may also take ``budget`` (the ``--max-cost`` guard, or None)."""

    def __call__(
        self,
        exp: Any,
        build: Any,
        *,
        run_id: str,
        resume_id: str,
        models: ModelChoice,
        harness: HarnessOptions,
        env_opt: Sequence[str],
        simulate: bool,
    ) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Built:
    """A finished build: its run id and the options its rows get."""

    run_id: str
    options: Mapping[str, Any]


def run_builds(
    exp: Any,
    rows: Sequence[Any],
    *,
    models: ModelChoice,
    harness: HarnessOptions,
    env_opt: Sequence[str],
    prefix: str,
    simulate: bool,
    budget: Any = None,
    resume_id: str | None = None,
) -> dict[str, Built]:
    """Build id -> its finished build, for the builds ``rows`` name, as runs
    ``PREFIX.build-ID``; ``budget`` is the ``--max-cost`` guard (see the module
    docstring); ``resume_id`` (default ``prefix``) is the ``--run-id`` that resumes the
    reproduction (another than ``prefix`` for its repeated runs)."""
    import inspect

    from lorekit.cli.reproduce_limit import CostLimitReached
    from lorekit.eval.reproduce import build_makers

    makers = build_makers()
    built: dict[str, Built] = {}
    needed = needed_builds(exp, rows)
    for build in exp.builds:
        if build.id not in needed:
            continue
        entry = makers.get(build.variant)
        if entry is None:  # its agent's plugin is gone since the file was checked
            raise UserError(f"experiment {exp.id!r}: no agent makes {build.variant!r} builds")
        make: BuildMaker = entry.meta["build"]  # an import string, or the function itself
        if isinstance(make, str):
            with requires_extra(f"the {entry.name!r} agent's build", entry.meta.get("extra")):
                make = pkgutil.resolve_name(make)
        rid = f"{prefix}.build-{build.id}"
        extra: dict[str, Any] = {}
        if budget is not None:
            if "budget" not in inspect.signature(make).parameters:
                raise UserError(
                    f"--max-cost: the {build.variant!r} build of {entry.name!r} cannot be "
                    "bounded (its maker takes no budget); run without --max-cost"
                )
            extra["budget"] = budget
        options = make(
            exp, build, run_id=rid, resume_id=resume_id or prefix, models=models,
            harness=harness, env_opt=env_opt, simulate=simulate, **extra,
        )  # fmt: skip
        if budget is not None and budget.tripped:
            raise CostLimitReached(budget.message(resume_id or prefix))
        built[build.id] = Built(rid, dict(options))
    return built


def needed_builds(exp: Any, rows: Sequence[Any]) -> set[str]:
    """The builds ``rows`` test with, and the earlier builds those start from."""
    by_id = {b.id: b for b in exp.builds}
    needed: set[str] = set()
    todo = [r.build for r in rows if r.build]
    while todo:
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            source = by_id[name].from_build
            todo += [source] if source else []
    return needed
