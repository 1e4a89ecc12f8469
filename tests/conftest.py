"""Suite-wide guards: a session that ran no test is a failure, and under CI a
skipped test is a failure unless its reason is on a short allow-list.

pytest already exits 5 when nothing is collected; this also catches the case
where everything collected was skipped or deselected, which would otherwise
look green while proving nothing.

Skips are how a test says "this machine lacks something" (a browser, an
extra, the recipe data pack). On a developer's machine that is fine; in CI it
hides tests that never run while the run stays green. So under ``CI`` (the
variable set to anything but empty, 0, false or no) every skip, whether from a
``skipif`` mark, ``pytest.skip``, ``importorskip`` or a module-level skip,
becomes a failure that names its reason, except for the reasons in
:data:`CI_ALLOWED_SKIPS`. Tests therefore skip plainly (no ``and not CI`` in
their conditions): this is the one place that decides what CI may skip.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

# The command line sizes its tables from $COLUMNS when its output is piped (as in every
# test); pytest-xdist's workers get COLUMNS=80, a user's shell may export anything. Tests
# see what a pipe sees without it (lorekit/cli/console.py), before any test imports it.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)

from lorekit.registry import REGISTRY, Registry

CI_ALLOWED_SKIPS: tuple[str, ...] = (
    # Hardware the CI machine does not have.
    "needs a GPU",
    # The local-model extra costs a ~9 minute llama.cpp build: CI opts in with
    # LOREKIT_CI_LOCAL=1 (.ci/run); the tests for either side name it.
    "LOREKIT_CI_LOCAL",
    # Re-recording TextCraft's golden traces needs a checkout of the original.
    "LOREKIT_TEXTCRAFT_ORIGINAL",
    # Re-recording WebShop's golden rewards and pages needs a checkout of the original.
    "LOREKIT_WEBSHOP_ORIGINAL",
    # ALFWorld's two unseen trials that AutoManual's copy lacks live in another public
    # repository; the 132 the shared copy rebuilds are checked in CI without them.
    "LOREKIT_ALFWORLD_CANDIDATES",
)
"""Substrings of skip reasons CI accepts. Keep it short: each entry is a test
CI never runs."""

_ran = {"count": 0}
_refused_modules: list[str] = []


def under_ci() -> bool:
    """Whether this run is CI's (``CI`` set to a true value)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _refused(report: pytest.TestReport | pytest.CollectReport) -> str | None:
    """Under CI, the reason of a skip that is not allowed; else None."""
    if not report.skipped or hasattr(report, "wasxfail") or not under_ci():
        return None
    reason = _skip_reason(report)
    if any(allowed in reason for allowed in CI_ALLOWED_SKIPS):
        return None
    return reason


_HOW = (
    "CI runs every test: install what it needs (.ci/run), or, for hardware CI "
    "cannot have, add the reason to CI_ALLOWED_SKIPS in tests/conftest.py"
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    reason = _refused(report)
    if reason is not None:
        report.outcome = "failed"
        report.longrepr = f"skipped under CI: {reason}\n{_HOW}"


def pytest_collectreport(report: pytest.CollectReport) -> None:
    # A module-level skip: recorded and reported at the end (failing the
    # collection itself would stop the whole session before any test ran).
    reason = _refused(report)
    if reason is not None:
        _refused_modules.append(f"{report.nodeid}: {reason}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _refused_modules:
        terminalreporter.section("modules skipped under CI (a failure)", red=True)
        for line in _refused_modules:
            terminalreporter.line(line)
        terminalreporter.line(_HOW)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.outcome in ("passed", "failed"):
        _ran["count"] += 1


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller sees every report and decides
    if _refused_modules and exitstatus in (0, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    elif exitstatus == 0 and _ran["count"] == 0:
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED


@pytest.fixture(scope="module", autouse=True)
def _no_browser_outlives_its_module() -> Iterator[None]:
    """Close MiniWoB++'s shared browser pool after every test module that used it. Its
    idle browsers keep the last episode's page open: four left from the AutoManual tests
    used a fifth of a core between them (measured over 20 s, 13 minutes after they
    started) for the rest of the session."""
    yield
    import sys

    pool = sys.modules.get("lorekit.envs.miniwob.pool")
    shared = getattr(pool, "_shared", None)
    if shared is not None and not shared.closed:
        shared.close()


@pytest.fixture
def registry() -> Iterator[Registry]:
    """LoreKit's registry, put back as it was after the test (for tests that register parts)."""
    state = REGISTRY.snapshot()
    try:
        yield REGISTRY
    finally:
        REGISTRY.restore(state)


def _shared_data() -> Path | None:
    """The project's shared data beside the repository (or the machine-wide copy)."""
    beside = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    for folder in (beside, Path("/work/shared/data")):
        if (folder / "alfworld-2.1.1").is_dir() and (folder / "published-runs").is_dir():
            return folder
    return None


@pytest.fixture(scope="session")
def alfworld_release(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """ALFWorld's release rebuilt once per session, for every xdist worker, from the shared
    data (AutoManual's copy and ADaPT's record; the two trials the copy lacks from
    ``$LOREKIT_ALFWORLD_CANDIDATES`` when set): the rebuild replays all 1,444 recorded
    commands, minutes on a busy machine, and the tests that check it and the replays
    that play on it share one."""
    from lorekit.envs.alfworld import release
    from lorekit.envs.alfworld.rebuild import rebuild_release

    shared = _shared_data()
    if shared is None:
        pytest.skip("needs ../shared/data (AutoManual's ALFWorld copy and ADaPT's record)")
    name = str(release.manifest()["record"]["name"])
    record = shared / "published-runs" / "adapt" / name
    from _shared import shared_value

    candidates = os.environ.get("LOREKIT_ALFWORLD_CANDIDATES")
    return shared_value(
        tmp_path_factory,
        "alfworld-release",
        lambda folder: rebuild_release(
            shared / "alfworld-2.1.1",
            record,
            folder / "release",
            candidates=Path(candidates) if candidates else None,
        ),
    )
