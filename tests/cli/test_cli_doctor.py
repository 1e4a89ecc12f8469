"""``lorekit doctor`` through the real command line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

LAUNCH = [sys.executable, "-c", "from lorekit.cli import main; main()", "doctor"]


def doctor(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(LAUNCH, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_doctor_reports_every_layer_active() -> None:
    done = doctor({**os.environ, "LOREKIT_SANDBOX_ISOLATION": "auto"})
    assert done.returncode == 0, done.stdout + done.stderr
    for layer in ("pid namespace", "net namespace", "unprivileged uid", "seccomp filter"):
        line = next(row for row in done.stdout.splitlines() if layer in row)
        assert "ok" in line and "missing" not in line
    assert "every layer active" in done.stdout


def test_doctor_names_a_missing_bwrap_and_the_fix() -> None:
    done = doctor({**os.environ, "PATH": "/nonexistent"})
    assert done.returncode == 1
    assert "bwrap: not installed" in done.stdout
    assert "apt-get install bubblewrap" in done.stdout
    assert "Traceback" not in done.stderr


def test_doctor_says_when_isolation_is_switched_off() -> None:
    done = doctor({**os.environ, "LOREKIT_SANDBOX_ISOLATION": "off"})
    assert done.returncode == 1
    assert "switched off" in done.stdout


def test_doctor_lists_every_optional_extra_of_the_package() -> None:
    import tomllib
    from pathlib import Path

    from lorekit.cli.doctor import EXTRAS

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    declared = set(project["project"]["optional-dependencies"]) - {"test"}
    assert {extra for extra, _, _ in EXTRAS} == declared
