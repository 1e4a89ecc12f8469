"""Our figures beside the published ones: each cell with a 95% interval and a verdict.

A success rate gets a Wilson interval (sound at the small ``-n`` a first check
uses, and at 0% or 100%); a mean reward, or the mean of another per-episode
value (a column's own metric, :mod:`lorekit.eval.reproduce_columns`), a normal
one from the episodes' spread; a Crafter score, a geometric mean over
achievements that has no closed-form spread, a percentile bootstrap over
episodes.
Ours and the paper's are *compatible* when the published figure lies inside our
interval, or, where the paper gives a spread, when the two ranges overlap.
Errored episodes are left out of the figures and counted apart, as a run that
did not finish is no evidence either way.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from lorekit.eval.reproduce import Experiment, Figure
from lorekit.eval.reproduce_columns import Column, as_number, read_path

Z95 = 1.959964
BOOTSTRAP_SAMPLES = 2000


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
    metric: str = "success_rate"
    """What the column measures (see :data:`lorekit.eval.reproduce_columns.COLUMN_METRICS`)."""

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


def geometric_score(rates: Sequence[float]) -> float:
    """The geometric mean with a 1% offset of rates in percent: Crafter's score."""
    return math.exp(sum(math.log(1.0 + r) for r in rates) / len(rates)) - 1.0


def score_of(episodes: Sequence[Mapping[str, Any]]) -> float:
    """The score of per-episode mappings (key -> count): the rate at which each key
    seen in any episode is positive, in percent, then :func:`geometric_score`."""
    keys = sorted({k for ep in episodes for k in ep})
    if not keys:
        return 0.0
    n = len(episodes)
    rates = [100.0 * sum(1 for ep in episodes if (as_number(ep.get(k)) or 0) > 0) / n for k in keys]
    return geometric_score(rates)


def bootstrap_score(
    episodes: Sequence[Mapping[str, Any]], samples: int = BOOTSTRAP_SAMPLES, seed: int = 0
) -> tuple[float, float, float]:
    """The score and a 95% percentile bootstrap interval, resampling episodes (a
    fixed seed: the same episodes always give the same interval)."""
    score = score_of(episodes)
    if len(episodes) < 2:
        return (score, score, score)
    draw = random.Random(seed)
    n = len(episodes)
    scores = sorted(
        score_of([episodes[draw.randrange(n)] for _ in range(n)]) for _ in range(samples)
    )
    return (score, scores[int(0.025 * (samples - 1))], scores[int(0.975 * (samples - 1))])


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
            counted = [e for e in done if column.over == "all" or e.success]
            ours, low, high, n = _figure(experiment, column, counted)
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
                    n,
                    len(picked) - len(done),
                    (run_ids or {}).get(row.id),
                    column.metric or experiment.metric,
                )
            )
    return cells


def _figure(
    experiment: Experiment, column: Column, done: Sequence[EpisodeLike]
) -> tuple[float | None, float | None, float | None, int]:
    """Our figure, its interval and the episodes it counts, by the column's metric."""
    metric = column.metric or experiment.metric
    if metric in ("mean", "crafter_score"):
        assert column.value is not None  # the loader requires it
        values = [read_path(e, column.value) for e in done]
        if metric == "crafter_score":
            maps = [v for v in values if isinstance(v, Mapping)]
            return (*bootstrap_score(maps), len(maps)) if maps else (None, None, None, 0)
        numbers = [column.default if x is None else x for x in map(as_number, values)]
        kept = [x for x in numbers if x is not None]
        if not kept:
            return (None, None, None, 0)
        k = column.scale or 1.0
        mean, low, high = mean_interval(kept)
        return (k * mean, k * low, k * high, len(kept))
    if not done or metric == "usd":  # usd: priced from the store (reproduce_plan)
        return (None, None, None, len(done))
    if metric == "success_rate":
        wins = sum(1 for e in done if e.success)
        low, high = wilson(wins, len(done))
        return (100.0 * wins / len(done), 100.0 * low, 100.0 * high, len(done))
    mean, low, high = mean_interval([float(e.reward) for e in done])
    k = column.scale or experiment.scale
    return (k * mean, k * low, k * high, len(done))


def _num(value: float | None, spread: float | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" + (f" ± {spread:.1f}" if spread is not None else "")


def cell_texts(cell: Cell) -> list[str]:
    """The printed columns of one cell (see :data:`HEADERS`)."""
    ours = "-" if cell.ours is None else f"{cell.ours:.1f}"
    if cell.ours is not None and cell.low is not None and cell.high is not None:
        ours += f" [{cell.low:.1f}, {cell.high:.1f}]"  # a usd cell has no interval
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
        *(
            f"- column {c.name}: {column_metric_text(c)}"
            for c in experiment.columns
            if c.metric is not None
        ),
        f"- models that answered here: {models}",
        f"- aggregation in the paper: {experiment.aggregation}",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "---|" * len(HEADERS),
    ]
    lines += ["| " + " | ".join(cell_texts(c)) + " |" for c in cells]
    return "\n".join(lines) + "\n"


def column_metric_text(column: Column) -> str:
    """What a column with its own metric measures, in words for the saved page."""
    over = " of successful episodes" if column.over == "successes" else ""
    default = f" (absent: {column.default:g})" if column.default is not None else ""
    if column.metric == "crafter_score":
        return f"Crafter score (%) over {column.value}{over}; 95% bootstrap interval"
    if column.metric == "mean":
        return f"mean of {column.value}{over}{default}"
    return f"{column.metric}{over}"


@dataclass(frozen=True, slots=True)
class Recorded:
    """A recorded episode with, where a column needs it, its last step's info."""

    task_group: str | None
    status: str
    success: bool
    reward: float
    steps: int
    info: Any
    last_step_info: Any = None


class EpisodeSource(Protocol):
    """The store's reads that :func:`recorded` uses."""

    def episodes(self, run_id: str) -> Sequence[Any]: ...
    def steps(self, run_id: str, episode_key: str) -> Sequence[Any]: ...


def recorded(store: EpisodeSource, run_id: str, experiment: Experiment) -> list[Recorded]:
    """A run's episodes as :func:`compare` reads them; each one's last step is read
    only when a column of the experiment reads ``last_step.``."""
    last = any(c.reads_last_step for c in experiment.columns)
    out = []
    for e in store.episodes(run_id):
        final = store.steps(run_id, e.episode_key)[-1:] if last else []
        out.append(
            Recorded(
                e.task_group,
                e.status,
                bool(e.success),
                float(e.reward),
                int(e.steps),
                e.info,
                final[0].info if final else None,
            )
        )
    return out
