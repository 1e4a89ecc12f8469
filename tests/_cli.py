"""Running ``lorekit`` in-process the way the installed entry point does."""

from __future__ import annotations

import pytest

from lorekit.cli import main


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``lorekit ARGS`` through ``lorekit.cli.main``."""
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
