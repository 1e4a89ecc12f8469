"""``lorekit run crafter --agent agentkit-crafter`` with a model per role, and
``lorekit graph show`` drawing both shipped specs."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.agents.agentkit.crafter import SPEC_PATH as CRAFTER_SPEC
from lorekit.agents.agentkit.testing import crafter_model
from lorekit.agents.agentkit.webshop import SPEC_PATH as WEBSHOP_SPEC
from lorekit.eval.store import RunStore
from lorekit.graph.spec import load_spec
from lorekit.llm import Roles, ScriptedLLM

SIM = ("--model", "sim", "--base-url", "http://127.0.0.1:9/v1")
ROLES = ("fast", "fast_accurate", "reason", "plan_accurate", "spatial")


def test_run_crafter_with_a_model_per_role(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    models = {r: ScriptedLLM(fn=crafter_model()) for r in ROLES}
    monkeypatch.setattr("lorekit.cli.checks.build_models", lambda *a, **k: Roles(models))
    store = tmp_path / "runs.db"
    roles = [x for r in ROLES for x in ("--role", f"{r}=sim-{r}")]
    args = ["run", "crafter", "--agent", "agentkit-crafter", "--agent-opt", "max_steps=3"]
    fixed = ["--run-id", "ak", "-n", "1", "-j", "1", "--cache", "off", "--store", str(store)]
    code, _, err = run_cli([*args, *fixed, *roles, *SIM], capsys)
    assert code == 0, err
    with RunStore(store) as db:
        (episode,) = db.episodes("ak")
        calls = db.llm_calls("ak", episode.episode_key)
    assert episode.steps == 3
    assert "Next to you:" in calls[0]["messages"][-1]["content"]  # the detailed observation
    spec = {n.key: n.role for n in load_spec(CRAFTER_SPEC).nodes}
    for call in calls:
        assert call["role"] == spec[call["meta"]["node"]]
    # every node but the long-term reflection (after mistakes under a skill) and the
    # knowledge review (every 50 steps)
    assert {c["meta"]["node"] for c in calls} == set(spec) - {"feed", "kb_refine"}
    notes = episode.info["notes"]["agentkit"]
    assert len(notes["steps"]) == 3 and notes["fallbacks"] == 0
    code, out, _ = run_cli(["show", "ak", "0", "--store", str(store)], capsys)
    assert code == 0
    assert "AgentKit" in out and "graph=agentkit-crafter" in out and "fallbacks=0" in out
    assert "step 1 -> " in out and "actor_final" in out and "kb_add" in out


def test_an_unknown_role_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "crafter", "--agent", "agentkit-crafter", "--role", "critic=x", *SIM]
    code, _, err = run_cli([*args, "--store", str(tmp_path / "r.db")], capsys)
    assert code == 2 and "unknown role 'critic'" in err and "spatial" in err


@pytest.mark.parametrize(("spec", "edge"), [(CRAFTER_SPEC, "if replan"), (WEBSHOP_SPEC, "")])
def test_graph_show_draws_the_specs(
    spec: Path, edge: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["graph", "show", str(spec)], capsys)
    assert code == 0, err
    assert out.startswith("flowchart TD")
    for node in load_spec(spec).nodes:
        assert f'n_{node.key}["{node.key}<br/><small>{node.role} ·' in out
    assert edge in out
