"""``--model scripted:...``: a mock model chosen on the command line (as inspect's mockllm)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.config import ConfigError, RunConfig, apply_overrides, scripted_settings
from lorekit.eval.store import RunStore


def test_the_names_map_to_scripted_settings(tmp_path: Path) -> None:
    assert scripted_settings("gpt-4o") is None
    assert scripted_settings("scripted:echo") == {"provider": "scripted", "model": "echo"}
    lines = tmp_path / "answers.txt"
    lines.write_text("Action: look\n\nAction: inventory\n")
    got = scripted_settings(f"scripted:{lines}")
    assert got is not None and got["answers"] == ["Action: look", "Action: inventory"]
    listed = tmp_path / "answers.yaml"
    listed.write_text("- |\n  Thought: two\n  lines\n- done\n")
    got = scripted_settings(f"scripted:{listed}")
    assert got is not None and got["answers"] == ["Thought: two\nlines\n", "done"]
    for bad, says in [
        ("scripted:", "got nothing"),
        (f"scripted:{tmp_path / 'none.txt'}", "cannot read the answers file"),
    ]:
        with pytest.raises(ConfigError, match=says):
            scripted_settings(bad)
    (tmp_path / "bad.yaml").write_text("answer: one\n")
    with pytest.raises(ConfigError, match="non-empty YAML list"):
        scripted_settings(f"scripted:{tmp_path / 'bad.yaml'}")


def test_a_role_can_be_scripted_and_another_real() -> None:
    cfg = apply_overrides(RunConfig(), model="gpt-4o", roles=["planner=scripted:echo"])
    assert cfg.roles["default"].provider == "openai" and cfg.roles["default"].model == "gpt-4o"
    assert cfg.roles["planner"].provider == "scripted" and cfg.roles["planner"].model == "echo"
    back = apply_overrides(cfg, roles=["planner=gpt-4o-mini"])
    assert back.roles["planner"].provider == "openai" and back.roles["planner"].answers is None


def test_simulate_plays_the_methods_scripted_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "r.sqlite3")
    args = ["run", "textcraft", "--agent", "react", "--model", "scripted:simulate", "-n", "2"]
    code, out, err = run_cli([*args, "--store", store, "--run-id", "sim"], capsys)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "scripted TextCraft executor" in flat and "not a model" in flat
    with RunStore(store) as db:
        run = db.get_run("sim")
        assert run is not None and run.config.get("simulated") is True
        assert len(db.llm_calls("sim")) > 0  # the scripted models were asked, and recorded


def test_simulate_where_no_scripted_models_exist_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "webshop", "--agent", "spring", "--model", "scripted:simulate"]
    code, _, err = run_cli([*args, "--store", str(tmp_path / "r.sqlite3")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "no scripted models for agent 'spring' on env 'webshop'" in err
    assert "spring on crafter" in err


def test_answers_from_a_file_are_played_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = tmp_path / "a.txt"
    answers.write_text("Thought: look first.\nAction: inventory\n")
    store = str(tmp_path / "r.sqlite3")
    args = ["run", "textcraft", "--agent", "react", "--model", f"scripted:{answers}", "-n", "1"]
    code, _, err = run_cli(
        [*args, "--agent-opt", "max_turns=2", "--store", store, "--run-id", "f"], capsys
    )
    assert code == 0, err
    with RunStore(store) as db:
        calls = db.llm_calls("f")
        assert [c["answer"] for c in calls][:2] == ["Thought: look first.", "Action: inventory"]


def test_without_a_config_nothing_is_cached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(["run", "--help"], capsys)
    assert code == 0 and "off without a config" in " ".join(out.split())
    args = ["run", "textcraft", "--agent", "react", "--model", "scripted:echo", "-n", "1"]
    code, _, err = run_cli([*args, "--agent-opt", "max_turns=1", "--store", "r.sqlite3"], capsys)
    assert code == 0, err
    assert not list(tmp_path.rglob("*cache*")), list(tmp_path.rglob("*"))


@pytest.mark.parametrize(
    "args",
    [
        ["team", "run", "crafter-party", "-n", "1"],
        ["automanual", "build", "alfworld", "--per-type", "1"],
    ],
)
def test_commands_that_cannot_simulate_refuse_it_up_front(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(
        [*args, "--model", "scripted:simulate", "--store", str(tmp_path / "r.sqlite3")], capsys
    )
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "scripted:simulate" in err and "scripted:echo or scripted:FILE" in err
    assert not (tmp_path / "r.sqlite3").exists() or "episodes" not in err
