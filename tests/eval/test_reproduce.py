"""Experiment files (lorekit/experiments): they read, their runnable rows build, their
figures are the papers', and a bad file is refused naming the file and the field."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from lorekit.eval.reproduce import (
    ExperimentError,
    build_check,
    find_experiment,
    load_all,
    load_experiment,
)
from lorekit.eval.reproduce_compare import compare, wilson

PAPERS = Path("/work/shared/papers")
PAPER_FILES = {
    "ADaPT": "002_e2fe5cd185f5b324.txt",
    "AutoManual": "001_2759e5563d967396.txt",
    "AgentKit": "000_1c4add3c23dbe0ef.txt",
    "S-Agents": "003_a01012e624e6c7b1.txt",
    "From Laws": "004_ef8407d4ce8702f5.txt",
}
DERIVED = {
    ("adapt-table1-alfworld", "adapt", "All"): "43.3 + 28.3 points (Sec. 5)",
    ("laws-table1-spring-contexts", "experience", "reward"): "9.94+1.0: 9.9 ± 1.0",
    ("laws-table1-spring-contexts", "action", "reward"): "1.3+04: 1.3 ± 0.4",
    ("laws-table1-spring-contexts", "paper", "score"): "84+14: 8.4 ± 1.4",
}
"""Figures our text copy does not print as such, and how they follow from it."""

EXPERIMENTS = load_all()


def test_every_paper_has_an_experiment() -> None:
    papers = {next(k for k in PAPER_FILES if e.paper.startswith(k)) for e in EXPERIMENTS}
    assert papers == set(PAPER_FILES)


@pytest.mark.parametrize("exp", EXPERIMENTS, ids=lambda e: e.id)
def test_runnable_rows_build_their_agent_and_env(exp) -> None:  # type: ignore[no-untyped-def]
    problems = build_check(exp)
    env = problems.pop("env", None)
    assert problems == {}
    if env is not None:  # only data that is not on this machine, and the file says so
        assert exp.needs_data and "fetch-data" in env


@pytest.mark.parametrize("exp", EXPERIMENTS, ids=lambda e: e.id)
def test_published_figures_are_in_the_paper(exp) -> None:  # type: ignore[no-untyped-def]
    name = next(v for k, v in PAPER_FILES.items() if exp.paper.startswith(k))
    if not (PAPERS / name).is_file():
        pytest.skip("the papers' text is not on this machine")
    text = (PAPERS / name).read_text(encoding="utf-8")
    for row in exp.rows:
        for column, figure in row.published.items():
            if (exp.id, row.id, column) in DERIVED:
                continue
            for number in (figure.value, figure.spread):
                if number is None:
                    continue
                shown = {f"{number:.1f}", f"{number:.2f}", f"{number:g}"}
                assert any(re.search(rf"(?<![\d.]){re.escape(s)}(?!\d)", text) for s in shown), (
                    f"{exp.id} {row.id} {column}: {number} is not in {name}"
                )


def test_a_derived_figure_follows_from_the_text() -> None:
    exp = find_experiment("adapt-table1-alfworld")
    assert exp.row("adapt").published["All"].value == pytest.approx(43.3 + 28.3)


def test_garbled_figures_are_read_from_the_garbled_text() -> None:
    """The laws paper's Table 1 lost its decimal points and ± signs in our copy."""
    path = PAPERS / PAPER_FILES["From Laws"]
    if not path.is_file():
        pytest.skip("the papers' text is not on this machine")
    text = path.read_text(encoding="utf-8")
    exp = find_experiment("laws-table1-spring-contexts")
    for row, printed in (("experience", "9.94+1.0"), ("action", "1.3+04")):
        figure = exp.row(row).published["reward"]
        assert printed in text and DERIVED[(exp.id, row, "reward")].startswith(printed)
        assert DERIVED[(exp.id, row, "reward")].endswith(f"{figure.value} ± {figure.spread}")
    assert "7.7+£0.8" in text and exp.row("paper").published["reward"].value == 7.7
    score = exp.row("paper").published["score"]
    assert "84+14 7.7" in text and (score.value, score.spread) == (8.4, 1.4)


