"""The verdict rule of ``reproduce``: a two-sample comparison with the paper's own n, its
power to see a 10-point difference, and its error rates calibrated by a seeded
simulation of faithful reruns (false "differs" near 5%) and of real differences."""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass

import pytest

from lorekit.eval.reproduce import Figure, find_experiment
from lorekit.eval.reproduce_compare import compare
from lorekit.eval.reproduce_stats import (
    MIN_POWER,
    calls_differs,
    mean_test,
    proportion_test,
    published_se,
    wilson,
)

# Faithful reruns at the paper's n: the shipped tables' success rates run from 2% to
# 97% over 40 to 200 episodes per cell (TextCraft's depths, ALFWorld's 134 games,
# ADaPT's 200 goals).
RATES = (0.02, 0.15, 0.3, 0.52, 0.8, 0.95)
SIZES = (40, 134, 200)
REPS = 1000


def _one_sample_differs(paper: float, paper_n: int, n: int, reps: int, seed: int) -> float:
    """The old rule, for contrast: the published figure outside our Wilson interval."""
    rng = random.Random(seed)
    hits = 0
    for _ in range(reps):
        printed = sum(rng.random() < paper for _ in range(paper_n)) / paper_n
        wins = sum(rng.random() < paper for _ in range(n))
        low, high = wilson(wins, n)
        hits += not low <= printed <= high
    return hits / reps


def test_newcombe_interval_matches_the_published_example() -> None:
    # Newcombe (1998), Stat. Med. 17:873, Table II (a): 56/70 - 48/80, method 10
    test = proportion_test(56, 70, 48 / 80, 80)
    assert (round(test.low, 4), round(test.high, 4)) == (0.0524, 0.3339)
    assert test.differs and test.verdict == "differs"


def test_faithful_reruns_are_called_differs_about_five_percent_of_the_time() -> None:
    rates = {
        (p, n): calls_differs(p, n, p, n, reps=REPS, seed=i)["differs"]
        for i, (p, n) in enumerate((p, n) for p in RATES for n in SIZES)
    }
    mean = sum(rates.values()) / len(rates)
    assert 0.03 <= mean <= 0.06, rates
    assert max(rates.values()) <= 0.08, rates  # no cell far above nominal
    # the one-sample rule this replaces: about 17% at p=0.5, n=200 (the figure)
    assert _one_sample_differs(0.5, 200, 200, 400, seed=1) > 0.12


def test_the_power_printed_is_the_power_a_real_difference_meets() -> None:
    """A real 10-point difference (towards 50%, the harder side) is called "differs" as
    often as the reported power says: within 8 points (simulation error of 1,000 pairs,
    and the normal approximation at a handful of expected successes)."""
    for i, (p, n) in enumerate((p, n) for p in RATES for n in SIZES):
        shifted = p + 0.1 if p < 0.5 else p - 0.1
        reported = proportion_test(round(p * n), n, p, n).power
        assert reported is not None
        found = calls_differs(p, n, shifted, n, reps=REPS, seed=100 + i)["differs"]
        assert abs(found - reported) <= 0.08, (p, n, found, reported)


def test_the_rule_is_seeded() -> None:
    assert calls_differs(0.3, 134, 0.4, 134, seed=5) == calls_differs(0.3, 134, 0.4, 134, seed=5)
    assert calls_differs(0.3, 134, 0.4, 134, seed=5) != calls_differs(0.3, 134, 0.4, 134, seed=6)


def test_three_of_two_hundred_are_too_few_episodes() -> None:
    """A 3-episode run of a 200-goal table cannot tell 19% from 29% or 9%: it is no
    evidence of "compatible", whatever it scored."""
    for wins in (0, 1):
        test = proportion_test(wins, 3, 0.19, 200)
        assert test.verdict == "too few episodes"
        assert test.power is not None and test.power < 0.2
        assert test.needed is not None and test.needed > 3
        assert proportion_test(wins, test.needed, 0.19, 200).power >= MIN_POWER  # type: ignore[operator]
        assert proportion_test(wins, test.needed - 1, 0.19, 200).power < MIN_POWER  # type: ignore[operator]
    # ... while a clear miss is a difference even at a few episodes
    assert proportion_test(0, 12, 0.8, 134).verdict == "differs"


