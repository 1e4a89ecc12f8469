"""``lorekit team run`` pre-flight: one line, exit 2, nothing stored -- and a
suggestion in that line is one the command then accepts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _cli import run_cli
from _team_fakes import FakeTeam, fake_parts

import lorekit.agents.teams.commands.team as cli_teams

WOOD = "collect-50-wood/seed-0"


@pytest.fixture
def team(monkeypatch: pytest.MonkeyPatch) -> FakeTeam:
    fake = FakeTeam()
    monkeypatch.setattr(cli_teams, "_parts", lambda: fake_parts(fake))
    return fake


def _args(tmp_path: Path, *extra: str) -> list[str]:
    shape = [] if "--org" in extra else ["--org", "tree", "--leaves", "2"]
    task = [] if "--task" in extra else ["--task", WOOD]
    models = [] if "--role" in extra else ["--simulate"]
    run_id = [] if "--run-id" in extra else ["--run-id", "t1"]
    return [
        "team", "run", "crafter-party", *shape, *models, *task, *extra,
        "--store", str(tmp_path / "runs.sqlite3"), *run_id,
    ]  # fmt: skip


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    code, _, err = run_cli(_args(tmp_path, *extra), capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "runs.sqlite3").exists()
    return err


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (
            ["--org", "solo", "--leaves", "2"],
            "--leaves: only a tree has leaves; a solo team has one",
        ),
        (["--org", "chain", "--size", "0"], "--size: a chain needs at least 2 agents, got 0"),
        (["--org", "graph", "--working-root"], "--working-root: only the root of a tree"),
        (["--org", "solo", "--working-root"], "every agent of a solo team works"),
        (["--env-opt", "length=abc"], "length must be a whole number of ticks above 0"),
        (["--role", "leader=m", "--clock", "wall"], "the team's worker role has no model"),
    ],
)
def test_options_that_do_not_apply_are_refused_without_a_wrong_hint(
    tmp_path: Path,
    team: FakeTeam,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    needle: str,
) -> None:
    err = _refused(tmp_path, capsys, *extra)
    assert needle in err, err
    assert "use --size" not in err and "at least 1 agent" not in err
    assert team.played == []


@pytest.mark.parametrize(
    "typo", ["shelter-0_-2/seed-1", "collect-50-wood", "house-0_-3/seed-9", "collect-50-wod/seed-0"]
)
def test_every_task_id_a_refusal_suggests_is_one_that_runs(
    tmp_path: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str], typo: str
) -> None:
    err = _refused(tmp_path, capsys, "--task", typo)
    suggested = re.findall(r"'([\w-]+/seed-\d+)'", err.split(f"{typo!r}", 1)[1])
    assert len(suggested) >= 3, err  # the examples and the nearest id
    if typo == "collect-50-wood":
        assert suggested[-1] == "collect-50-wood/seed-0", err
    for tid in suggested:
        code, _, out = run_cli(
            _args(tmp_path, "--task", tid, "--run-id", tid.replace("/", "_")), capsys
        )
        assert code == 0, (tid, out)


def test_every_env_option_a_refusal_lists_is_one_the_command_takes(
    tmp_path: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _refused(tmp_path, capsys, "--env-opt", "colour=red")
    listed = err.rsplit("accepted: ", 1)[1].strip().split(", ")
    assert listed and "players" not in listed, err
    values = {"length": "500", "peaceful": "true"}
    for name in listed:
        extra = ["--env-opt", f"{name}={values[name]}", "--run-id", f"ok-{name}"]
        code, _, out = run_cli(_args(tmp_path, *extra), capsys)
        assert code == 0, (name, out)


def test_the_served_models_hint_leads_to_a_command_that_runs(
    tmp_path: Path, team: FakeTeam, capsys: pytest.CaptureFixture[str]
) -> None:
    served = ["--model", "gpt-4o-mini", "--base-url", "http://127.0.0.1:9/v1"]
    err = _refused(tmp_path, capsys, "--role", "leader=m", "--clock", "virtual", *served)
    assert "drop the models for --simulate" in err, err
    code, _, out = run_cli(_args(tmp_path, "--clock", "virtual"), capsys)  # --simulate
    assert code == 0, out
