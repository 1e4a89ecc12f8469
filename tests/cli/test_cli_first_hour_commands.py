"""The commands a new user reaches for in the first hour (issue 25, item 14):
``envs list`` shows the whole install command, ``agents list`` exists,
``--tasks`` picks tasks of any env, the run store can be set once per user,
``runs show --json`` and ``runs rm`` exist, Crafter runs show their score,
and ``--agent-opt`` values are typed."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.eval.store import RunStore


@pytest.fixture(autouse=True)
def _here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("OPENAI_API_KEY", "LOREKIT_STORE", "LOREKIT_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run_cli(["run", *args, "--no-progress"], capsys)


def test_envs_list_shows_the_extra_in_the_install_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import lorekit.extras

    monkeypatch.setattr(lorekit.extras, "extra_installed", lambda extra: False)
    code, out, err = run_cli(["envs", "list"], capsys)
    assert code == 0, err
    assert "pip install 'lorekit[crafter]'" in out


def test_agents_list_names_roles_and_models(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["agents", "list"], capsys)
    assert code == 0, err
    rows = {}
    for line in out.splitlines():  # columns are set apart by two or more spaces (or rules)
        cells = [c.strip() for c in re.split(r"\s{2,}|\u2502", line.strip()) if c.strip()]
        if len(cells) >= 4 and not line.startswith(" "):
            rows[cells[0]] = cells
    assert rows["react"][2] == "executor" and rows["adapt"][2] == "executor, planner"
    assert rows["random"][3] == "no" and rows["react"][3] == "yes"


def test_tasks_picks_task_ids_of_any_env(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(
        capsys, "textcraft", "-a", "random", "--tasks", "stick,torch", "--run-id", "t"
    )
    assert code == 0, err
    with RunStore.open_readonly("runs/lorekit.sqlite3") as db:
        assert sorted(e.task_id for e in db.episodes("t")) == ["stick", "torch"]
    code, _, err = _run(capsys, "textcraft", "-a", "random", "--tasks", "torhc")
    assert code == 2 and "close: torch" in err


def test_the_user_config_sets_the_store_and_run_prints_its_absolute_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "mine" / "runs.sqlite3"
    (tmp_path / "xdg" / "lorekit").mkdir(parents=True)
    (tmp_path / "xdg" / "lorekit" / "config.yaml").write_text(f"store: {store}\n")
    code, out, err = _run(capsys, "textcraft", "-a", "random", "-n", "1", "--run-id", "u1")
    assert code == 0, err
    assert f"store: {store}" in out and store.is_file()
    code, out, err = run_cli(["runs", "list"], capsys)  # reads the same store, no --store
    assert code == 0 and "u1" in out, err
    code, out, err = _run(capsys, "textcraft", "-a", "random", "-n", "1", "--store", "here.sqlite3")
    assert code == 0, err
    assert f"store: {tmp_path / 'here.sqlite3'}" in out  # relative: printed absolute


def test_a_bad_user_config_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "xdg" / "lorekit").mkdir(parents=True)
    (tmp_path / "xdg" / "lorekit" / "config.yaml").write_text("stor: x\n")
    code, _, err = run_cli(["runs", "list"], capsys)
    assert code == 2 and "unknown setting stor" in err


def test_runs_show_json_and_runs_rm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for rid in ("a1", "a2"):
        code, _, err = _run(capsys, "textcraft", "-a", "random", "-n", "2", "--run-id", rid)
        assert code == 0, err
    code, out, err = run_cli(["runs", "show", "a1", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["run"]["run_id"] == "a1" and data["episodes"] == 2
    assert data["groups"]["all"]["episodes"] == 2
    code, _, err = run_cli(["runs", "rm", "a1"], capsys)  # no terminal to confirm on
    assert code == 2 and "--yes" in err
    code, _, err = run_cli(["runs", "rm", "a1", "--yes"], capsys)
    assert code == 0, err
    with RunStore.open_readonly("runs/lorekit.sqlite3") as db:
        assert db.get_run("a1") is None and db.get_run("a2") is not None
        assert len(db.episodes("a2")) == 2
    with sqlite3.connect("runs/lorekit.sqlite3") as conn:
        for table in ("episodes", "steps", "llm_calls"):
            rows = conn.execute(f"SELECT run_id, COUNT(*) FROM {table} GROUP BY run_id").fetchall()
            assert "a1" not in dict(rows), table
    code, _, err = run_cli(["runs", "show", "a1"], capsys)
    assert code == 2 and "no run 'a1'" in err


def test_crafter_runs_show_the_crafter_score(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["crafter", "-a", "random", "-n", "1", "--agent-opt", "max_steps=3", "--run-id", "c"]
    code, out, err = _run(capsys, *args)
    assert code == 0, err
    assert "Crafter score 0.00%" in out
    code, out, err = run_cli(["runs", "show", "c", "--json"], capsys)
    assert json.loads(out)["env_summary"]["score"] == 0


@pytest.mark.parametrize(
    ("opt", "says"),
    [
        ("max_turns=many", "--agent-opt max_turns: expected an integer or none, got 'many'"),
        ("max_turns=2.5", "--agent-opt max_turns: expected an integer or none, got '2.5'"),
        ("temperature=hot", "--agent-opt temperature: expected a number, got 'hot'"),
        ("patience=[1]", "--agent-opt patience: expected an integer or none, got '[1]'"),
    ],
)
def test_agent_options_are_typed_before_the_run(
    opt: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "textcraft", "-a", "react", "-m", "echo", "--agent-opt", opt)
    assert code == 2 and err.strip() == f"lorekit: error: {says}"
    assert not Path("runs/lorekit.sqlite3").exists()  # checked before the store is touched