def test_a_full_rerun_at_the_papers_n_is_compatible() -> None:
    test = proportion_test(104, 200, 0.52, 200)
    assert test.verdict == "compatible" and test.power is not None and test.power >= 0.5
    assert test.low < 0 < test.high and test.high - test.low < 0.2  # narrower than +-10 points


def test_a_paper_with_few_episodes_limits_the_power_whatever_we_play() -> None:
    test = proportion_test(20, 40, 0.5, 40)
    assert test.verdict == "too few episodes" and test.needed is None  # out of reach
    assert proportion_test(5000, 10000, 0.5, 40).verdict == "too few episodes"


def test_means_count_the_papers_error_too() -> None:
    # ours 12.0 [11.0, 13.0] over 10 episodes against 12.8 over 3 trials, std 2.1
    se = published_se(2.1, 3, "standard deviation over 3 trials")
    assert se == pytest.approx(2.1 / math.sqrt(3))
    assert published_se(2.1, 3, "as printed (its kind is not stated)") == 2.1  # the wider reading
    assert published_se(None, 3, None) is None
    test = mean_test(12.0, 11.0, 13.0, 10, 12.8, 3, detect=1.28, published_se=se)
    combined = math.sqrt(1.0 + (1.959964 * se) ** 2)  # ours' half-width 1.0 and the paper's
    assert (test.low, test.high) == (pytest.approx(-0.8 - combined), pytest.approx(-0.8 + combined))
    assert test.verdict == "too few episodes"  # 3 trials cannot tell 10%
    # without a published spread the paper's error is ours per episode at its n
    alone = mean_test(12.0, 11.0, 13.0, 10, 12.8, 10, detect=1.28)
    assert alone.high - alone.low == pytest.approx(2 * math.sqrt(2) * 1.0)
    one = mean_test(5.0, 5.0, 5.0, 1, 1.0, 3, detect=0.1)
    assert one.power is None and one.verdict == "too few episodes"  # one episode: no spread


@dataclass(frozen=True)
class _Ep:
    task_group: str
    status: str
    success: bool
    reward: float


def test_a_shipped_table_compared_end_to_end_is_calibrated() -> None:
    """The wiring, not only the formula: ADaPT's TextCraft Table 2 (5 rows, 200 goals),
    rerun faithfully 200 times through :func:`compare` with the paper's n from the plan,
    the published figures themselves drawn as the paper's run would have drawn them."""
    exp = find_experiment("adapt-table2-textcraft")
    rng = random.Random(7)
    hits = cells = 0
    for _ in range(200):
        rows, episodes = [], {}
        for row in exp.rows:
            p = row.published["success"].value / 100.0
            printed = round(100.0 * sum(rng.random() < p for _ in range(200)) / 200, 1)
            rows.append(dataclasses.replace(row, published={"success": Figure(printed)}))
            episodes[row.id] = [
                _Ep("depth-2", "success", rng.random() < p, 0.0) for _ in range(200)
            ]
        table = dataclasses.replace(exp, rows=tuple(rows))
        for cell in compare(table, episodes, paper_n={"": 200}):
            assert cell.paper_n == 200 and cell.verdict != "too few episodes"
            hits += cell.verdict == "differs"
            cells += 1
    assert 0.025 <= hits / cells <= 0.075, hits / cells


def test_a_rate_out_of_range_in_a_file_is_read_as_a_rate() -> None:
    assert proportion_test(3, 3, 1.2, 10).verdict in ("compatible", "too few episodes")
    assert proportion_test(0, 3, -0.1, 10, detect=2.0).power is not None  # no side in range
