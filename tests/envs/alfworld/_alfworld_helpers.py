"""Helpers the ALFWorld tests share (a plain module: conftest.py is not importable by name)."""

from __future__ import annotations

import subprocess
import sys


def run_with_hash_seed(script: str, hash_seed: str) -> str:
    """Stdout of ``python -c script`` under ``PYTHONHASHSEED=hash_seed``."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={"PYTHONHASHSEED": hash_seed, "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout
