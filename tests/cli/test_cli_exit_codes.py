"""The exit code of an error that escapes a command, by its type, through the
real entry point: path errors are the user's to fix (2), other OS errors and
bugs are failures (1), and ``--debug`` changes the output, never the code."""

from __future__ import annotations

import errno
import sqlite3

import pytest
from _cli import run_cli

import lorekit.envs

PATH_ERRORS = [
    FileNotFoundError(errno.ENOENT, "No such file or directory", "data/records.jsonl"),
    PermissionError(errno.EACCES, "Permission denied", "/root/runs.sqlite3"),
    IsADirectoryError(errno.EISDIR, "Is a directory", "out"),
    NotADirectoryError(errno.ENOTDIR, "Not a directory", "afile/x.jsonl"),
    FileExistsError(errno.EEXIST, "File exists", "out.html"),
]
FAILURES = [
    OSError(errno.ENOSPC, "No space left on device", "runs.sqlite3"),
    ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"),
    sqlite3.OperationalError("database is locked"),
]


def _raising(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """Make ``lorekit envs list`` raise ``error`` from inside the command."""

    def broken() -> list[tuple[str, str]]:
        raise error

    monkeypatch.setattr(lorekit.envs, "list_envs", broken)


@pytest.fixture(autouse=True)
def no_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOREKIT_DEBUG", raising=False)


@pytest.mark.parametrize("error", PATH_ERRORS, ids=lambda e: type(e).__name__)
def test_a_path_error_exits_2_with_the_path_on_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: OSError
) -> None:
    _raising(monkeypatch, error)
    code, _, err = run_cli(["envs", "list"], capsys)
    assert code == 2
    assert err.strip() == f"lorekit: error: {error.filename}: {error.strerror}"


@pytest.mark.parametrize("error", FAILURES, ids=lambda e: type(e).__name__)
def test_other_os_and_sqlite_errors_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: Exception
) -> None:
    _raising(monkeypatch, error)
    code, _, err = run_cli(["envs", "list"], capsys)
    assert code == 1
    assert err.startswith("lorekit: error: ") and len(err.strip().splitlines()) == 1
    assert "internal error" not in err  # a known kind of failure, not a bug


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (PATH_ERRORS[0], 2),
        (PATH_ERRORS[1], 2),
        (FAILURES[0], 1),
        (RuntimeError("simulated bug"), 1),
    ],
    ids=["FileNotFoundError", "PermissionError", "OSError", "bug"],
)
def test_debug_prints_the_traceback_and_keeps_the_exit_code(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: Exception,
    code: int,
) -> None:
    _raising(monkeypatch, error)
    monkeypatch.setenv("LOREKIT_DEBUG", "1")
    got, _, err = run_cli(["envs", "list"], capsys)
    assert got == code
    assert "Traceback (most recent call last)" in err and "in broken" in err
    assert str(error.args[-1]) in err
