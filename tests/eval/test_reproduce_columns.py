"""Per-column metrics of experiment files (lorekit/eval/reproduce_columns.py): a column
declares what it measures, the loader refuses a bad declaration naming file and field,
and the comparison computes each kind from the recorded episodes with its interval."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lorekit.eval.reproduce import ExperimentError, find_experiment, load_all, load_experiment
from lorekit.eval.reproduce_compare import (
    bootstrap_score,
    compare,
    markdown,
    recorded,
    score_of,
)

GOOD = """\
paper: P
source: Table 1
title: t
env: crafter
split: test
metric: success_rate
aggregation: one run
runnable: true
columns:
  - {name: all}
COLUMNS
rows:
  - {id: o, label: O, agent: oracle, published: PUBLISHED}
"""


def _experiment(tmp_path: Path, columns: str, published: str = "{all: 50.0}") -> Any:
    path = tmp_path / "cols.yaml"
    path.write_text(
        GOOD.replace("COLUMNS", columns).replace("PUBLISHED", published), encoding="utf-8"
    )
    return load_experiment(path)


@dataclass
class _Ep:
    success: bool
    info: dict[str, Any] = field(default_factory=dict)
    reward: float = 0.0
    steps: int = 1
    task_group: str | None = None
    status: str = "success"
    last_step_info: Any = None


@pytest.mark.parametrize(
    ("column", "where"),
    [
        ("{name: x, metric: median}", "cols.yaml: columns[1].metric: expected one of"),
        ("{name: x, metric: mean}", "cols.yaml: columns[1].value: missing"),
        ("{name: x, metric: crafter_score}", "cols.yaml: columns[1].value: missing"),
        ("{name: x, value: reward}", "cols.yaml: columns[1].value: metric"),
        ("{name: x, metric: mean, value: notes.depth}", "cols.yaml: columns[1].value: expected"),
        ("{name: x, metric: mean, value: info.}", "cols.yaml: columns[1].value: expected"),
        ("{name: x, metric: mean, value: steps, over: some}", "cols.yaml: columns[1].over:"),
        (
            "{name: x, metric: crafter_score, value: last_step.a, default: 1}",
            "cols.yaml: columns[1].default: a number, for metric mean only",
        ),
        ("{name: x, metric: mean, value: steps, default: one}", "cols.yaml: columns[1].default:"),
        ("{name: x, scale: 100}", "cols.yaml: columns[1].scale: a positive number"),
        ("{name: x, metric: mean, value: steps, scale: 0}", "cols.yaml: columns[1].scale:"),
        ("{name: x, colour: red}", "cols.yaml: columns[1].colour: unknown field"),
    ],
)
def test_a_bad_column_names_the_file_and_field(tmp_path: Path, column: str, where: str) -> None:
    with pytest.raises(ExperimentError) as info:
        _experiment(tmp_path, f"  - {column}")
    assert str(info.value).startswith(where), str(info.value)


def test_mean_over_successes_with_a_default_is_a_k_max(tmp_path: Path) -> None:
    """ADaPT's k_max: the depth reached by the successful episodes; an agent that
    records no depth counts as 1, a failed episode not at all."""
    exp = _experiment(
        tmp_path,
        "  - {name: k, metric: mean, value: info.notes.depth, over: successes, default: 1}",
        "{k: 1.9}",
    )
    eps = [
        _Ep(True, {"notes": {"depth": 2}}),
        _Ep(True, {"notes": {"depth": 3}}),
        _Ep(True, {"notes": {}}),
        _Ep(False, {"notes": {"depth": 4}}),
        _Ep(True, {"notes": {"depth": 9}}, status="error"),
    ]
    cells = {c.column: c for c in compare(exp, {"o": eps})}
    k = cells["k"]
    assert (k.ours, k.n, k.errored, k.metric) == (pytest.approx(2.0), 3, 1, "mean")
    assert k.low == pytest.approx(2.0 - 1.959964 * 1.0 / math.sqrt(3))
    assert k.published == 1.9 and k.episodes == 4 and k.over == "successes"  # 3 of 4 counted
    # three successes cannot tell 1.9 from 10% either way: no "compatible" on that
    assert k.verdict == "too few episodes" and k.compatible is None
    assert k.detect == pytest.approx(0.19) and k.power is not None and k.power < 0.5
    assert (cells["all"].ours, cells["all"].metric) == (pytest.approx(75.0), "success_rate")


def test_a_column_may_say_which_difference_matters(tmp_path: Path) -> None:
    exp = _experiment(
        tmp_path,
        "  - {name: k, metric: mean, value: info.d, detect: 5}",
        "{k: 2.0}",
    )
    eps = [_Ep(True, {"d": d}) for d in (1, 2, 3, 2, 2, 1, 3, 2)]
    cells = {c.column: c for c in compare(exp, {"o": eps}, paper_n={"": 8})}
    assert cells["k"].detect == 5.0 and cells["k"].verdict == "compatible"
    with pytest.raises(ExperimentError, match=r"cols.yaml: columns\[1\].detect: a positive"):
        _experiment(tmp_path, "  - {name: k, metric: mean, value: info.d, detect: 0}")


def test_mean_counts_lists_and_mappings_and_scales(tmp_path: Path) -> None:
    exp = _experiment(
        tmp_path,
        "  - {name: turns, metric: mean, value: info.turns}\n"
        "  - {name: got, metric: mean, value: last_step.got, scale: 10}\n"
        "  - {name: steps, metric: mean, value: steps}\n"
        "  - {name: r, metric: mean_reward, scale: 100}",
    )
    eps = [
        _Ep(True, {"turns": [1, 2, 3]}, reward=0.5, steps=4, last_step_info={"got": {"a": 1}}),
        _Ep(False, {"turns": [1]}, reward=0.25, steps=8, last_step_info={"got": {"a": 2, "b": 1}}),
    ]
    cells = {c.column: c for c in compare(exp, {"o": eps})}
    assert cells["turns"].ours == pytest.approx(2.0)
    assert cells["got"].ours == pytest.approx(15.0)  # 1 and 2 entries set, times 10
    assert cells["steps"].ours == pytest.approx(6.0)
    assert cells["r"].ours == pytest.approx(37.5)
    assert all(c.n == 2 for c in cells.values())


def test_a_column_with_no_value_in_any_episode_has_no_figure(tmp_path: Path) -> None:
    exp = _experiment(tmp_path, "  - {name: k, metric: mean, value: info.notes.depth}")
    (cell,) = [c for c in compare(exp, {"o": [_Ep(True)]}) if c.column == "k"]
    assert (cell.ours, cell.low, cell.n, cell.compatible) == (None, None, 0, None)


def test_the_crafter_score_is_the_geometric_mean_of_rates() -> None:
    # rates: a 100%, b 50%, c 0% -> exp(mean(ln(101), ln(51), ln(1))) - 1
    eps = [{"a": 1, "b": 0, "c": 0}, {"a": 2, "b": 1, "c": 0}]
    assert score_of(eps) == pytest.approx((101 * 51 * 1) ** (1 / 3) - 1)
    assert score_of([{"a": 0}]) == 0.0


def test_the_crafter_score_interval_is_a_bootstrap_over_episodes() -> None:
    eps = [{"a": int(i % 2 == 0), "b": int(i % 3 == 0)} for i in range(12)]
    score, low, high = bootstrap_score(eps)
    assert low < score < high
    assert bootstrap_score(eps) == (score, low, high)  # a fixed seed: the same interval
    assert bootstrap_score(eps[:1]) == (score_of(eps[:1]),) * 3
    same = [{"a": 1, "b": 0}] * 5  # no spread between episodes, none in the interval
    assert bootstrap_score(same) == (pytest.approx(math.sqrt(101) - 1),) * 3


def test_compare_computes_a_crafter_score_column(tmp_path: Path) -> None:
    exp = _experiment(
        tmp_path,
        "  - {name: score, metric: crafter_score, value: last_step.achievements}",
        "{score: {value: 20.0, spread: 1.0}}",
    )
    eps = [
        _Ep(False, last_step_info={"achievements": {"a": i % 2, "b": 1, "c": 0}}) for i in range(10)
    ] + [_Ep(False, last_step_info=None)]
    (cell,) = [c for c in compare(exp, {"o": eps}) if c.column == "score"]
    assert cell.metric == "crafter_score" and cell.n == 10
    assert cell.ours == pytest.approx((51 * 101 * 1) ** (1 / 3) - 1)
    assert cell.low is not None and cell.high is not None
    assert cell.low <= cell.ours <= cell.high and cell.high - cell.low > 1
    page = markdown(exp, compare(exp, {"o": eps}), "scripted")
    assert "- column score: Crafter score (%) over last_step.achievements" in page


class _Store:
    def __init__(self) -> None:
        self.steps_read: list[str] = []

    def episodes(self, run_id: str) -> list[Any]:
        @dataclass
        class E:
            episode_key: str
            task_group: str | None = "g"
            status: str = "success"
            success: int = 1
            reward: float = 2.0
            steps: int = 3
            info: Any = None

        return [E("k0"), E("k1")]

    def steps(self, run_id: str, episode_key: str) -> list[Any]:
        @dataclass
        class S:
            info: Any

        self.steps_read.append(episode_key)
        return [S({"n": 0}), S({"n": episode_key})]


def test_recorded_reads_the_last_step_only_when_a_column_needs_it(tmp_path: Path) -> None:
    store = _Store()
    plain = _experiment(tmp_path, "  - {name: s, metric: mean, value: steps}")
    assert [e.last_step_info for e in recorded(store, "r", plain)] == [None, None]
    assert store.steps_read == []
    final = _experiment(tmp_path, "  - {name: s, metric: crafter_score, value: last_step.n}")
    got = recorded(store, "r", final)
    assert [e.last_step_info for e in got] == [{"n": "k0"}, {"n": "k1"}]
    assert (got[0].success, got[0].reward, got[0].steps) == (True, 2.0, 3)


def test_the_shipped_tables_compute_their_other_columns() -> None:
    """The columns the papers report beside the success rate or reward are declared
    (none is left out with a note any more)."""
    kinds = {
        ("adapt-table3-textcraft-depth", "k_max depth 3"): "mean",
        ("agentkit-table1-crafter", "score"): "crafter_score",
        ("automanual-table3-ablation", "error steps"): "mean",
        ("laws-table1-spring-contexts", "score"): "crafter_score",
        ("laws-table2-rewards", "score"): "crafter_score",
    }
    for (exp_id, name), kind in kinds.items():
        column = next(c for c in find_experiment(exp_id).columns if c.name == name)
        assert column.metric == kind, (exp_id, name)
    for exp in load_all():
        assert "not compared here" not in exp.path.read_text(encoding="utf-8"), exp.id
    assert find_experiment("adapt-table3-textcraft-depth").row("adapt").published[
        "k_max depth 3"
    ].value == pytest.approx(2.8)
