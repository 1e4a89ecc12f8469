"""Run-level summaries an env gives of its own runs, found by env name.

Some envs have figures of their own beyond success and reward (Crafter's
score and per-achievement success rates). The env computes them from the
recorded run, read through the few calls of
:class:`lorekit.envs.crafter.runs.RunSource`, and hands back a
:class:`RunSummary` the report draws as one section (a table row per run and
a bar chart of rates) without knowing the env. Adding one is a function in
the env's package and a line in :data:`RUN_SUMMARIES`; it is imported only
when a report shows a run of that env.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypedDict


class RunSummary(TypedDict):
    """One run's section data: where it goes, its table cells, the rates to chart."""

    section: str
    """The report section's id (runs with the same id share one section)."""
    title: str
    columns: list[str]
    """Table columns after the run id; ``cells`` holds this run's values."""
    cells: list[Any]
    chart: str
    """Title of the bar chart of ``rates`` (fractions, 0..1, by name)."""
    rates: dict[str, float]
    figures: dict[str, Any]
    """The raw numbers, for readers other than the page."""


#: ``(store, run_id, notes) -> RunSummary | None``: ``notes`` collects a line
#: saying why a run has no summary.
SummaryFn = Callable[[Any, str, list[str]], RunSummary | None]

#: Env name -> ``module:function`` of its run summary.
RUN_SUMMARIES: dict[str, str] = {
    "crafter": "lorekit.envs.crafter.runs:run_summary",
    "miniwob": "lorekit.envs.miniwob.runs:run_summary",
}


def run_summary(env: str) -> SummaryFn | None:
    """The summary function of an env, imported now; None when the env has none."""
    spec = RUN_SUMMARIES.get(env)
    if spec is None:
        return None
    module, _, name = spec.partition(":")
    fn: SummaryFn = getattr(importlib.import_module(module), name)
    return fn
