"""A small version of benchmarks/automanual_study.py: the Path Dependence mechanism through the
real build loop, formulator and test agent, with the scripted models."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from lorekit.agents.automanual.build import run_build  # noqa: F401 - the build loop the benchmark drives
from lorekit.agents.automanual.testing.rules import TWO_APART, TWO_TYPE

BENCH = Path(__file__).parents[3] / "benchmarks" / "automanual_study.py"
SMALL = {"per_type": 8, "test_per_type": 8, "seed": 0}
"""A seed whose first Put Two build game has both objects together, so its direct success
bakes the shortcut into a skill that (as in the published skill bank) is never replaced;
where the first game has them apart, the kept skill searches and the methods do not differ."""


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
    # the Planner+Lib. skill kept from the first, direct success carries the shortcut
    auto, lib = result.tests["AutoManual"], result.tests["Planner+Lib."]
    assert TWO_APART in result.manual  # the builder's corrected rule reached the manual
    assert not any(e.copied_shortcut for e in auto)  # the rule overrides the skill's shortcut
    copied = [e for e in lib if e.copied_shortcut]
    assert copied and not all(e.first_try for e in copied)  # the skill repeats its path
    assert sum(e.first_try for e in auto) > sum(e.first_try for e in lib)
    # both build curves are there, episode by episode, in the store's order
    assert len(result.builds["AutoManual"]) == len(result.builds["Planner+Lib."]) == args.per_type


@pytest.mark.slow
async def test_the_study_can_come_out_the_other_way(study: ModuleType, tmp_path: Path) -> None:
    # wrong rules, followed: AutoManual loses to the same planner with skills alone
    # (seed 3: the first Put Two game has the objects apart, so Planner+Lib.'s kept skill
    # searches, 8 of 8, while AutoManual follows its wrong "same receptacle" rule, 3 of 8)
    args = argparse.Namespace(
        types=TWO_TYPE,
        per_type=SMALL["per_type"],
        test_per_type=SMALL["test_per_type"],
        forget=0.0,
        repair=0.0,
        retire_after=None,
        concurrency=2,
    )
    wrong = study.CONDITIONS["wrong"]
    result = await study.study(args, tmp_path / "study.db", 3, wrong)
    auto, lib = result.tests["AutoManual"], result.tests["Planner+Lib."]
    assert TWO_APART not in result.manual and "are in the same receptacle" in result.manual
    assert sum(e.success for e in auto) < sum(e.success for e in lib)
    row = study.comparison_row("wrong", [result])
    assert row.startswith("| wrong | ") and "| -" in row  # a negative difference, with its interval
