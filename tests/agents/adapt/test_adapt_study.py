"""A small version of benchmarks/adapt_depth.py: the published pattern, from the mechanism,
reported for both trust modes."""

from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path
from types import ModuleType

import pytest

from lorekit.agents.adapt import AdaptAgent
from lorekit.agents.adapt.react import ReActAgent
from lorekit.envs.textcraft import TextCraftEnv
from lorekit.eval.store import RunStore

BENCH = Path(__file__).parents[3] / "benchmarks" / "adapt_depth.py"
"""Stands in for TextCraft's uncapped mode: far beyond any agent budget here."""


@pytest.fixture(scope="module")
def study() -> ModuleType:
    spec = importlib.util.spec_from_file_location("adapt_depth_bench", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


async def test_small_study_shows_the_pattern(study: ModuleType, tmp_path: Path) -> None:
    tasks = study.subsample(TextCraftEnv().tasks("test"), 24, seed=1)
    assert {t.group for t in tasks} == {"depth-2", "depth-3", "depth-4"}
    with RunStore(tmp_path / "s.sqlite3") as store:
        results = await study.run_studies(
            tasks, store, capability=2, noise=0.1, seed=1, env_factory=study.study_env(None)
        )
        assert len(store.list_runs()) == 10  # every method, both trust modes, through the harness
    assert set(results) == {"env", "self"}
    result = results["env"]
    assert study.pattern_problems(result) == []
    assert result.rate("ADaPT", 4) >= 0.8
    assert result.rate("ReAct", 3) == result.rate("ReAct", 4) == 0.0
    means = [statistics.mean(result.adapt_depths[d]) for d in (2, 3, 4)]
    assert means[0] < means[1] < means[2]
    # the check runs on the self-report mode too, and the report says what it found
    for trust, res in results.items():
        text = study.report(res)
        assert f"trust={trust}" in text and "ADaPT depth reached" in text
        assert f"pattern (trust={trust}): {study.verdict(res)}" in text
    # believing the executor lets its early "completed" end sub-tasks that are not done
    assert results["self"].overall("ADaPT") < result.overall("ADaPT")


async def test_a_capable_executor_needs_no_decomposition(study: ModuleType, tmp_path: Path) -> None:
    """Same code, an executor that can hold every recipe: no method has an edge and
    ADaPT never decomposes, so the advantage above comes from the mechanism."""
    tasks = study.subsample(TextCraftEnv().tasks("test"), 9, seed=2)
    with RunStore(tmp_path / "c.sqlite3") as store:
        results = await study.run_studies(
            tasks, store, capability=5, noise=0.0, seed=2, env_factory=study.study_env(None)
        )
    for result in results.values():
        for method in study.METHODS:
            assert all(result.rate(method, d) == 1.0 for d in result.depths), method
        assert all(r == 1 for reached in result.adapt_depths.values() for r in reached)
        assert any("ReAct" in p for p in study.pattern_problems(result))  # no gap to show
        assert study.adapt_rank(result) == "ties"


def test_react_in_the_study_gets_d_max_times_the_executor_turns(study: ModuleType) -> None:
    for d_max in (2, 4):
        agents = study.make_agents(d_max, "self")
        react, adapt = agents["ReAct"], agents["ADaPT"]
        assert isinstance(react, ReActAgent) and isinstance(adapt, AdaptAgent)
        assert react.executor.max_turns == d_max * adapt.executor.max_turns
        assert all(getattr(a, "trust", "self") == "self" for n, a in agents.items() if n != "ReAct")


def test_grid_report_counts_settings_per_trust_mode(study: ModuleType) -> None:
    def fake(trust: str, adapt: int, other: int) -> object:
        res = study.StudyResult(trust)
        for m in study.METHODS:
            ok = adapt if m == "ADaPT" else other
            res.success[m] = {2: (ok, 10), 3: (ok, 10)}
        res.adapt_depths = {2: [1], 3: [2]}
        return res

    cells = {
        (1, 0.0): {"env": fake("env", 9, 5), "self": fake("self", 5, 5)},
        (2, 0.1): {"env": fake("env", 8, 9), "self": fake("self", 9, 5)},
    }
    text = study.grid_report(cells)
    assert "trust=env: ADaPT leads overall in 1 of 2 settings (ties in 0, behind in 1)" in text
    assert "trust=self: ADaPT leads overall in 1 of 2 settings (ties in 1, behind in 0)" in text
