"""Benchmarks measure and report; a busy machine must not make them fail, and a long one
says how far it has got. Run here with tiny sizes and a simulated slow machine."""

from __future__ import annotations

import asyncio
import functools
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from lorekit.envs.testing import SleepyEnv
from lorekit.eval.store import RunStore

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


@functools.cache  # once: a benchmark registers its envs when imported
def bench(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


HANG = {"step_s": 0.001, "steps": 3, "hang_tasks": ["sleepy-1"], "hang_s": 30.0}


def test_harness_blocking_measures_when_building_the_env_outlasts_the_limit(
    tmp_path: Path,
) -> None:
    """A loaded machine: building an env takes 0.6 s, longer than the 0.3 s episode
    timeout (which covers the build). The benchmark used to stop with an AssertionError."""
    module = bench("harness_blocking")
    with RunStore(tmp_path / "bench.sqlite3") as db:
        result = asyncio.run(module.hung_episode(db, lambda: SleepyEnv(build_s=0.6, **HANG), 0.3))
    assert result.problems == []
    assert result.seconds is not None and result.limit_s > result.build_s >= 0.6
    assert "timed out" in result.error


def test_harness_blocking_reports_instead_of_raising(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even when the build turns out slower than measured (the limit is not raised enough),
    the benchmark retries with a longer limit and reports; it never raises."""
    module = bench("harness_blocking")
    monkeypatch.setattr(module, "limit_for", lambda requested, build: requested)
    with RunStore(tmp_path / "bench.sqlite3") as db:
        result = asyncio.run(
            module.hung_episode(db, lambda: SleepyEnv(build_s=0.5, **HANG), 0.2, tries=3)
        )
    assert result.seconds is not None and result.limit_s == pytest.approx(0.8)
    # a machine so slow that no try works: reported, not raised
    with RunStore(tmp_path / "bench2.sqlite3") as db:
        result = asyncio.run(
            module.hung_episode(db, lambda: SleepyEnv(build_s=0.5, **HANG), 0.1, tries=1)
        )
    assert result.seconds is None and "did not succeed" in result.problems[0]


@pytest.mark.slow
def test_automanual_study_prints_progress_as_it_goes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = bench("automanual_study")
    monkeypatch.setattr(module, "HEARTBEAT_S", 0.2)
    lines: list[str] = []
    real = module.say
    monkeypatch.setattr(module, "say", lambda message: (lines.append(message), real(message)))
    small = ["--per-type", "1", "--test-per-type", "1", "--seeds", "0", "--window", "1"]
    module.main([*small, "--types", "pick_two_obj_and_place", "--conditions", "as-designed"])
    out = capsys.readouterr().out
    assert out.index("building on dev") < out.index("testing on test") < out.index("wall:")
    for method in ("AutoManual", "Planner+Lib."):
        assert any(f"{method}: built" in line for line in lines)
        assert any(f"{method}: tested" in line for line in lines)
    assert any("build episodes" in line for line in lines)  # the build's own heartbeat
    assert any("1/1 episodes" in line for line in lines)  # the test episodes


def test_the_sandbox_benchmark_states_its_goals_as_ratios_to_its_own_baselines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Absolute microseconds change with the load; the benchmark's goals are ratios
    to baselines measured in the same run, and it reports, never asserts."""
    pytest.importorskip("pyseccomp")
    module = bench("sandbox")
    figures = module.main(repeats=1, calls=20)
    out = capsys.readouterr().out
    assert "baselines: pickled pipe round trip" in out
    for line in (li for li in out.splitlines() if "us/call" in li or "calls/s" in li):
        assert " vs " in line and "x (" in line, line  # every goal line is a ratio
    assert figures["pipe_us"] > 0 and figures["start_ms"] > 0 and figures["pred_ratio"] > 0
    assert "goal <" not in out and "goal >=" not in out


def test_the_alfworld_benchmark_compares_grounding_with_the_disk_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two generated games through the disk-cache part (fresh interpreters, an empty
    cache folder then the filled one): it reports a ratio and finds both ways at the same
    game. The benchmark had stopped running at all (generated games need variant=any)."""
    from lorekit.envs.alfworld.generate import generate_games

    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the fresh interpreters import it by name
    module = importlib.import_module("alfworld_env")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    *measured, warm = generate_games(3, seed=7, label="bench-test")
    module.report_disk_cache(tmp_path, measured, warm)
    out = capsys.readouterr().out
    assert "first reset in a fresh interpreter, 2 games" in out, out
    assert "ratio" in out and "both reach the same observation" in out
    assert not (tmp_path / "user-cache").exists()  # its own cache folders, never the user's
