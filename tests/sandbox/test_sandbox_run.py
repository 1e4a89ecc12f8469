"""Ordinary use of run_code: results, calls, feedback, preload, typed errors."""

from __future__ import annotations

import os
import signal
import time

import pytest

from lorekit.sandbox import (
    ApiCallRejected,
    AssertionFailed,
    CodeError,
    LimitExceeded,
    Limits,
    Policy,
    ProtocolViolation,
    SandboxCrashed,
    WorkerPool,
    run_code,
    run_code_async,
)
from lorekit.sandbox.protocol import HEADER, Connection, DeadlineExceeded
from lorekit.sandbox.proxy import ApiGate, conforms, to_json
from lorekit.sandbox.runner import _exit_error, _reported_error


def test_calls_are_proxied_and_recorded(pool: WorkerPool, fast: Limits, env: object) -> None:
    code = "print(api.move(2))\nstuff = api.take('stick', count=2)\nprint(len(stuff))"
    result = run_code(code, env, pool=pool, limits=fast)
    assert result.ok, result.feedback()
    assert result.output == "you are at 2\n2\n"
    assert [(c.method, c.args, dict(c.kwargs)) for c in result.calls] == [
        ("move", (2,), {}),
        ("take", ("stick",), {"count": 2}),
    ]
    assert result.calls[1].result == ["stick", "stick"]
    assert env.position == 2  # type: ignore[attr-defined]  # the real object changed, in the parent


def test_api_errors_reach_the_code_and_can_be_caught(
    pool: WorkerPool, fast: Limits, env: object
) -> None:
    code = "try:\n    api.explode()\nexcept Exception as e:\n    print('caught', e)"
    result = run_code(code, env, pool=pool, limits=fast)
    assert result.ok
    assert "caught api.explode raised ValueError: the bridge collapsed" in result.output
    uncaught = run_code("api.explode()", env, pool=pool, limits=fast)
    assert isinstance(uncaught.error, CodeError) and uncaught.error.exc_type == "ApiError"


def test_failed_assert_message_and_line(pool: WorkerPool, fast: Limits, env: object) -> None:
    code = "x = api.look()\nassert x['position'] == 3, f\"expected 3, at {x['position']}\""
    result = run_code(code, env, pool=pool, limits=fast)
    assert isinstance(result.error, AssertionFailed)
    assert result.error.message == "expected 3, at 0" and result.error.line == 2
    bare = run_code("assert 1 == 2", pool=pool, limits=fast)
    assert isinstance(bare.error, AssertionFailed)
    assert bare.error.source_line == "assert 1 == 2"


def test_syntax_error_is_reported_with_line(pool: WorkerPool, fast: Limits) -> None:
    result = run_code("x = 1\nif x\n    pass", pool=pool, limits=fast)
    assert isinstance(result.error, CodeError) and result.error.exc_type == "SyntaxError"
    assert result.error.line == 2


def test_preload_defines_helpers(pool: WorkerPool, fast: Limits, env: object) -> None:
    helper = "def walk(n):\n    for _ in range(n):\n        api.move(1)\n    return api.look()"
    result = run_code("print(walk(3)['position'])", env, preload=[helper], pool=pool, limits=fast)
    assert result.output == "3\n" and len(result.calls) == 4


def test_errors_in_preload_name_the_piece(pool: WorkerPool, fast: Limits) -> None:
    result = run_code(
        "f()", preload=["x = 1", "def f():\n    return 1 / 0"], pool=pool, limits=fast
    )
    assert isinstance(result.error, CodeError) and result.error.exc_type == "ZeroDivisionError"
    assert result.error.where == "preload[1]" and result.error.line == 2
    assert result.error.source_line == "    return 1 / 0"


