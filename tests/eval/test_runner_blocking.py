"""Env calls off the event loop: overlap, real timeouts, discarded envs, process envs.

Bounds are generous on purpose (a loaded 2-core machine must pass); the
tight speed goals live in benchmarks/harness_blocking.py.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from lorekit.agents import OracleAgent
from lorekit.envs import EnvBrokenError, EnvSpec, TextEnv, as_async, open_env, register
from lorekit.envs.testing import SleepyEnv
from lorekit.eval.runner import EpisodeOutcome, plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM

ROLES = Roles(ScriptedLLM(default="Action: wait"))
TASKS = SleepyEnv().tasks()

register("sleepy-thread", SleepyEnv, "test env in thread mode", execution="thread", replace=True)
register("sleepy-process", SleepyEnv, "test env in a process", execution="process", replace=True)


class InlineSleepyEnv(SleepyEnv):
    """Claims to be cheap (inline) while its steps block."""

    execution = "inline"


async def test_blocking_steps_of_concurrent_episodes_overlap(tmp_path: Path) -> None:
    step_s, steps, n = 0.05, 5, 8
    built: list[SleepyEnv] = []

    def factory() -> TextEnv:
        built.append(SleepyEnv(step_s=step_s, steps=steps))
        return built[-1]

    with RunStore(tmp_path / "r.sqlite3") as db:
        t0 = time.perf_counter()
        res = await run_eval(
            db,
            env_factory=factory,
            agent=OracleAgent(),
            roles=ROLES,
            episodes=plan_episodes(TASKS[:n]),
            concurrency=n,
        )
        wall = time.perf_counter() - t0
    assert (res.played, res.successes, res.errors) == (n, n, 0)
    # overlap read from the envs' own step spans, however slow the machine is: some step
    # of one env ran while a step of another was running
    spans = sorted((start, end, i) for i, env in enumerate(built) for start, end in env.spans)
    latest_end: dict[int, float] = {}
    overlapped = False
    for start, end, i in spans:
        overlapped = overlapped or any(e > start for j, e in latest_end.items() if j != i)
        latest_end[i] = max(latest_end.get(i, 0.0), end)
    assert overlapped, f"episodes did not overlap ({wall:.2f} s in all)"
    # thread envs are built on, and always called from, a thread of their own
    main = threading.get_ident()
    assert len({env.built_on for env in built}) == len(built)
    assert main not in {env.built_on for env in built}


async def test_hung_step_ends_the_episode_as_an_error_and_the_env_is_not_reused(
    tmp_path: Path,
) -> None:
    built: list[SleepyEnv] = []

    def factory() -> TextEnv:
        built.append(SleepyEnv(step_s=0.001, steps=3, hang_tasks={TASKS[1].id}, hang_s=20))
        return built[-1]

    finished: list[EpisodeOutcome] = []
    with RunStore(tmp_path / "r.sqlite3") as db:
        t0 = time.perf_counter()
        res = await run_eval(
            db,
            env_factory=factory,
            agent=OracleAgent(),
            roles=ROLES,
            episodes=plan_episodes(TASKS[:4]),
            concurrency=1,
            episode_timeout_s=0.5,
            on_episode=finished.append,
        )
        wall = time.perf_counter() - t0
        by_task = {e.task_id: e for e in db.episodes(res.run_id)}
    # logic, not speed: waiting for the hung call would take its whole 20 s
    assert wall < 20, "the hung call held up the run"
    assert (res.played, res.successes, res.errors) == (4, 3, 1)
    hung = by_task[TASKS[1].id]
    assert hung.status == "error" and "timed out" in (hung.error or "")
    assert "discarded" in (hung.error or "") and "step" in (hung.error or "")
    assert (res.envs_discarded, res.stuck_threads) == (1, 1)
    assert res.summary["this_session"]["envs_discarded"] == 1
    # the hung env served nothing after it hung; a fresh one played the rest
    assert len(built) == 2 and built[0].resets == 2 and built[1].resets == 2
    assert [o.status for o in finished] == ["success", "error", "success", "success"]


async def test_a_hanging_build_is_timed_out_too(tmp_path: Path) -> None:
    with RunStore(tmp_path / "r.sqlite3") as db:
        t0 = time.perf_counter()
        res = await run_eval(
            db,
            env_factory=lambda: SleepyEnv(build_s=10),
            agent=OracleAgent(),
            roles=ROLES,
            episodes=plan_episodes(TASKS[:1]),
            episode_timeout_s=0.3,
        )
        assert time.perf_counter() - t0 < 10  # the 10 s build was not waited for
        (episode,) = db.episodes(res.run_id)
    assert episode.status == "error" and "building the env timed out" in (episode.error or "")


async def test_inline_env_caught_blocking_moves_to_a_thread() -> None:
    env = InlineSleepyEnv(step_s=0.02, steps=10)
    handle = as_async(env)
    assert handle.execution == "inline"
    first = await handle.reset(TASKS[0])
    assert first.info["thread"] == threading.get_ident()  # inline: on the loop's thread
    threads = [(await handle.step("wait")).info["thread"] for _ in range(5)]
    assert threads[0] == threading.get_ident()
    assert threads[-1] != threading.get_ident(), "a blocking 'inline' env stayed on the loop"
    assert getattr(handle, "moved_to_thread", False)
    handle.close()
    with pytest.raises(EnvBrokenError, match="closed"):
        await handle.step("wait")


async def test_agents_accept_plain_envs_and_handles_alike() -> None:
    env = SleepyEnv(step_s=0.0, steps=3)
    via_plain = await OracleAgent().run(env, TASKS[0], ROLES, _NoRecord(), seed=0)
    via_handle = await OracleAgent().run(as_async(env), TASKS[0], ROLES, _NoRecord(), seed=0)
    assert via_plain.success and via_handle.success
    assert via_plain.actions == via_handle.actions == ["wait"] * 3


class _NoRecord:
    def add_step(self, *args: object) -> None:
        return None


def _gone_within(pid: int, seconds: float) -> bool:
    """The process ``pid`` ended (and was reaped) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
