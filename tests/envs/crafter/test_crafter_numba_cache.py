"""Crafter's compiled world generation is cached in the user's cache folder, never in the
installed package: a read-only (or shared) install runs and stays as it was.

Each case runs a fresh interpreter on a read-only copy of the ``lorekit`` package (the
cache location is decided when numba first compiles, so it cannot be tested in this
process), plays one Crafter reset and step, and compares the copy's files before and after.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("numba", reason="numba is not installed (the crafter extra)")
pytest.importorskip("crafter", reason="crafter is not installed (the crafter extra)")

PACKAGE = Path(__file__).resolve().parents[3] / "lorekit"
CHILD = """
import sys
import lorekit
assert lorekit.__file__.startswith(sys.argv[1]), lorekit.__file__
from lorekit.envs import make
env = make("crafter")
env.reset(seed=3)
env.step("noop")
env.close()
print("played")
"""


def _read_only_copy(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "lorekit", ignore=shutil.ignore_patterns("__pycache__"))
    for folder, _dirs, files in os.walk(site):
        for name in files:
            Path(folder, name).chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        Path(folder).chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    return site


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _play(site: Path, tmp_path: Path, **env: str) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    base.update(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1", **env)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(site)],
        cwd=tmp_path,
        env=base,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "played" in done.stdout


def _cached(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc")]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    copy = _read_only_copy(tmp_path)
    yield copy
    for folder, _dirs, _files in os.walk(copy):  # let pytest remove the copy
        Path(folder).chmod(stat.S_IRWXU)


def test_read_only_install_runs_and_is_left_unchanged(site: Path, tmp_path: Path) -> None:
    before = _files(site)
    cache_home = tmp_path / "xdg-cache"
    _play(site, tmp_path, XDG_CACHE_HOME=str(cache_home))
    assert _files(site) == before, "the run wrote into the installed package"
    assert _cached(cache_home / "lorekit" / "numba"), "nothing was cached under XDG_CACHE_HOME"


def test_a_users_own_numba_cache_dir_wins(site: Path, tmp_path: Path) -> None:
    before = _files(site)
    own, cache_home = tmp_path / "own-numba", tmp_path / "xdg-cache"
    _play(site, tmp_path, NUMBA_CACHE_DIR=str(own), XDG_CACHE_HOME=str(cache_home))
    assert _files(site) == before
    assert _cached(own), "NUMBA_CACHE_DIR was not used"
    assert not (cache_home / "lorekit").exists()
