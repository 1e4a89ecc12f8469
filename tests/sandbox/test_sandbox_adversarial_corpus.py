"""The escape corpus (``corpus/escapes.yaml``): every route stays shut, on either layer.

Each case is run in a warm worker and must fail with an acceptable error,
and, more to the point, its goal must not have happened: the marker outside
the work dir does not exist, the parent's secret and forged output did not
come back, no worker process outlived its run. An ordinary run follows each
case and must still work (sibling workers and the pool are intact). Every
case runs twice: under the OS layer (``os``) and behind the in-process guard
alone (``guard``), so a bypass of the guard fails here even where the OS
layer would have contained what followed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from lorekit import yamlio
from lorekit.sandbox import Limits, SandboxResult, WorkerPool, run_code
from lorekit.sandbox.worker import CHILD_SCRIPT

# the cases leave processes to be reaped on purpose: one worker runs them all, in turn
pytestmark = pytest.mark.xdist_group("sandbox-corpus")

CORPUS_FILE = Path(__file__).with_name("corpus") / "escapes.yaml"
CORPUS: dict[str, Any] = yamlio.safe_load(
    CORPUS_FILE.read_text(encoding="utf-8"), source=str(CORPUS_FILE)
)
CASES: list[dict[str, Any]] = CORPUS["cases"]
LIMITS = Limits(wall_s=1.0, cpu_s=1.5, memory_mb=128, max_output_chars=4_000, grace_s=0.4)
#: Text that only appears if a forged report or a file outside came back.
NEVER_SHOWN = ("FORGED", "root:x:0:0", "PATH=")


WORKER_CMDLINE = b"exec(eval(sys.stdin.readline()))"
"""How a pytest-xdist worker process is started (execnet's popen), seen in its cmdline."""


def _orphan_workers() -> set[int]:
    """Worker processes of this checkout that are not children of this process, leaving
    out those below another pytest-xdist worker (the suite runs on two: README), whose
    pools are its own. The corpus itself runs on one worker (its xdist group)."""
    parents: dict[int, int] = {}
    workers, foreign = [], set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[pid] = int(stat.rsplit(")", 1)[1].split()[1])
        if str(CHILD_SCRIPT).encode() in cmdline:
            workers.append(pid)
        elif WORKER_CMDLINE in cmdline and pid != os.getpid():
            foreign.add(pid)

    def below_another_worker(pid: int) -> bool:
        seen = set()
        while pid > 1 and pid not in seen:
            if pid in foreign:
                return True
            seen.add(pid)
            pid = parents.get(pid, 0)
        return False

    return {pid for pid in workers if parents[pid] != os.getpid() and not below_another_worker(pid)}


def _expand(case: dict[str, Any], marker: Path, secret_path: Path, secret: str) -> str:
    code = str(case["code"]).replace("@PWN@\n", CORPUS["pwn"])
    for key, value in (
        ("@MARKER@", str(marker)),
        ("@SECRET_PATH@", str(secret_path)),
        ("@SECRET@", secret),
    ):
        code = code.replace(key, value)
    return code


def test_corpus_is_large_and_covers_every_class() -> None:
    assert len(CASES) >= 40
    assert len({c["id"] for c in CASES}) == len(CASES)
    classes = {c["class"] for c in CASES}
    assert {
        "str-subclass",
        "gadget",
        "match",
        "guard-state",
        "protocol",
        "os",
        "metaclass",
        "attribute-walk",
        "shared-class",
    } <= classes


@pytest.mark.parametrize("layers", ["os", "guard"])
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_escape_attempt_is_contained(
    case: dict[str, Any], layers: str, request: pytest.FixtureRequest, env: object, tmp_path: Path
) -> None:
    pool: WorkerPool = request.getfixturevalue("os_pool" if layers == "os" else "guard_pool")
    marker = tmp_path / "escaped.marker"
    secret = f"secret-{os.getpid()}-{case['id']}"
    secret_path = tmp_path / "secret.txt"
    secret_path.write_text(secret)
    before = _orphan_workers()
    code = _expand(case, marker, secret_path, secret)

    result = run_code(code, env if case.get("api") else None, pool=pool, limits=LIMITS)

    shown = result.output + "\n" + result.feedback()
    assert not result.ok, f"{case['id']} ran to the end: {result.feedback()}"
    expected = case.get("expect")
    if expected:
        assert result.error_kind in expected, result.feedback()
    assert not marker.exists(), f"{case['id']} wrote outside the sandbox"
    assert secret not in shown
    assert not any(text in shown for text in NEVER_SHOWN), shown
    assert result.duration_s < LIMITS.wall_s + LIMITS.grace_s + 30  # ended by its limits
    _assert_no_new_orphans(before)
    _assert_next_run_works(pool)


def _assert_no_new_orphans(before: set[int]) -> None:
    deadline = time.monotonic() + 2
    while (left := _orphan_workers() - before) and time.monotonic() < deadline:
        time.sleep(0.05)  # a killed worker may take a moment to be reaped
    assert not left, f"processes outlived their run: {sorted(left)}"


def _assert_next_run_works(pool: WorkerPool) -> None:
    after: SandboxResult = run_code("print(sum(range(10)))", pool=pool, limits=LIMITS)
    assert after.ok and after.output == "45\n", after.feedback()
