"""One namespace per episode: a sandbox session keeps variables between runs."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from lorekit.sandbox import Limits, SandboxSession, WorkerPool, run_code

ISOLATION = "required" if os.environ.get("CI") else "auto"
LIMITS = Limits(wall_s=10.0, cpu_s=5.0, grace_s=1.0)


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, isolation=ISOLATION) as shared:
        yield shared


class Counter:
    def bump(self, by: int) -> int:
        self.n = getattr(self, "n", 0) + by
        return self.n


def test_variables_survive_between_runs(pool: WorkerPool) -> None:
    with SandboxSession(pool=pool, limits=LIMITS) as session:
        assert session.fresh
        first = session.run("target = 'drawer_1'\nseen = [1]\ndef f(x):\n    return x + 1")
        assert first.ok and not session.fresh
        second = session.run("seen.append(f(1))\nprint(target, seen)")
        assert second.ok, second.error
        assert second.output.strip() == "drawer_1 [1, 2]"


def test_plain_runs_still_forget(pool: WorkerPool) -> None:
    run_code("target = 1", pool=pool, limits=LIMITS)
    result = run_code("print(target)", pool=pool, limits=LIMITS)
    assert result.error is not None and "NameError" in result.error.describe()


def test_an_exception_keeps_the_namespace_and_the_api_is_fresh_each_run(pool: WorkerPool) -> None:
    counter = Counter()
    with SandboxSession(pool=pool, limits=LIMITS) as session:
        failed = session.run("x = api.bump(2)\nassert x == 3, 'not yet'", counter)
        assert failed.error is not None and type(failed.error).kind == "AssertionFailed"
        again = session.run("print(x + api.bump(1))", counter)
        assert again.ok and again.output.strip() == "5"
        assert session.restarts == 0


def test_a_violation_ends_the_worker_and_the_namespace(pool: WorkerPool) -> None:
    with SandboxSession(pool=pool, limits=LIMITS) as session:
        assert session.run("kept = 1").ok and not session.fresh
        bad = session.run("open('/etc/passwd').read()")
        assert bad.error is not None and type(bad.error).kind == "ForbiddenOperation"
        assert session.fresh and session.restarts == 1
        after = session.run("print(kept)")
        assert after.error is not None and "NameError" in after.error.describe()


def test_time_limit_still_applies_per_run(pool: WorkerPool) -> None:
    limits = Limits(wall_s=1.0, cpu_s=5.0, grace_s=0.5)
    with SandboxSession(pool=pool, limits=limits, runs=4) as session:
        assert session.run("a = 1").ok
        slow = session.run("while True:\n    pass")
        assert slow.error is not None and session.fresh
        assert session.run("print(2)").output.strip() == "2"


def test_the_session_moves_on_after_its_runs(pool: WorkerPool) -> None:
    with SandboxSession(pool=pool, limits=LIMITS, runs=2) as session:
        session.run("a = 1")
        assert session.run("print(a)").output.strip() == "1"
        assert session.fresh  # two runs served: the next starts on a new worker


class Robot:
    def __init__(self) -> None:
        self.held = "nothing"

    def take(self, obj: str) -> str:
        self.held = obj
        return f"You pick up the {obj}."

    def state(self) -> dict[str, str]:
        return {"holding": self.held}


def test_state_attributes_read_like_the_published_agent(pool: WorkerPool) -> None:
    robot = Robot()
    code = """
print(agent.holding)
agent.take('mug_1')
assert agent.holding == 'mug_1', agent.holding
print(agent.holding)
"""
    result = run_code(
        code,
        robot,
        api_name="agent",
        api_methods=["take"],
        api_state=robot.state,
        pool=pool,
        limits=LIMITS,
    )
    assert result.ok, result.error
    assert result.output.split() == ["nothing", "mug_1"]