GOOD = """\
paper: P
source: Table 1
title: t
env: textcraft
split: test
metric: success_rate
aggregation: one run
runnable: true
columns: [{name: all}]
rows:
  - {id: o, label: O, agent: oracle, published: {all: 50.0}}
"""


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (("metric: success_rate", "metric: accuracy"), "bad.yaml: metric:"),
        (("title: t\n", ""), "bad.yaml: title: missing"),
        (("runnable: true", "runnable: false"), "bad.yaml: reason:"),
        (("split: test", "split: test\ncolour: red"), "bad.yaml: colour: unknown field"),
        (("{all: 50.0}", "{every: 50.0}"), "bad.yaml: rows[0].published.every: no such column"),
        (("{all: 50.0}", "{all: {value: x}}"), "bad.yaml: rows[0].published.all.value:"),
        (("agent: oracle,", "agent: oracle, runnable: false,"), "bad.yaml: rows[0].reason:"),
        (("columns: [{name: all}]", "columns: [{name: all}, {name: all}]"), "bad.yaml: columns:"),
        (("paper: P", "paper: P\npaper: Q"), "bad.yaml:2:"),
        (("agent: oracle,", "agent: oracle, build: b,"), "bad.yaml: rows[0].build: no such"),
        (
            ("split: test", "split: test\nbuilds: [{id: b, variant: magic, split: dev}]"),
            "bad.yaml: builds[0].variant: expected automanual, planner-lib or published",
        ),
        (("split: test", "split: test\nsimulate: {per_type: 0}"), "bad.yaml: simulate.per_type:"),
        (("split: test", "split: test\nsimulate: {fast: 1}"), "bad.yaml: simulate.fast: unknown"),
    ],
)
def test_a_bad_file_names_the_file_and_field(
    tmp_path: Path, change: tuple[str, str], where: str
) -> None:
    path = tmp_path / "bad.yaml"
    assert change[0] in GOOD
    path.write_text(GOOD.replace(change[0], change[1], 1), encoding="utf-8")
    with pytest.raises(ExperimentError) as info:
        load_experiment(path)
    assert str(info.value).startswith(where)


def test_the_good_file_reads(tmp_path: Path) -> None:
    path = tmp_path / "good.yaml"
    path.write_text(GOOD, encoding="utf-8")
    exp = load_experiment(path)
    assert (exp.id, exp.row("o").published["all"].value) == ("good", 50.0)
    with pytest.raises(ExperimentError, match="no row 'x'; its rows: o"):
        exp.row("x")


def test_unknown_experiment_lists_the_known() -> None:
    with pytest.raises(ExperimentError, match="unknown experiment 'nope'; known: adapt-"):
        find_experiment("nope")


@dataclass
class _Ep:
    task_group: str | None
    status: str
    success: bool
    reward: float


def test_wilson_interval_is_known_values() -> None:
    low, high = wilson(0, 2)
    assert (round(low, 3), round(high, 3)) == (0.0, 0.658)
    low, high = wilson(50, 100)
    assert (round(low, 3), round(high, 3)) == (0.404, 0.596)


def test_compare_counts_groups_errors_and_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        GOOD.replace("columns: [{name: all}]", "columns: [{name: all}, {name: g, group: g}]"),
        encoding="utf-8",
    )
    exp = load_experiment(path)
    eps = [_Ep("g", "finished", True, 1.0)] * 9 + [
        _Ep("h", "finished", False, 0.0),
        _Ep("h", "error", False, 0.0),
    ]
    # 9 of 10 against a published 50% over the paper's 200 episodes: a difference
    cells = {
        c.column: c for c in compare(exp, {"o": eps}, {"o": "run1"}, paper_n={"": 200, "g": 150})
    }
    assert (cells["all"].ours, cells["all"].n, cells["all"].errored) == (90.0, 10, 1)
    assert cells["all"].difference == pytest.approx(40.0)
    assert cells["all"].paper_n == 200 and cells["all"].verdict == "differs"
    assert cells["all"].compatible is False and cells["all"].diff_low > 0  # type: ignore[operator]
    assert (cells["g"].ours, cells["g"].published, cells["g"].compatible) == (100.0, None, None)
    assert cells["all"].run_id == "run1"
    # the same 9 of 10 against a paper that ran 10 episodes too: its own error counts
    (same_n, _) = compare(exp, {"o": eps}, paper_n={"": 10})
    assert same_n.paper_n == 10 and same_n.verdict == "too few episodes"
    assert same_n.diff_low < 0 < same_n.diff_high  # type: ignore[operator]
    # another setup: the figures, no verdict
    (other, _) = compare(exp, {"o": eps}, paper_n={"": 200}, compared=False)
    assert (other.ours, other.verdict, other.compatible, other.power) == (
        90.0,
        "setup differs",
        None,
        None,
    )
