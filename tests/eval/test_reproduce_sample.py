"""``reproduce run -n N``: a sample of the experiment's tasks across its task groups in
proportion, seeded, the same on resume, and a smaller draw the start of a larger one."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pytest

from lorekit.eval.reproduce_sample import plan_tasks, proportional_counts, sample_tasks


@dataclass(frozen=True)
class _Task:
    id: str
    group: str


# as TextCraft's adapt-200 split is stored: sorted by depth, the deepest first
SPLIT = (
    [_Task(f"d4-{i}", "depth-4") for i in range(11)]
    + [_Task(f"d3-{i}", "depth-3") for i in range(112)]
    + [_Task(f"d2-{i}", "depth-2") for i in range(77)]
)


def test_the_first_n_of_a_sorted_split_are_no_sample_of_it() -> None:
    """The bug this replaces: -n 50 was 11 depth-4 and 39 depth-3 goals, no depth-2."""
    assert Counter(t.group for t in SPLIT[:50]) == {"depth-4": 11, "depth-3": 39}
    drawn = Counter(t.group for t in sample_tasks(SPLIT, 50, seed=0))
    assert drawn == {"depth-4": 3, "depth-3": 28, "depth-2": 19}  # 2.75, 28.0, 19.25 of 50


@pytest.mark.parametrize("n", [1, 7, 50, 123, 199, 200])
def test_each_group_gets_its_share_within_one(n: int) -> None:
    sizes = {"depth-4": 11, "depth-3": 112, "depth-2": 77}
    counts = proportional_counts(sizes, n)
    assert sum(counts.values()) == n
    assert all(abs(counts[g] - n * k / 200) < 1 for g, k in sizes.items()), counts


def test_a_group_never_gives_more_than_it_holds() -> None:
    assert proportional_counts({"a": 1, "b": 9}, 10) == {"a": 1, "b": 9}
    assert proportional_counts({"a": 1, "b": 9}, 99) == {"a": 1, "b": 9}


def test_the_same_seed_draws_the_same_tasks_and_another_seed_others() -> None:
    ids = [t.id for t in sample_tasks(SPLIT, 50, seed=0)]
    assert ids == [t.id for t in sample_tasks(list(SPLIT), 50, seed=0)]
    assert set(ids) != {t.id for t in sample_tasks(SPLIT, 50, seed=1)}
    assert len(set(ids)) == 50


def test_a_smaller_draw_is_the_start_of_every_larger_one() -> None:
    """Episode keys hold a task's place in the plan, so -n 50 then -n 100 (or the whole
    set) under one run id replays none of the 50."""
    whole = [t.id for t in sample_tasks(SPLIT, 200, seed=3)]
    assert sorted(whole) == sorted(t.id for t in SPLIT)
    for n in (1, 50, 100, 199):
        assert [t.id for t in sample_tasks(SPLIT, n, seed=3)] == whole[:n]


def test_the_plan_says_what_it_drew_and_the_papers_n_per_group() -> None:
    chosen, plan = plan_tasks(SPLIT, "adapt-200", experiment_episodes=200, n=50, seed=0)
    assert plan.sampled and plan.size == 50 == len(chosen) and plan.population == 200
    assert plan.groups == {"depth-4": (3, 11), "depth-3": (28, 112), "depth-2": (19, 77)}
    assert plan.paper_n == {"": 200, "depth-4": 11, "depth-3": 112, "depth-2": 77}
    text = plan.describe()
    assert "50 of the experiment's 200 (split adapt-200)" in text
    assert "depth-2 19 of 77, depth-3 28 of 112, depth-4 3 of 11" in text and "seed 0" in text
    # the whole set: no sample; the experiment's first N of a longer split as the paper took
    _, whole = plan_tasks(SPLIT, "adapt-200", experiment_episodes=None, n=None, seed=0)
    assert not whole.sampled and whole.size == 200
    assert whole.describe() == "tasks: all 200 of the experiment's tasks (split adapt-200)"
    first, part = plan_tasks(SPLIT, "test", experiment_episodes=20, n=None, seed=0)
    assert {t.id for t in first} == {t.id for t in SPLIT[:20]} and part.paper_n[""] == 20
    beyond, more = plan_tasks(SPLIT, "test", experiment_episodes=20, n=30, seed=0)
    assert [t.id for t in beyond] == [t.id for t in SPLIT[:30]] and not more.sampled
    assert "the first 30 of split test (beyond the experiment's 20)" in more.describe()
