"""``lorekit graph show`` and ``lorekit graph run``, driven through click."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from lorekit.cli.graph import graph
from lorekit.llm.testing import OpenAICompatServer

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "planner_gate.yaml")
SETS = ["--set", "goal=craft 4 oak planks", "--set", "observation=You see an oak tree."]
ANSWERS = [
    "You stand by an oak tree.",  # situation
    "No wood.",  # obstacle
    "yes",  # gate
    '{"steps": ["get 1 oak log"]}',  # plan
    "Action: get 1 oak log",  # act
    "Fact: oak logs come from oak trees",  # learn
]


def invoke(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(graph, args)
    return result.exit_code, result.stdout, result.stderr


def test_show_prints_mermaid() -> None:
    code, out, _ = invoke(["show", EXAMPLE])
    assert code == 0
    assert out.startswith("flowchart TD")
    assert "n_gate -. if yes .-> n_plan" in out and "n_plan ==> n_act" in out


def test_show_image_without_graphviz_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    code, out, err = invoke(["show", EXAMPLE, "--image", str(tmp_path / "g.png")])
    assert code == 1 and "flowchart TD" in out
    assert "Graphviz is not installed" in err
    assert not (tmp_path / "g.png").exists()


def test_show_image_with_graphviz(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "dot"  # stands in for Graphviz: copies its DOT input to -o
    fake.write_text('#!/bin/sh\nout="$3"\ncat > "$out"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    image = tmp_path / "g.svg"
    code, _, err = invoke(["show", EXAMPLE, "--image", str(image)])
    assert code == 0 and "wrote" in err
    dot = image.read_text()
    assert dot.startswith('digraph "planner_gate"') and '"gate" -> "plan"' in dot


def test_run_with_a_scripted_config(tmp_path: Path) -> None:
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        json.dumps(
            {"roles": {"default": {"provider": "scripted", "model": "s", "answers": ANSWERS}}}
        )
    )
    code, out, err = invoke(["run", EXAMPLE, "--config", str(cfg), "--sequential", *SETS])
    assert code == 0, err
    assert "[gate]\nyes" in out
    assert '[plan]\n{"steps": ["get 1 oak log"]}' in out
    assert out.index("[situation]") < out.index("[gate]") < out.index("[learn]")
    code, out, _ = invoke(["run", EXAMPLE, "--config", str(cfg), "--json", "--sequential", *SETS])
    data = json.loads(out)
    assert data["database"]["knowledge"] == ["oak logs come from oak trees"]
    assert [n["key"] for n in data["trace"]["nodes"]][-1] == "learn"


def test_run_against_a_local_server() -> None:
    with OpenAICompatServer(ANSWERS) as srv:
        args = ["run", EXAMPLE, "--model", "test-model", "--base-url", srv.base_url]
        code, out, err = invoke([*args, "--sequential", *SETS])
    assert code == 0, err
    assert '[act]\n{"command": "get 1 oak log"}' in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", EXAMPLE, *SETS], "needs a model"),
        (["run", EXAMPLE, "--model", "echo"], "no value for 'goal'"),
        (["run", EXAMPLE, "--model", "echo", "--set", "goal"], "expected KEY=VALUE"),
        (["run", "/nonexistent.yaml", "--model", "echo"], "no such spec file"),
        (["show", "/nonexistent.yaml"], "no such spec file"),
        (["run", EXAMPLE, "--model", "m", "--base-url", "ftp://x", *SETS], "http"),
    ],
)
def test_user_errors_exit_2(args: list[str], message: str) -> None:
    code, _, err = invoke(args)
    assert code == 2 and message in err


def test_node_failure_exits_1() -> None:
    # the echo model repeats the prompt: the gate cannot parse it and fails for good
    code, out, err = invoke(["run", EXAMPLE, "--model", "echo", *SETS])
    assert code == 1
    assert "[gate] (retries: 2)\nFAILED" in out and "[plan]" in out and "BLOCKED" in out
    assert "node 'gate' failed" in err


def test_hook_exception_exits_1_naming_node_hook_and_error(tmp_path: Path) -> None:
    (tmp_path / "h.py").write_text("def boom(ctx, out):\n    raise ValueError('bad row 3')\n")
    spec = tmp_path / "s.yaml"
    spec.write_text("nodes:\n  a: {prompt: A, after_query: h.py:boom}\n  b: {prompt: B}\n")
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        json.dumps({"roles": {"default": {"provider": "scripted", "model": "s", "answers": ["x"]}}})
    )
    code, out, err = invoke(["run", str(spec), "--config", str(cfg)])
    assert code == 1 and "Traceback" not in err + out
    assert "node 'a' failed: after-query hook 'h.py:boom' raised ValueError: bad row 3" in err
    assert "[b]\nx" in out
