"""The alarm pipe: a violation the guard saw stays reported whatever the done frame says."""

from __future__ import annotations

import os

import pytest

from lorekit.sandbox import ForbiddenImport, ForbiddenOperation, Limits, WorkerPool, run_code
from lorekit.sandbox import runner as runner_module
from lorekit.sandbox.errors import ProtocolViolation
from lorekit.sandbox.worker import Worker

LIMITS = Limits(wall_s=2.0, cpu_s=2.0)


def _forged_ok(report: object) -> None:
    """Stands in for a done frame that an escaped snippet rewrote to say 'no error'."""
    return None


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("import os", ForbiddenImport),
        (
            "try:\n    import socket\nexcept BaseException:\n    pass\nprint('fine')",
            ForbiddenImport,
        ),
        ("try:\n    open('/etc/passwd')\nexcept BaseException:\n    pass", ForbiddenOperation),
        ("try:\n    eval('1')\nexcept BaseException:\n    pass", ForbiddenOperation),
    ],
)
def test_a_forged_all_clear_cannot_hide_a_violation(
    pool: WorkerPool, monkeypatch: pytest.MonkeyPatch, code: str, kind: type[Exception]
) -> None:
    monkeypatch.setattr(runner_module, "_reported_error", _forged_ok)
    result = run_code(code, pool=pool, limits=LIMITS)
    assert isinstance(result.error, kind), result.feedback()
    assert result.error.line is not None
    monkeypatch.undo()
    assert run_code("print('ok')", pool=pool, limits=LIMITS).output == "ok\n"


def test_an_honest_run_raises_no_alarm(pool: WorkerPool, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    original = Worker.alarms

    def spy(self: Worker) -> list[tuple[str, int | None, str | None, str]]:
        records = original(self)
        seen.append(records)
        return records

    monkeypatch.setattr(Worker, "alarms", spy)
    assert run_code("print(sum(range(10)))", pool=pool, limits=LIMITS).ok
    blocked = run_code("import os", pool=pool, limits=LIMITS)
    assert isinstance(blocked.error, ForbiddenImport)
    assert seen[0] == []
    assert [r[0] for r in seen[1]] == ["ForbiddenImport"]  # type: ignore[union-attr]


def _worker_with_alarm(data: bytes) -> Worker:
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    os.set_blocking(read, False)
    worker = object.__new__(Worker)
    worker.alarm_fd = read
    return worker


def test_alarm_records_are_parsed_and_garbage_is_a_protocol_violation() -> None:
    good = _worker_with_alarm(b"ForbiddenImport\t3\tcode\tloading module 'os' is not allowed\n")
    assert good.alarms() == [("ForbiddenImport", 3, "code", "loading module 'os' is not allowed")]
    for junk in (b"not a record\n", b"Bad Kind\t1\tcode\tx\n", b"Kind\tseven\tcode\tx\n"):
        with pytest.raises(ProtocolViolation, match="alarm"):
            _worker_with_alarm(junk).alarms()
