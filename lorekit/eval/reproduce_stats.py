"""The verdict of one cell: our figure against the published one, both of them samples.

A published figure is itself a measurement over the paper's episodes, so a
faithful rerun differs from it by the sampling error of both. Asking only
whether the published figure lies inside *our* interval ignores the paper's
half and calls a faithful rerun at the paper's n "differs" in about 17% of
cells instead of 5%. The rule here is a two-sample one:

- success rates: Newcombe's hybrid score interval of the difference (Wilson
  intervals of both proportions, combined; sound at 0%, 100% and small n);
- means and scores: our interval's half-widths combined with the paper's
  standard error, from its published spread, or, where it gives none, from our
  per-episode spread at the paper's n (the same spread per episode).

The cell *differs* when the 95% interval of the difference excludes zero. When
it does not, the cell is *compatible* only if the comparison could have seen a
difference that matters (:data:`DETECT_POINTS` points on percent figures,
:data:`DETECT_SHARE` of the figure on others): its power to find one must be at
least :data:`MIN_POWER`, which is the same as the difference's interval being
narrower than plus or minus that difference. Otherwise the cell says *too few
episodes*, with the power and the episodes that would reach it. The rule's
error rates are measured by simulation (:func:`calls_differs`, and the test
that calibrates it).
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

Z95 = 1.959964
DETECT_POINTS = 10.0
"""The smallest difference that matters on a percent figure (success rate, score)."""
DETECT_SHARE = 0.10
"""The smallest difference that matters on other figures, as a share of the published one."""
MIN_POWER = 0.5
"""A comparison below this power for a :data:`DETECT_POINTS` difference has too few
episodes: a real difference of that size would be missed more often than found. At this
power the 95% interval of the difference is as wide as that difference on each side."""
MAX_EPISODES = 1_000_000
"""The most episodes :func:`episodes_needed` considers before calling the power out of reach."""


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion, as fractions (``successes`` may be a
    published rate times its n, so not a whole number)."""
    if n <= 0:
        return (0.0, 1.0)
    p = min(1.0, max(0.0, successes / n))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def power_at(delta: float, se: float, z: float = Z95) -> float:
    """The chance that a two-sided test at ``z`` finds a true difference ``delta`` whose
    estimate has standard error ``se``."""
    if se <= 0:
        return 1.0 if delta > 0 else 0.0
    return _phi(delta / se - z) + _phi(-delta / se - z)


@dataclass(frozen=True, slots=True)
class Test:
    """The two-sample comparison of one cell, in the figure's units."""

    low: float | None
    """The 95% interval of ours minus the published figure (None: unknown, one episode of
    a mean, which has no spread)."""
    high: float | None
    power: float | None
    """The chance of calling a real difference of ``detect`` "differs" (None: unknown,
    e.g. one episode of a mean, which has no spread)."""
    needed: int | None
    """Our episodes that would give :data:`MIN_POWER` at the paper's n (None: none would,
    the paper's own n is too small; or unknown)."""
    detect: float

    @property
    def differs(self) -> bool:
        if self.low is None or self.high is None:
            return False
        return self.low > 0 or self.high < 0

    @property
    def verdict(self) -> str:
        if self.differs:
            return "differs"
        if self.power is None or self.power < MIN_POWER:
            return "too few episodes"
        return "compatible"


def _wilson_se(p: float, n: int) -> float:
    """A standard error from the Wilson interval's width (not zero at 0% or 100%)."""
    low, high = wilson(p * n, n)
    return (high - low) / (2 * Z95)


def _smallest(n_from: int, reaches: Callable[[int], bool]) -> int | None:
    """The smallest n >= ``n_from`` for which ``reaches(n)``, which holds for every n
    past the first (bisection); None when even :data:`MAX_EPISODES` does not."""
    if not reaches(MAX_EPISODES):
        return None
    low, high = n_from, MAX_EPISODES
    while low < high:
        mid = (low + high) // 2
        if reaches(mid):
            high = mid
        else:
            low = mid + 1
    return low