async def test_process_env_runs_in_a_child_and_a_hung_call_kills_it(tmp_path: Path) -> None:
    spec = EnvSpec(
        "sleepy-process",
        {"step_s": 0.001, "steps": 3, "hang_tasks": [TASKS[1].id], "hang_s": 60},
    )
    with RunStore(tmp_path / "r.sqlite3") as db:
        t0 = time.perf_counter()
        res = await run_eval(
            db,
            env_factory=spec,
            agent=OracleAgent(),
            roles=ROLES,
            episodes=plan_episodes(TASKS[:3]),
            concurrency=1,
            episode_timeout_s=3,  # building (spawning) the env has a limit of its own
        )
        assert time.perf_counter() - t0 < 60  # the 60 s hang was not waited for
        eps = {e.task_id: e for e in db.episodes(res.run_id)}
        steps = db.steps(res.run_id, eps[TASKS[0].id].episode_key)
    assert (res.played, res.successes, res.errors) == (3, 2, 1)
    assert "timed out" in (eps[TASKS[1].id].error or "")
    assert (res.envs_discarded, res.stuck_threads) == (1, 0)
    pids = {s.info["pid"] for s in steps}
    (pid,) = pids
    assert pid != os.getpid(), "the env did not run in a child process"
    assert _gone_within(pid, 10), "the hung env's process was left running"


def test_env_spec_checks_arguments_before_building_anything() -> None:
    with pytest.raises(TypeError, match="bad arguments for env 'sleepy-process'"):
        EnvSpec("sleepy-process", {"no_such_option": 1})
    with pytest.raises(ValueError, match="execution must be one of"):
        EnvSpec("sleepy-thread", {}, execution="fibre")  # type: ignore[arg-type]


def _where(env: TextEnv) -> int:
    return os.getpid()


def _fail(env: TextEnv, message: str) -> None:
    raise ValueError(message)


def _die(env: TextEnv) -> None:
    os._exit(3)


async def test_process_env_answers_calls_reports_errors_and_survives_bad_requests() -> None:
    env = await open_env(EnvSpec("sleepy-process", {"step_s": 0.0, "steps": 2}))
    try:
        assert (env.execution, env.name, env.max_steps) == ("process", "sleepy", 2)
        first = await env.reset(TASKS[0], seed=0)
        assert first.info["pid"] == await env.call(_where) != os.getpid()
        step = await env.step("wait")
        assert step.info["valid"] and not step.done
        assert await env.manual() and await env.action_forms() == ["wait"]
        with pytest.raises(ValueError, match="from the child"):
            await env.call(_fail, "from the child")
        with pytest.raises(TypeError, match="module-level function"):
            await env.call(lambda e: e.name)
        assert env.broken is None and (await env.step("wait")).done  # still usable
        with pytest.raises(EnvBrokenError, match="exit code 3"):
            await env.call(_die)
        assert env.broken is not None
        with pytest.raises(EnvBrokenError):
            await env.step("wait")
    finally:
        env.close()


def _seen(env: TextEnv, name: str) -> tuple[str | None, str]:
    return os.environ.get(name), os.getcwd()


async def test_a_process_env_sees_the_parents_environment_as_it_is_when_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Children fork from a fork server started once: without passing the parent's
    current environment and folder, a child would see them as they were when the server
    started (a key, a cache folder or ``LOREKIT_NO_DISK_CACHE`` set later: lost)."""
    monkeypatch.delenv("LOREKIT_TEST_LATE", raising=False)
    first = await open_env(EnvSpec("sleepy-process", {"step_s": 0.0, "steps": 1}))
    try:  # the server is running now
        assert (await first.call(_seen, "LOREKIT_TEST_LATE"))[0] is None
    finally:
        first.close()
    monkeypatch.setenv("LOREKIT_TEST_LATE", "set after the server started")
    monkeypatch.chdir(tmp_path)
    second = await open_env(EnvSpec("sleepy-process", {"step_s": 0.0, "steps": 1}))
    try:
        value, folder = await second.call(_seen, "LOREKIT_TEST_LATE")
        assert await second.call(_where) != os.getpid()
    finally:
        second.close()
    assert value == "set after the server started"
    assert folder == os.getcwd()  # tmp_path, as the parent sees it now
    monkeypatch.delenv("LOREKIT_TEST_LATE")
    third = await open_env(EnvSpec("sleepy-process", {"step_s": 0.0, "steps": 1}))
    try:  # and a variable the parent dropped is gone in the child too
        assert (await third.call(_seen, "LOREKIT_TEST_LATE"))[0] is None
    finally:
        third.close()
