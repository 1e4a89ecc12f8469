"""The evaluation harness: concurrency, timeouts, errors, recording, resume."""

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import pytest
from _overlap import Overlap

from lorekit.agents import NullRecorder, OracleAgent, ReActAgent, Recorder, Trajectory
from lorekit.envs import Task, TextEnv, make
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Price, Roles, ScriptedLLM

ROLES = Roles(ScriptedLLM(default="Action: inventory"))


def textcraft() -> TextEnv:
    return make("textcraft")


class SlowOrBrokenAgent:
    """Sleeps on some tasks and raises on others, to test the harness."""

    name = "flaky"

    def __init__(self, slow: set[str], broken: set[str]) -> None:
        self.slow, self.broken = slow, broken

    async def run(
        self, env: TextEnv, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        if task.id in self.broken:
            raise RuntimeError(f"agent bug on {task.id}")
        if task.id in self.slow:
            await asyncio.sleep(5)
        return await OracleAgent().run(env, task, roles, recorder, seed=seed)


def test_plan_is_stable_and_keys_unique() -> None:
    tasks = textcraft().tasks("dev")[:5]
    a, b = plan_episodes(tasks, seed=3, repeats=2), plan_episodes(tasks, seed=3, repeats=2)
    assert a == b and len({e.key for e in a}) == 10
    assert [e.seed for e in a] == list(range(3, 13))


async def test_oracle_run_records_everything(tmp_path: Path) -> None:
    env = textcraft()
    tasks = env.tasks("test")[:20]
    with RunStore(tmp_path / "r.sqlite3") as db:
        res = await run_eval(
            db,
            env_factory=textcraft,
            agent=OracleAgent(),
            roles=ROLES,
            episodes=plan_episodes(tasks),
            concurrency=4,
            env_name="textcraft",
        )
        assert (res.played, res.successes, res.errors) == (20, 20, 0)
        eps = db.episodes(res.run_id)
        assert len(eps) == 20 and all(e.success and e.steps > 0 for e in eps)
        steps = db.steps(res.run_id, eps[0].episode_key)
        assert steps[-1].done and steps[-1].reward == 1.0 and len(steps) == eps[0].steps
        run = db.get_run(res.run_id)
        assert run is not None and run.status == "finished"
        assert run.summary is not None and run.summary["groups"]["all"]["success_rate"] == 1.0
        again = await run_eval(
            db,
            env_factory=textcraft,
            agent=OracleAgent(),
            roles=ROLES,
            episodes=plan_episodes(tasks),
            run_id=res.run_id,
            env_name="textcraft",
        )
        assert (again.played, again.skipped) == (0, 20)


async def test_timeouts_and_agent_errors_are_recorded_not_fatal(tmp_path: Path) -> None:
    tasks = textcraft().tasks("test")[:6]
    agent = SlowOrBrokenAgent(slow={tasks[1].id}, broken={tasks[2].id})
    with RunStore(tmp_path / "r.sqlite3") as db:
        res = await run_eval(
            db,
            env_factory=textcraft,
            agent=agent,
            roles=ROLES,
            episodes=plan_episodes(tasks),
            episode_timeout_s=0.3,
            env_name="textcraft",
        )
        assert (res.played, res.successes, res.errors) == (6, 4, 2)
        by_task = {e.task_id: e for e in db.episodes(res.run_id)}
        assert "timed out" in (by_task[tasks[1].id].error or "")
        assert "agent bug" in (by_task[tasks[2].id].error or "")
        assert by_task[tasks[2].id].status == "error"
        # a resume with retry_errors replays exactly the two errored episodes
        fixed = SlowOrBrokenAgent(slow=set(), broken=set())
        res2 = await run_eval(
            db,
            env_factory=textcraft,
            agent=fixed,
            roles=ROLES,
            episodes=plan_episodes(tasks),
            run_id=res.run_id,
            env_name="textcraft",
            retry_errors=True,
        )
        assert (res2.played, res2.skipped, res2.successes) == (2, 4, 2)
        assert len(db.episodes(res.run_id)) == 6
        assert all(e.success for e in db.episodes(res.run_id))


async def test_llm_calls_recorded_per_episode_and_role(tmp_path: Path) -> None:
    tasks = textcraft().tasks("test")[:4]
    overlap = Overlap(expect=4)
    llm = ScriptedLLM(
        default="Thought: look\nAction: inventory", model="sim", latency=0.05, sleep=overlap.sleep
    )
    roles = Roles({"default": llm})
    with RunStore(tmp_path / "r.sqlite3") as db:
        res = await run_eval(
            db,
            env_factory=textcraft,
            agent=ReActAgent(max_turns=3),
            roles=roles,
            episodes=plan_episodes(tasks),
            concurrency=4,
            prices={"sim": Price(1000.0, 1000.0)},
        )
        # the 4 episodes' calls were in flight together (counted, not timed)
        assert overlap.peak == 4 and overlap.calls == 12
        for e in db.episodes(res.run_id):
            calls = db.llm_calls(res.run_id, e.episode_key)
            assert len(calls) == 3 and {c["role"] for c in calls} == {"executor"}
            assert calls[0]["answer"].startswith("Thought: look")
        usage = db.usage_by_role(res.run_id)
        assert usage["executor"]["calls"] == 12
        assert res.summary["cost_usd"] > 0
        assert res.summary["usage"]["calls"] == 12
        groups = res.summary["groups"]
        assert groups["all"]["llm_calls"] == 12 and groups["all"]["tokens"] > 0
        assert sum(g["llm_calls"] for k, g in groups.items() if k != "all") == 12
        assert groups["all"]["cost_usd"] == pytest.approx(res.summary["cost_usd"])


def _finished(store: Path, run_id: str) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store, timeout=5) as c:
            return int(
                c.execute("SELECT COUNT(*) FROM episodes WHERE run_id=?", (run_id,)).fetchone()[0]
            )
    except sqlite3.OperationalError:
        return 0