def proportion_test(
    successes: int,
    n: int,
    published: float,
    paper_n: int,
    published_se: float | None = None,
    *,
    detect: float = DETECT_POINTS / 100.0,
    needed: bool = True,
) -> Test:
    """Ours (``successes`` of ``n``) against a published rate (a fraction) measured over
    ``paper_n`` episodes; fractions throughout. ``published_se``, where the paper gives a
    spread, stands for the paper's Wilson interval. ``detect`` is the difference that
    matters (10 points). ``needed=False`` skips the search for
    the episodes that would be enough (the simulation does not read it)."""
    p1, p0 = successes / n, min(1.0, max(0.0, published))  # a rate, whatever a file says
    low1, high1 = wilson(successes, n)
    if published_se is None:
        low0, high0 = wilson(p0 * paper_n, paper_n)
        minus0, plus0 = p0 - low0, high0 - p0
        se0 = _wilson_se(p0, paper_n)
    else:
        minus0 = plus0 = Z95 * published_se
        se0 = published_se
    d = p1 - p0
    low = d - math.sqrt((p1 - low1) ** 2 + plus0**2)
    high = d + math.sqrt((high1 - p1) ** 2 + minus0**2)
    delta = detect

    def power(k: int) -> float:
        sides = [p0 + s * delta for s in (1, -1) if 0.0 <= p0 + s * delta <= 1.0] or [p0]
        return min(power_at(delta, math.sqrt(_wilson_se(p, k) ** 2 + se0**2)) for p in sides)

    enough = _smallest(1, lambda k: power(k) >= MIN_POWER) if needed else None
    return Test(low, high, power(n), enough, delta)


def mean_test(
    ours: float,
    low: float,
    high: float,
    n: int,
    published: float,
    paper_n: int,
    detect: float,
    published_se: float | None = None,
) -> Test:
    """Ours (a mean or score with its 95% interval over ``n`` episodes) against a published
    figure over ``paper_n`` episodes. Without ``published_se`` the paper's error is taken
    from our per-episode spread at its n. One episode has no spread: power unknown."""
    if n < 2:
        return Test(None, None, None, None, detect)
    se1 = (high - low) / (2 * Z95)
    spread = se1 * math.sqrt(n)  # per episode
    se0 = published_se if published_se is not None else spread / math.sqrt(max(paper_n, 1))
    d = ours - published
    h0 = Z95 * se0
    out_low = d - math.sqrt((ours - low) ** 2 + h0**2)
    out_high = d + math.sqrt((high - ours) ** 2 + h0**2)

    def power(k: int) -> float:
        return power_at(detect, math.sqrt(spread**2 / k + se0**2))

    return Test(out_low, out_high, power(n), _smallest(2, lambda k: power(k) >= MIN_POWER), detect)


def published_se(spread: float | None, paper_n: int, spread_kind: str | None) -> float | None:
    """The standard error of a published figure from the spread printed beside it.

    A spread the experiment calls a standard deviation is one over the paper's
    ``paper_n`` episodes or trials (the papers' "mean ± std over 3 trials"); any other,
    stated or not, is read as the figure's standard error, the wider reading, so
    that a spread of unknown kind never makes "differs" likelier."""
    if spread is None:
        return None
    kind = (spread_kind or "").lower()
    if "standard deviation" in kind or "std" in kind.split():
        return spread / math.sqrt(max(paper_n, 1))
    return spread


# ---------------------------------------------------------------- calibration
class Binomial:
    """Seeded draws of Binomial(n, p) by inverting its cumulative distribution (the
    standard library has no binomial draw before Python 3.12)."""

    def __init__(self, n: int, p: float) -> None:
        self.n = n
        cdf, total = [], 0.0
        log_p = math.log(p) if p > 0 else -math.inf
        log_q = math.log1p(-p) if p < 1 else -math.inf
        for k in range(n + 1):
            log_c = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            term = log_c + (k * log_p if k else 0.0) + ((n - k) * log_q if n - k else 0.0)
            total += math.exp(term) if term > -745 else 0.0
            cdf.append(total)
        self.cdf = [c / total for c in cdf]

    def draw(self, rng: random.Random) -> int:
        return min(self.n, bisect.bisect_left(self.cdf, rng.random()))


def calls_differs(
    true_paper: float,
    paper_n: int,
    true_ours: float,
    n: int,
    *,
    reps: int = 1000,
    seed: int = 0,
) -> dict[str, float]:
    """How often the rule says each verdict when the paper's episodes succeed at
    ``true_paper`` and ours at ``true_ours`` (fractions): ``reps`` simulated pairs of
    tables, seeded. With equal rates the share of "differs" is the rule's false-alarm
    rate; with a real difference, its power. The published figure is the simulated
    paper's rounded to a tenth of a point, as papers print it."""
    rng = random.Random(seed)
    paper, ours = Binomial(paper_n, true_paper), Binomial(n, true_ours)
    seen: dict[tuple[int, int], str] = {}
    counts: dict[str, int] = {"differs": 0, "compatible": 0, "too few episodes": 0}
    for _ in range(reps):
        key = (paper.draw(rng), ours.draw(rng))
        if key not in seen:
            printed = round(100.0 * key[0] / paper_n, 1) / 100.0
            seen[key] = proportion_test(key[1], n, printed, paper_n, needed=False).verdict
        counts[seen[key]] += 1
    return {k: v / reps for k, v in counts.items()}
