"""Our figures beside the published ones: each cell with a 95% interval and a verdict.

A success rate gets a Wilson interval (sound at the small ``-n`` a first check
uses, and at 0% or 100%); a mean reward, or the mean of another per-episode
value (a column's own metric, :mod:`lorekit.eval.reproduce_columns`), a normal
one from the episodes' spread; a Crafter score, a geometric mean over
achievements that has no closed-form spread, a percentile bootstrap over
episodes.
The verdict compares two samples, ours and the paper's (its n is the
experiment's tasks in the column's group): *differs*, *compatible*, or *too few
episodes* where no difference that matters could have been seen
(:mod:`lorekit.eval.reproduce_stats`). A run whose setup is not the
experiment's gets its figures and no verdict (*setup differs*).
Errored episodes are left out of the figures and counted apart, as a run that
did not finish is no evidence either way.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from lorekit.eval import reproduce_stats as stats
from lorekit.eval.reproduce import Experiment, Figure
from lorekit.eval.reproduce_columns import Column, as_number, read_path
from lorekit.eval.reproduce_stats import Z95 as Z95  # re-exported
from lorekit.eval.reproduce_stats import wilson as wilson  # re-exported
from lorekit.eval.reproduce_text import HEADERS as HEADERS  # re-exported
from lorekit.eval.reproduce_text import cell_texts as _texts

BOOTSTRAP_SAMPLES = 2000
SETUP_DIFFERS = "setup differs"


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
    """One row and column: the published figure beside ours, and the verdict."""

    row: str
    label: str
    column: str
    published: float | None
    published_spread: float | None
    ours: float | None
    low: float | None
    high: float | None
    n: int
    """The episodes the figure counts (for ``over: successes``, the successful ones)."""
    errored: int
    run_id: str | None
    metric: str = "success_rate"
    """What the column measures (see :data:`lorekit.eval.reproduce_columns.COLUMN_METRICS`)."""
    episodes: int = 0
    """The column's finished episodes (its task group's), whatever the figure counts."""
    over: str = "all"
    paper_n: int | None = None
    """The episodes behind the published figure (the experiment's tasks in the group)."""
    diff_low: float | None = None
    diff_high: float | None = None
    """The 95% interval of ours minus the published figure, both samples' error in it."""
    power: float | None = None
    needed: int | None = None
    detect: float | None = None
    """The difference that matters, in the figure's units (its power is ``power``)."""
    verdict: str = "-"
    """compatible, differs, too few episodes, setup differs, or - (nothing to compare)."""

    @property
    def difference(self) -> float | None:
        if self.ours is None or self.published is None:
            return None
        return self.ours - self.published

    @property
    def compatible(self) -> bool | None:
        return {"compatible": True, "differs": False}.get(self.verdict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["difference"] = self.difference
        out["compatible"] = self.compatible
        return out


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
    *,
    paper_n: Mapping[str, int] | None = None,
    compared: bool = True,
) -> list[Cell]:
    """A cell per (row, column) of the rows in ``episodes`` (row id -> its episodes).

    ``paper_n`` gives the episodes behind each published figure by task group (``""``:
    all of them; :attr:`lorekit.eval.reproduce_sample.TaskPlan.paper_n`); without it the
    experiment's ``episodes``, else as many as ours. ``compared=False`` (a setup that is
    not the experiment's) computes the figures and gives no verdict."""
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
            cell = Cell(
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
                episodes=len(done),
                over=column.over,
            )
            cells.append(_judged(experiment, column, cell, paper_n, compared))
    return cells


def _judged(
    experiment: Experiment,
    column: Column,
    cell: Cell,
    paper_n: Mapping[str, int] | None,
    compared: bool,
) -> Cell:
    """The cell with its two-sample test and verdict (none for another setup)."""
    if cell.published is None or cell.ours is None or cell.low is None or cell.high is None:
        return cell
    if not compared:
        return _replace(cell, verdict=SETUP_DIFFERS)
    n0 = (paper_n or {}).get(column.group or "") or experiment.episodes or cell.episodes
    if column.over == "successes" and cell.episodes:  # the paper's successes, at our share
        n0 = max(1, round(n0 * cell.n / cell.episodes))
    se0 = stats.published_se(cell.published_spread, n0, experiment.spread_kind)
    if cell.metric == "success_rate":
        wins = round(cell.ours * cell.n / 100.0)
        test = stats.proportion_test(
            wins,
            cell.n,
            cell.published / 100.0,
            n0,
            None if se0 is None else se0 / 100.0,
            detect=(column.detect or stats.DETECT_POINTS) / 100.0,
        )
        k = 100.0
    else:
        detect = column.detect or _detect(experiment, column, cell)
        test = stats.mean_test(
            cell.ours, cell.low, cell.high, cell.n, cell.published, n0, detect, se0
        )
        k = 1.0
    return _replace(
        cell,
        paper_n=n0,
        diff_low=None if test.low is None else k * test.low,
        diff_high=None if test.high is None else k * test.high,
        power=test.power,
        needed=test.needed,
        detect=k * test.detect,
        verdict=test.verdict,
    )


def _replace(cell: Cell, **changes: Any) -> Cell:
    return Cell(**{**asdict(cell), **changes})


def _detect(experiment: Experiment, column: Column, cell: Cell) -> float:
    """The difference that matters for a column without its own ``detect``: 10 points
    on a percent figure (a Crafter score, a reward times 100), else 10% of the figure."""
    scale = column.scale or (experiment.scale if cell.metric == "mean_reward" else 1.0)
    if cell.metric == "crafter_score" or scale == 100.0:
        return stats.DETECT_POINTS
    return stats.DETECT_SHARE * abs(cell.published or 0.0) or stats.DETECT_SHARE


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
    if not done or metric == "usd":  # usd: priced from the store (cli/reproduce_rows.py)
        return (None, None, None, len(done))
    if metric == "success_rate":
        wins = sum(1 for e in done if e.success)
        low, high = wilson(wins, len(done))
        return (100.0 * wins / len(done), 100.0 * low, 100.0 * high, len(done))
    mean, low, high = mean_interval([float(e.reward) for e in done])
    k = column.scale or experiment.scale
    return (k * mean, k * low, k * high, len(done))


def cell_texts(cell: Cell) -> list[str]:
    """The printed columns of one cell (see :data:`HEADERS`)."""
    return _texts(cell.to_dict())


VERDICT_RULE = (
    "verdict: two samples, ours and the paper's (its n: the experiment's tasks in the "
    "column's group); differs when the 95% interval of the difference excludes 0 "
    "(Newcombe's for success rates); too few episodes when a real difference of 10 points "
    "(10% of a figure that is no percentage) would be found less than half the time"
)


def markdown(
    experiment: Experiment,
    cells: Sequence[Cell],
    models: str,
    notes: Sequence[str] = (),
    split: str | None = None,
) -> str:
    """The comparison as a Markdown page: what was run (``split``: the one played, when
    not the experiment's), with which models, on which tasks (``notes``: the tasks, the
    setup), and the table."""
    played = split or experiment.split
    theirs = "" if played == experiment.split else f" (the experiment's: {experiment.split})"
    lines = [
        f"# {experiment.paper}: {experiment.source}",
        "",
        experiment.title,
        "",
        f"- env: {experiment.env}, split {played}{theirs}; metric: {experiment.metric}",
        *(
            f"- column {c.name}: {column_metric_text(c)}"
            for c in experiment.columns
            if c.metric is not None
        ),
        f"- models that answered here: {models}",
        f"- aggregation in the paper: {experiment.aggregation}",
        *(f"- {note}" for note in notes),
        f"- {VERDICT_RULE}",
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


def recorded(
    store: EpisodeSource,
    run_id: str,
    experiment: Experiment,
    keys: Collection[str] | None = None,
) -> list[Recorded]:
    """A run's episodes as :func:`compare` reads them: those of ``keys`` only, where
    given (the episodes this command planned: a run resumed with a smaller ``-n`` holds
    more). Each one's last step is read only when a column reads ``last_step.``."""
    last = any(c.reads_last_step for c in experiment.columns)
    out = []
    for e in store.episodes(run_id):
        if keys is not None and e.episode_key not in keys:
            continue
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