def test_allowed_modules_work(pool: WorkerPool, fast: Limits) -> None:
    code = """
import json, math, re, random, itertools
from collections import Counter, namedtuple
from dataclasses import dataclass
import datetime

@dataclass
class Item:
    name: str
    count: int

P = namedtuple("P", "x y")
rng = random.Random(0)
print(json.dumps(Counter("abca")), math.floor(2.5), re.findall(r"\\d", "a1b2"))
print(Item("log", 2), P(1, 2), len(list(itertools.permutations(range(3)))))
print(datetime.date(2024, 1, 2).isoformat(), "{} and {}".format(1, 2), rng.randint(1, 1))
class Base:
    def __init__(self, x):
        self._x = x
class Child(Base):
    def __init__(self):
        super().__init__(5)
print(Child()._x, type(Child()).__name__)
"""
    result = run_code(code, pool=pool, limits=fast)
    assert result.ok, result.feedback()
    lines = result.output.splitlines()
    assert lines[0] == '{"a": 2, "b": 1, "c": 1} 2 [\'1\', \'2\']'
    assert lines[1] == "Item(name='log', count=2) P(x=1, y=2) 6"
    assert lines[2] == "2024-01-02 1 and 2 1"
    assert lines[3] == "5 Child"


def test_narrowed_policy_rejects_more(pool: WorkerPool, fast: Limits) -> None:
    policy = Policy().narrowed(("math",))
    assert run_code("import math", pool=pool, limits=fast, policy=policy).ok
    result = run_code("import json", pool=pool, limits=fast, policy=policy)
    assert result.error_kind == "ForbiddenImport"
    with pytest.raises(ValueError, match="widen"):
        policy.narrowed(("math", "os"))


def test_feedback_text_for_a_model(pool: WorkerPool, fast: Limits, env: object) -> None:
    code = "api.move(1)\nprint('moved')\napi.take(3)"
    text = run_code(code, env, pool=pool, limits=fast).feedback()
    assert "stopped early" in text and "ApiCallRejected" in text
    assert "api.move(1) -> 'you are at 1'" in text
    assert "moved" in text and "line 3" in text
    assert "documented types" in text  # the hint for this kind of error
    ok = run_code("print('fine')", pool=pool, limits=fast).feedback()
    assert ok.startswith("The code ran to the end") and "API calls: none." in ok


def test_raise_for_error_raises_the_typed_error(pool: WorkerPool, fast: Limits) -> None:
    result = run_code("import os", pool=pool, limits=fast)
    with pytest.raises(Exception, match="not allowed") as info:
        result.raise_for_error()
    assert info.value is result.error


def test_oversized_code_is_refused_without_a_worker(
    pool: WorkerPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[object] = []
    acquire = pool.acquire
    monkeypatch.setattr(pool, "acquire", lambda: taken.append(acquire()) or taken[-1])
    result = run_code("x = 1\n" * 100, pool=pool, limits=Limits(max_code_chars=50))
    assert isinstance(result.error, LimitExceeded) and "limit 50" in str(result.error)
    assert taken == []  # refused before a worker was taken
    assert run_code("x = 1\n", pool=pool, limits=Limits(max_code_chars=50)).ok
    assert len(taken) == 1  # code within the limit does take one


async def test_async_wrapper_runs_concurrently(pool: WorkerPool, fast: Limits) -> None:
    import asyncio

    results = await asyncio.gather(
        *(run_code_async(f"print({i} * 2)", pool=pool, limits=fast) for i in range(3))
    )
    assert [r.output for r in results] == ["0\n", "2\n", "4\n"]


def test_shared_pool_is_used_by_default() -> None:
    assert run_code("print('hello')").output == "hello\n"


def test_limits_and_policy_validate() -> None:
    with pytest.raises(ValueError, match="wall_s"):
        Limits(wall_s=0)
    with pytest.raises(ValueError, match="preload_modules"):
        Policy(imports=("math", "os"), preload_modules=("math",))


def test_crashed_worker_is_reported(pool: WorkerPool, fast: Limits) -> None:
    worker = pool.acquire()
    os.kill(worker.proc.pid, signal.SIGSEGV)
    worker.proc.wait(timeout=5)
    error = _exit_error(worker, fast)
    worker.kill()
    assert isinstance(error, SandboxCrashed) and "SIGSEGV" in str(error)


# ------------------------------------------------------------------ gate and protocol


def test_gate_checks_types_budget_and_allowlist(env: object) -> None:
    gate = ApiGate(env, ["move", "take"], max_calls=2)
    assert gate.describe()["take"] == "(item: str, count: int = 1) -> list[str]"
    assert gate.handle("secret", [], {})["kind"] == "ApiCallRejected"
    assert gate.handle("move", ["1"], {})["kind"] == "ApiCallRejected"
    assert gate.handle("take", [], {"item": "x", "colour": "red"})["kind"] == "ApiCallRejected"
    assert gate.handle("move", [1], {}) == {"ok": True, "result": "you are at 1"}
    assert gate.handle("take", ["log"], {})["ok"]
    assert gate.handle("move", [1], {})["kind"] == "ActionBudgetExceeded"
    assert env.position == 1  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="private"):
        ApiGate(env, ["_hidden"], max_calls=1)


