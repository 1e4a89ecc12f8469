"""The worked example of docs/architecture.md: a new method with its own view
(examples/tiny_agent) runs through the real CLI, and `show` and the report draw
its notes through the view, with nothing in lorekit/ edited."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from _cli import run_cli

import lorekit.agents as agents
import lorekit.agents.views as views
from lorekit.registry import Registry

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture
def tiny_agent(monkeypatch: pytest.MonkeyPatch, registry: Registry) -> object:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    sys.modules.pop("tiny_agent", None)
    module = importlib.import_module("tiny_agent")
    yield module
    sys.modules.pop("tiny_agent", None)


def test_the_example_stays_under_100_lines() -> None:
    lines = sum(len(p.read_text().splitlines()) for p in (EXAMPLES / "tiny_agent").iterdir())
    assert lines < 100


def test_a_new_agent_and_its_view_run_through_the_cli(
    tiny_agent: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "runs.sqlite3")
    code, out, err = run_cli(
        [
            "run",
            "textcraft",
            "--agent",
            "first-choice",
            "-n",
            "2",
            "--run-id",
            "tiny",
            "--store",
            store,
        ],
        capsys,
    )
    assert code == 0, err
    code, out, err = run_cli(["show", "tiny", "0", "--store", store], capsys)
    assert code == 0, err
    assert "distinct actions" in out  # the view's header line
    tried = [line for line in out.splitlines() if line.strip().startswith("1. ")]
    assert tried, out  # the view's numbered list of tried actions
    report = tmp_path / "report.html"
    code, out, err = run_cli(["report", "tiny", "--store", store, "-o", str(report)], capsys)
    assert code == 0, err
    page = report.read_text()
    assert 'registerView("first-choice"' in page  # the view's script is on the page
    assert (
        '"first-choice"' in page.split('registerView("first-choice"')[1] or "first-choice" in page
    )


def test_registering_refuses_a_taken_name_and_a_bad_view(tiny_agent: object) -> None:
    with pytest.raises(ValueError, match="already registered"):
        agents.register_agent("react", "x.y:Z", "a second react")
    with pytest.raises(ValueError, match=r"package\.module:attribute"):
        views.register_view("no-colon")
