"""Run-level summaries an env gives of its own runs, found by env name.

Some envs have figures of their own beyond success and reward (Crafter's
score and per-achievement success rates). The env computes them from the
recorded run, read through the few calls of
:class:`lorekit.envs.crafter.runs.RunSource`, and hands back a
:class:`RunSummary` the report draws as one section (a table row per run and
a bar chart of rates) without knowing the env. Adding one is a function in
the env's package and ``registry.add_summary(ENV, "module:function")`` in its
plugin; it is imported only when a report shows a run of that env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from lorekit.registry import REGISTRY


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


def run_summary(env: str) -> SummaryFn | None:
    """The summary function of an env, imported now; None when the env has none."""
    entry = REGISTRY.find("summary", env)
    if entry is None:
        return None
    fn: SummaryFn = entry.load()
    return fn
