"""Long commands show progress on stderr to a person watching a terminal, and
stay quiet in pipes and logs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.progress import stderr_progress


def as_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)


@pytest.mark.parametrize("terminal", [True, False])
def test_laws_collect_shows_engine_steps_only_on_a_terminal(
    terminal: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("crafter")
    if terminal:
        as_terminal(monkeypatch)
    out_file = tmp_path / "records.jsonl"
    args = ["laws", "collect", "--successes", "1", "--failures", "1", "--max-steps", "1500"]
    code, out, err = run_cli([*args, "-o", str(out_file)], capsys)
    assert code == 0, err
    assert "records from" in out
    assert ("engine steps" in err) is terminal, err


@pytest.mark.parametrize("terminal", [True, False])
def test_alfworld_generate_shows_games_only_on_a_terminal(
    terminal: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("alfworld")
    if terminal:
        as_terminal(monkeypatch)
    args = ["alfworld", "generate", "--out", str(tmp_path / "games"), "-n", "2", "--no-verify"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert ("generating games" in err) is terminal, err


def test_generate_games_reports_each_game() -> None:
    pytest.importorskip("alfworld")
    from lorekit.envs.alfworld.generate import generate_games

    seen: list[tuple[int, int]] = []
    generate_games(3, 0, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_stderr_progress_is_quiet_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    with stderr_progress("work") as progress:
        progress(1, 2)
    assert capsys.readouterr().err == ""


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_log_gets_a_line_every_interval_with_the_time_left() -> None:
    import io

    from rich.console import Console

    from lorekit.progress import ProgressReport

    log = io.StringIO()
    clock = FakeClock()
    report = ProgressReport("engine steps", 200, console=Console(file=log), every_s=30, clock=clock)
    assert report.mode == "lines"  # a StringIO is no terminal
    with report:
        for done in range(1, 201):
            clock.now += 1.0  # one step a second
            report.update(done, stats="3 records")
    lines = log.getvalue().splitlines()
    assert len(lines) == 200 // 30 + 1  # every 30 s, and one at the end
    assert lines[0] == "engine steps 30/200 (15%), 0:00:30 elapsed, about 0:02:50 left, 3 records"
    assert lines[-1].startswith("engine steps 200/200 (100%), 0:03:20 elapsed")
    assert "left" not in lines[-1]


def test_a_short_job_leaves_the_log_clean() -> None:
    import io

    from rich.console import Console

    from lorekit.progress import ProgressReport

    log = io.StringIO()
    clock = FakeClock()
    with ProgressReport("games", console=Console(file=log), clock=clock) as report:
        clock.now = 29.0
        report.update(5, 10)
    assert log.getvalue() == ""
