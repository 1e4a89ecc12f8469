"""tests/conftest.py under CI: a skip is a failure unless its reason is allowed.

Runs pytest on a small throwaway suite with this project's conftest, once as a
developer (skips are fine) and once as CI (the same skips fail the run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = """
import pytest

def test_runs():
    pass

@pytest.mark.skipif(True, reason="the web extra is missing")
def test_marked():
    pass

def test_inline():
    pytest.skip("no browser here")

def test_optional_import():
    pytest.importorskip("lorekit_absent_package_for_tests")

@pytest.mark.skipif(True, reason="needs a GPU")
def test_gpu():
    pass

def test_local():
    pytest.skip("needs the local extra (CI opts in with LOREKIT_CI_LOCAL=1)")

@pytest.mark.xfail(reason="a known bug")
def test_known_bug():
    assert False
"""
MODULE_SKIP = 'import pytest\npytest.skip("needs chromium", allow_module_level=True)\n'


def _run(folder: Path, ci: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "test_module_skip.py").write_text(MODULE_SKIP)
    return tmp_path


@pytest.mark.parametrize("ci", [None, "false"])
def test_outside_ci_skips_are_fine(suite: Path, ci: str | None) -> None:
    done = _run(suite, ci)
    assert done.returncode == 0, done.stdout
    assert "1 passed, 6 skipped, 1 xfailed" in done.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_only_allowed_skips_pass(suite: Path, ci: str) -> None:
    done = _run(suite, ci)
    assert done.returncode == 1, done.stdout
    out = done.stdout
    assert "ERROR test_suite.py::test_marked - skipped under CI: the web extra is missing" in out
    assert "FAILED test_suite.py::test_inline - skipped under CI: no browser here" in out
    assert "FAILED test_suite.py::test_optional_import - skipped under CI" in out
    assert "test_module_skip.py: needs chromium" in out  # the module-level skip
    assert "needs a GPU" in out and "skipped under CI: needs a GPU" not in out
    assert "LOREKIT_CI_LOCAL=1" in out and "XFAIL" in out
    assert "2 failed, 1 passed, 3 skipped, 1 xfailed, 1 error" in out


def test_under_ci_a_module_skip_alone_fails_the_run(suite: Path) -> None:
    assert _run(suite, "true", "test_module_skip.py").returncode == 1
    assert _run(suite, None, "test_module_skip.py").returncode == 5  # nothing ran
