"""A small version of benchmarks/automanual_study.py: the Path Dependence mechanism through the
real build loop, formulator and test agent, with the scripted models."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from lorekit.agents.automanual.simulation_rules import TWO_APART, TWO_TYPE
from lorekit.cli.automanual_build import run_build  # noqa: F401 - the build loop the benchmark drives

BENCH = Path(__file__).parents[3] / "benchmarks" / "automanual_study.py"
SMALL = {"per_type": 8, "test_per_type": 8, "seed": 4}
"""A seed whose Planner+Lib. build ends on a Put Two skill with the shortcut baked in (so
the test compares the two methods where they differ; other seeds end on a searching skill)."""


@pytest.fixture(scope="module")
def study() -> ModuleType:
    spec = importlib.util.spec_from_file_location("automanual_study_bench", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
async def test_rules_fix_what_a_copied_put_two_skill_repeats(
    study: ModuleType, tmp_path: Path
) -> None:
    args = argparse.Namespace(
        types=TWO_TYPE,
        per_type=SMALL["per_type"],
        test_per_type=SMALL["test_per_type"],
        forget=0.0,
        repair=1.0,
        mistake=0.0,
        retire_after=None,
        concurrency=2,
    )
    result = await study.study(args, tmp_path / "study.db", SMALL["seed"])
    auto, lib = result.tests["AutoManual"], result.tests["Planner+Lib."]
    assert TWO_APART in result.manual  # the builder's corrected rule reached the manual
    assert not any(e.copied_shortcut for e in auto)  # the rule overrides the skill's shortcut
    copied = [e for e in lib if e.copied_shortcut]
    assert copied and not all(e.first_try for e in copied)  # the skill repeats its path
    assert sum(e.first_try for e in auto) > sum(e.first_try for e in lib)
    # both build curves are there, episode by episode, in the store's order
    assert len(result.builds["AutoManual"]) == len(result.builds["Planner+Lib."]) == args.per_type
