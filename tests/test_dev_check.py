"""README's development check, the ruff part: lint and format pass on the whole tree with
the pinned ruff (pyproject's test extra), so a newer ruff cannot silently change the check."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


def _pinned(tool: str) -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    line = next(li for li in text.splitlines() if li.strip().startswith(f'"{tool}=='))
    return line.split("==")[1].split('"')[0]


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (the test extra brings it)")
@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]])
def test_ruff_passes_on_the_tree(args: list[str]) -> None:
    assert RUFF is not None
    version = subprocess.run([RUFF, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.split()[1] == _pinned("ruff"), (
        "install the pinned ruff: pip install -e '.[test]'"
    )
    done = subprocess.run([RUFF, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_check_tools_are_pinned_exactly() -> None:
    assert _pinned("ruff") and _pinned("mypy")
