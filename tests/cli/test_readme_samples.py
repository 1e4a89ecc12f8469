"""README's samples run as written: its ``run.yaml`` with its own command."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.llm.testing import OpenAICompatServer

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_block(marker: str) -> str:
    """The fenced code block of README.md that contains ``marker``."""
    for block in re.findall(r"```[a-z]*\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        if marker in block:
            return str(block)
    raise AssertionError(f"README.md has no code block with {marker!r}")


def readme_command(marker: str) -> list[str]:
    """README's command line that contains ``marker``, without its comment."""
    for block in re.findall(r"```[a-z]*\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        for line in block.splitlines():
            if line.startswith("lorekit ") and marker in line:
                return shlex.split(line.split("#", 1)[0])[1:]
    raise AssertionError(f"README.md has no command with {marker!r}")


def test_readme_run_yaml_works_with_readme_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text(readme_block("# run.yaml"), encoding="utf-8")
    args = readme_command("--config run.yaml")
    assert args[:4] == ["run", "textcraft", "--agent", "react"]
    # The sample's default model is a remote one: a local server stands in for it.
    with OpenAICompatServer(["Action: get 1 stick"] * 4) as srv:
        offline = ["--base-url", srv.base_url, "-n", "1", "--agent-opt", "max_turns=1"]
        code, out, err = run_cli([*args, *offline, "--no-progress"], capsys)
    assert code == 0, err
    assert "my-run" in out
    # ReAct asks for no planner: the file's planner is a warning naming it, not an error.
    assert "warning" in err and "run.yaml: roles.planner" in err and "agent react" in err

    # The same role given on the command line is a typo: still an error.
    code, _, err = run_cli([*args, "--role", "planner=x", "--store", "s"], capsys)
    assert code == 2 and "--role: unknown role 'planner' for agent react" in err