@pytest.mark.parametrize(
    ("value", "hint", "ok"),
    [
        (1, int, True),
        (True, int, False),
        (1, float, True),
        ("a", str | None, True),
        (None, str | None, True),
        ([1, 2], list[int], True),
        ([1, "2"], list[int], False),
        ({"a": [1]}, dict[str, list[int]], True),
        ([1, "a"], tuple[int, str], True),
        ("north", "Literal", False),
        (3, object, True),
    ],
)
def test_conforms(value: object, hint: object, ok: bool) -> None:
    assert conforms(value, hint) is ok


def test_results_become_json() -> None:
    from dataclasses import dataclass
    from enum import Enum

    class Colour(Enum):
        RED = "red"

    @dataclass
    class Spot:
        name: str
        tags: tuple[str, ...]

    assert to_json({"s": Spot("a", ("x",)), 1: Colour.RED, "o": object}) == {
        "s": {"name": "a", "tags": ["x"]},
        "1": "red",
        "o": "<class 'object'>",
    }


def _pipe_connection(max_bytes: int = 1024) -> tuple[Connection, int]:
    read_end, write_end = os.pipe()
    spare_read, spare_write = os.pipe()
    os.close(spare_read)
    return Connection(read_end, spare_write, max_bytes), write_end


def test_protocol_rejects_oversized_frames() -> None:
    conn, feed = _pipe_connection()
    os.write(feed, HEADER.pack(10**9))
    with pytest.raises(ProtocolViolation, match="byte message"):
        conn.recv(time.monotonic() + 1)


def test_protocol_rejects_garbage_and_times_out() -> None:
    conn, feed = _pipe_connection()
    os.write(feed, HEADER.pack(5) + b"nope!")
    with pytest.raises(ProtocolViolation, match="malformed"):
        conn.recv(time.monotonic() + 1)
    with pytest.raises(DeadlineExceeded):
        conn.recv(time.monotonic() + 0.05)
    os.close(feed)
    assert conn.recv(time.monotonic() + 1) is None


@pytest.mark.parametrize(
    "report",
    [
        {"kind": "Popen", "message": "x"},
        {"kind": "CodeError", "message": 3},
        {"kind": "CodeError", "message": "x", "line": "7"},
        ["CodeError"],
    ],
)
def test_forged_error_reports_are_protocol_violations(report: object) -> None:
    with pytest.raises(ProtocolViolation):
        _reported_error(report)


def test_rejected_call_kind_maps_to_typed_error() -> None:
    error = _reported_error({"kind": "ApiCallRejected", "message": "bad", "line": 2})
    assert isinstance(error, ApiCallRejected) and error.line == 2
