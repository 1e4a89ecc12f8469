"""docs/tutorial.md runs as written: every ``lorekit`` line of its shell blocks (but
``view``, which serves until stopped, and the local model, which needs the ``local``
extra) exits 0 in a fresh folder, in order, and its Python block prints what it says."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import run_cli

PAGE = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"
TEXT = PAGE.read_text(encoding="utf-8")


def _lines() -> list[list[str]]:
    out = []
    for body in re.findall(r"```bash\n(.*?)```", TEXT, re.S):
        for line in body.splitlines():
            if line.startswith("lorekit "):
                out.append(shlex.split(line)[1:])
    return out


def test_the_walk_runs_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOREKIT_STORE", raising=False)
    lines = _lines()
    assert len(lines) >= 10
    for args in lines:
        if args[0] == "view" or "local" in args:
            continue
        code, _, err = run_cli(args, capsys)
        assert code == 0, f"lorekit {' '.join(args)}: {err}"
    assert (tmp_path / "first.html").is_file()


def test_the_python_block_runs(tmp_path: Path) -> None:
    (code,) = re.findall(r"```python\n(.*?)```", TEXT, re.S)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "20 of 20"
