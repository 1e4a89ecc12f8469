"""Our figures beside the published ones: each cell with a 95% interval and a verdict.

A success rate gets a Wilson interval (sound at the small ``-n`` a first check
uses, and at 0% or 100%); a mean reward a normal one from the episodes' spread.
Ours and the paper's are *compatible* when the published figure lies inside our
interval, or, where the paper gives a spread, when the two ranges overlap.
Errored episodes are left out of the figures and counted apart, as a run that
did not finish is no evidence either way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from lorekit.eval.reproduce import Experiment, Figure

Z95 = 1.959964


class EpisodeLike(Protocol):
    """What the comparison reads of a recorded episode."""

    @property
    def task_group(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def success(self) -> bool: ...
    @property
    def reward(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Cell:
    """One row and column: the published figure beside ours."""

    row: str
    label: str
    column: str
    published: float | None
    published_spread: float | None
    ours: float | None
    low: float | None
    high: float | None
    n: int
    errored: int
    run_id: str | None

    @property
    def difference(self) -> float | None:
        if self.ours is None or self.published is None:
            return None
        return self.ours - self.published

    @property
    def compatible(self) -> bool | None:
        if self.published is None or self.low is None or self.high is None:
            return None
        spread = self.published_spread or 0.0
        return self.published + spread >= self.low and self.published - spread <= self.high

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["difference"] = self.difference
        out["compatible"] = self.compatible
        return out


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion, as fractions."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean and normal 95% interval (the interval is the mean itself for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return (mean, mean, mean)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = z * sd / math.sqrt(n)
    return (mean, mean - half, mean + half)


def compare(
    experiment: Experiment,
    episodes: Mapping[str, Sequence[EpisodeLike]],
    run_ids: Mapping[str, str] | None = None,
) -> list[Cell]:
    """A cell per (row, column) of the rows in ``episodes`` (row id -> its episodes)."""
    cells = []
    for row in experiment.rows:
        if row.id not in episodes:
            continue
        for column in experiment.columns:
            picked = [e for e in episodes[row.id] if column.group in (None, e.task_group)]
            done = [e for e in picked if e.status != "error"]
            ours, low, high = _figure(experiment, done)
            figure = row.published.get(column.name, Figure(math.nan))
            known = not math.isnan(figure.value)
            cells.append(
                Cell(
                    row.id,
                    row.label,
                    column.name,
                    figure.value if known else None,
                    figure.spread if known else None,
                    ours,
                    low,
                    high,
                    len(done),
                    len(picked) - len(done),
                    (run_ids or {}).get(row.id),
                )
            )
    return cells


def _figure(
    experiment: Experiment, done: Sequence[EpisodeLike]
) -> tuple[float | None, float | None, float | None]:
    if not done:
        return (None, None, None)
    if experiment.metric == "success_rate":
        wins = sum(1 for e in done if e.success)
        low, high = wilson(wins, len(done))
        return (100.0 * wins / len(done), 100.0 * low, 100.0 * high)
    mean, low, high = mean_interval([float(e.reward) for e in done])
    k = experiment.scale
    return (k * mean, k * low, k * high)


def _num(value: float | None, spread: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" + (f" ± {spread:.1f}" if spread is not None else "")


def cell_texts(cell: Cell) -> list[str]:
    """The printed columns of one cell (see :data:`HEADERS`)."""
    ours = "-" if cell.ours is None else f"{cell.ours:.1f} [{cell.low:.1f}, {cell.high:.1f}]"
    diff = "-" if cell.difference is None else f"{cell.difference:+.1f}"
    verdict = {True: "compatible", False: "differs", None: "-"}[cell.compatible]
    n = str(cell.n) + (f" (+{cell.errored} errored)" if cell.errored else "")
    return [
        cell.label,
        cell.column,
        _num(cell.published, cell.published_spread),
        ours,
        n,
        diff,
        verdict,
    ]


HEADERS = ["row", "column", "published", "ours [95% CI]", "episodes", "diff", "verdict"]


def markdown(experiment: Experiment, cells: Sequence[Cell], models: str) -> str:
    """The comparison as a Markdown page: what was run, with which models, and the table."""
    lines = [
        f"# {experiment.paper}: {experiment.source}",
        "",
        experiment.title,
        "",
        f"- env: {experiment.env}, split {experiment.split}; metric: {experiment.metric}",
        f"- models that answered here: {models}",
        f"- aggregation in the paper: {experiment.aggregation}",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "---|" * len(HEADERS),
    ]
    lines += ["| " + " | ".join(cell_texts(c)) + " |" for c in cells]
    return "\n".join(lines) + "\n"
