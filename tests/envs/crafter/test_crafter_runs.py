"""Crafter score and reward of recorded runs (``lorekit laws scores``), from the run store."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run_cli
from click.testing import CliRunner

from lorekit.agents.spring.testing import spring_model
from lorekit.envs.crafter.runs import crafter_run_score
from lorekit.eval.store import RunStore
from lorekit.laws.commands.scores import scores
from lorekit.llm import Roles, ScriptedLLM

SIM_MODEL = ("--model", "sim", "--base-url", "http://127.0.0.1:9/v1")


def _run(
    store: Path,
    run_id: str,
    seek: str,
    context: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm = ScriptedLLM(fn=spring_model(seek=seek))
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: Roles(llm))
    args = ["run", "crafter", "--agent", "spring", "--store", str(store), "--run-id", run_id]
    opts = ["--agent-opt", f"context={context}", "--agent-opt", "max_steps=10", "-n", "1"]
    code, _, err = run_cli([*args, *opts, "--cache", "off", *SIM_MODEL], capsys)
    assert code == 0, err


def test_scores_of_two_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "runs.db"
    _run(store, "wood", "tree", "paper", capsys, monkeypatch)  # reaches a tree in 8 steps
    _run(store, "none", "diamond", "actions", capsys, monkeypatch)  # walks west, finds nothing
    with RunStore(store) as db:
        wood = crafter_run_score(db, "wood")
        none = crafter_run_score(db, "none")
        with pytest.raises(LookupError, match="no run 'nope'"):
            crafter_run_score(db, "nope")
    assert wood.label == "spring + paper" and none.label == "spring + actions"
    assert wood.episodes == 1 and wood.errors == 0
    assert wood.rates["collect_wood"] == 100.0 and wood.unlocked == ["collect_wood"]
    assert wood.reward == pytest.approx(1.0) and wood.score > 0
    assert none.unlocked == [] and none.score == 0.0 and none.reward == pytest.approx(0.0)

    result = CliRunner().invoke(scores, ["wood", "none", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "spring + paper" in result.output and "collect_wood" in result.output
    assert "1.00 ± 0.00" in result.output and "none" in result.output
    result = CliRunner().invoke(scores, ["nope", "--store", str(store)])
    assert result.exit_code == 2 and "no run 'nope'" in result.output