def test_sigkill_then_resume_plays_each_episode_once(tmp_path: Path) -> None:
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        "roles:\n  default: {provider: scripted, model: sim, latency_s: 0.05,\n"
        '            answers: ["Thought: look\\nAction: inventory"]}\n'
    )
    store = tmp_path / "runs.sqlite3"
    args = [
        sys.executable,
        "-m",
        "lorekit.cli",
        "run",
        "textcraft",
        "--agent",
        "react",
        "--config",
        str(cfg),
        "--store",
        str(store),
        "--run-id",
        "kill-me",
        "-n",
        "40",
        "-j",
        "4",
        "--agent-opt",
        "max_turns=3",
        "--no-progress",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 60
    while _finished(store, "kill-me") < 8 and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    before = _finished(store, "kill-me")
    assert 8 <= before < 40, "the kill should land mid-run"
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert f"resumed: {before} episodes already done, {40 - before} played now" in done.stderr
    with RunStore(store) as db:
        eps = db.episodes("kill-me")
        assert len(eps) == 40 and len({e.episode_key for e in eps}) == 40
        assert sorted(e.index for e in eps) == list(range(40))
        for e in eps:
            assert len(db.steps("kill-me", e.episode_key)) == e.steps == 3
            assert len(db.llm_calls("kill-me", e.episode_key)) == 3


def test_bad_concurrency(tmp_path: Path) -> None:
    with RunStore(tmp_path / "r.sqlite3") as db, pytest.raises(ValueError, match="concurrency"):
        asyncio.run(
            run_eval(
                db,
                env_factory=textcraft,
                agent=OracleAgent(),
                roles=ROLES,
                episodes=[],
                concurrency=0,
            )
        )
    assert NullRecorder() is not None


class _CountingEnv:
    """A TextCraft env that counts the harness's end-of-episode calls and
    refuses a new episode while the last one was never ended."""

    ended: ClassVar[list[int]] = []

    def __new__(cls) -> TextEnv:
        env = make("textcraft")
        open_episode = [False]
        reset = env.reset

        def counted_reset(*args: object, **kwargs: object) -> object:
            assert not open_episode[0], "reset while the harness had not ended the episode"
            open_episode[0] = True
            return reset(*args, **kwargs)  # type: ignore[arg-type]

        def end_episode() -> None:
            open_episode[0] = False
            cls.ended.append(1)

        env.reset = counted_reset  # type: ignore[method-assign]
        env.end_episode = end_episode  # type: ignore[method-assign]
        return env


async def test_the_harness_ends_every_episode_also_failed_ones(tmp_path: Path) -> None:
    """Envs that hold a resource per episode (a browser lease) learn when an
    episode is over, however it ended, before they serve the next."""
    _CountingEnv.ended = []
    tasks = textcraft().tasks("test")[:6]
    agent = SlowOrBrokenAgent(slow=set(), broken={tasks[1].id, tasks[4].id})
    with RunStore(tmp_path / "r.sqlite3") as db:
        res = await run_eval(
            db,
            env_factory=_CountingEnv,
            agent=agent,
            roles=ROLES,
            episodes=plan_episodes(tasks),
            concurrency=2,
            env_name="textcraft",
        )
    assert (res.played, res.errors) == (6, 2)
    assert len(_CountingEnv.ended) == 6
