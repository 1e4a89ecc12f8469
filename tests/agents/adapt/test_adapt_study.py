"""A small version of benchmarks/adapt_depth.py: the published pattern, from the mechanism."""

from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path
from types import ModuleType

import pytest

from lorekit.envs.textcraft import TextCraftEnv
from lorekit.eval.store import RunStore

BENCH = Path(__file__).parents[3] / "benchmarks" / "adapt_depth.py"


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
        result = await study.run_study(tasks, store, capability=2, noise=0.1, seed=1)
        assert len(store.list_runs()) == 6  # every method went through the harness
    assert study.pattern_problems(result) == []
    assert result.rate("ADaPT", 4) >= 0.8
    assert result.rate("ReAct", 3) == result.rate("ReAct", 4) == 0.0
    means = [statistics.mean(result.adapt_depths[d]) for d in (2, 3, 4)]
    assert means[0] < means[1] < means[2]
    assert "ADaPT depth reached" in study.report(result)


async def test_a_capable_executor_needs_no_decomposition(study: ModuleType, tmp_path: Path) -> None:
    """Same code, an executor that can hold every recipe: no method has an edge and
    ADaPT never decomposes, so the advantage above comes from the mechanism."""
    tasks = study.subsample(TextCraftEnv().tasks("test"), 9, seed=2)
    with RunStore(tmp_path / "c.sqlite3") as store:
        result = await study.run_study(tasks, store, capability=5, noise=0.0, seed=2)
    for method in study.METHODS:
        assert all(result.rate(method, d) == 1.0 for d in result.depths), method
    assert all(r == 1 for reached in result.adapt_depths.values() for r in reached)
    assert any("ReAct" in p for p in study.pattern_problems(result))  # no gap to show
