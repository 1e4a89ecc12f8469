"""docs/alfworld.md's code-API example runs as written and prints what the page says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("alfworld", reason="needs the alfworld extra")

PAGE = Path(__file__).resolve().parents[3] / "docs" / "alfworld.md"


def test_the_code_api_example_prints_its_comment(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    (code,) = [b for b in blocks if "AlfWorldCodeApi(env)" in b and "run_code" in b]
    said = re.search(r"print\(result\.output\)  # (.+)", code)
    assert said is not None
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[0] == said.group(1)
