"""Suite-wide guard: a session that ran no test at all is a failure.

pytest already exits 5 when nothing is collected; this also catches the case
where everything collected was skipped or deselected, which would otherwise
look green while proving nothing.
"""

from __future__ import annotations

import pytest

_ran = {"count": 0}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.outcome in ("passed", "failed"):
        _ran["count"] += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if exitstatus == 0 and _ran["count"] == 0:
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
