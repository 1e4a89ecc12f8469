"""The Ray backend on a real local cluster (started once, slow-marked).

A driver (``lorekit run ... --backend ray --address ...``) is killed with
SIGKILL mid-run; a second driver with the same run id plays exactly the
missing episodes: none lost, none twice. The model limit (``max_in_flight``)
must hold across both actors, which the calls' own timestamps show.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lorekit.eval.store import RunStore

ray = pytest.importorskip("ray", reason="the Ray backend needs the ray extra")

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray-cluster")]
"""One worker runs the module, so one cluster starts (each takes seconds and 2 CPUs)."""

EPISODES = 24
MAX_IN_FLIGHT = 3


# A cluster of this test only, on loopback; no auth token files, no usage reports.
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local head node with 2 CPUs in its own process group, torn down whole."""
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="lkray")  # short: Ray's socket paths have a length limit
    ray_bin = Path(sys.executable).with_name("ray")
    head = subprocess.Popen(
        [str(ray_bin), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
         f"--port={port}", "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats",
         "--object-store-memory=200000000", f"--temp-dir={temp}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **RAY_ENV},
        start_new_session=True,
    )  # fmt: skip
    address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        assert head.poll() is None, head.stderr.read().decode() if head.stderr else "head died"
        time.sleep(0.5)
    else:
        pytest.fail("the local Ray head did not come up in 90 s")
    try:
        yield address
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:  # a test's cluster holds nothing to keep: a head still up after 5 s is killed
            head.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
        with contextlib.suppress(FileNotFoundError):  # pkill comes with procps, not everywhere
            subprocess.run(["pkill", "-9", "-f", temp], check=False)  # strays of this cluster only
        shutil.rmtree(temp, ignore_errors=True)


def _finished(store: Path, run_id: str) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store) as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM episodes WHERE run_id = ?", (run_id,)
            ).fetchone()
            return int(row[0])
    except sqlite3.OperationalError:
        return 0


SKEW_S = 0.01
"""How far apart the two clocks a call's span is read from may put its ends."""


def _peak_overlap(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    peak = now = 0
    for _, delta in events:
        now += delta
        peak = max(peak, now)
    return peak


def test_driver_killed_mid_run_resumes_without_loss_or_duplicates(
    cluster: str, tmp_path: Path
) -> None:
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        "roles:\n  default: {provider: scripted, model: sim, latency_s: 0.1, "
        f"max_in_flight: {MAX_IN_FLIGHT},\n"
        '            answers: ["Thought: look\\nAction: inventory"]}\n'
        'cache: {mode: "off"}\n'
    )
    store = tmp_path / "runs.sqlite3"
    args = [
        sys.executable, "-m", "lorekit.cli", "run", "textcraft", "--agent", "react",
        "--config", str(cfg), "--store", str(store), "--run-id", "ray-kill",
        "-n", str(EPISODES), "-j", "6", "--agent-opt", "max_turns=3", "--no-progress",
        "--backend", "ray", "--address", cluster, "--actors", "2",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **RAY_ENV}
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 120
    while _finished(store, "ray-kill") < 6 and time.monotonic() < deadline:
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    before = _finished(store, "ray-kill")
    assert 6 <= before < EPISODES, "the kill should land mid-run"

    done = subprocess.run(args, capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr
    assert f"resumed: {before} episodes already done, {EPISODES - before} played now" in (
        done.stderr
    )
    with RunStore(store) as db:
        eps = db.episodes("ray-kill")
        assert len(eps) == EPISODES and len({e.episode_key for e in eps}) == EPISODES
        assert sorted(e.index for e in eps) == list(range(EPISODES))
        spans = []
        for e in eps:
            assert e.status == "failure" and e.error is None
            assert len(db.steps("ray-kill", e.episode_key)) == e.steps == 3
            calls = db.llm_calls("ray-kill", e.episode_key)
            assert len(calls) == 3 and all(c["latency_s"] >= 0.1 for c in calls)
            # The model holds its slot for its 0.1 s of latency, at the end of the
            # call (the wait for a slot comes first): that span is inside the slot.
            # The call's start is wall-clock time and its latency a monotonic clock's, so
            # an end is known to a few milliseconds: each span is trimmed by 10 ms a side
            # (a slot handed on at once looked like an overlap on a loaded machine).
            ends = [c["started_at"] + c["latency_s"] for c in calls]
            spans += [(end - 0.1 + SKEW_S, end - SKEW_S) for end in ends]
    # The second driver's calls never overlapped more than the limit, though
    # 2 actors x 3 episodes each could have made 6 at once.
    later = sorted(spans)[-3 * (EPISODES - before) :]
    assert _peak_overlap(later) <= MAX_IN_FLIGHT


class DiesOn:
    """The oracle, except that it kills its own process (its Ray actor) on one task."""

    name = "dies-on"

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id

    async def run(self, env: Any, task: Any, roles: Any, recorder: Any, *, seed: Any = None) -> Any:
        from lorekit.agents import OracleAgent

        if task.id == self.task_id:
            os._exit(1)  # a crash no exception handler sees: the actor process is gone
        return await OracleAgent().run(env, task, roles, recorder, seed=seed)


def test_a_dead_actor_fails_its_episode_only_and_is_replaced(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ray import cloudpickle

    from lorekit.agents import OracleAgent
    from lorekit.envs import EnvSpec
    from lorekit.eval.ray_backend import RayBackend
    from lorekit.eval.remote import HostRecipe
    from lorekit.eval.runner import plan_episodes, run_eval
    from lorekit.llm import Roles, ScriptedLLM

    for key, value in RAY_ENV.items():
        monkeypatch.setenv(key, value)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests
    env = EnvSpec("textcraft", {})
    tasks = env.make().tasks("test")[:8]
    doomed = tasks[3].id
    recipe = HostRecipe(
        env, functools.partial(DiesOn, doomed), functools.partial(Roles, ScriptedLLM(default="x"))
    )
    backend = RayBackend(recipe, actors=2, per_actor=1, address=cluster)
    backend.start()
    try:
        with RunStore(tmp_path / "r.sqlite3") as db:
            res = asyncio.run(
                run_eval(
                    db, env_factory=env, agent=OracleAgent(), roles=Roles(ScriptedLLM(default="x")),
                    episodes=plan_episodes(tasks), run_id="dead", concurrency=2, backend=backend,
                )
            )  # fmt: skip
            eps = {e.task_id: e for e in db.episodes("dead")}
    finally:
        backend.close()
        ray.shutdown()
    assert res.played == 8 and res.errors == 1 and res.successes == 7
    assert eps[doomed].status == "error" and "died" in (eps[doomed].error or "")
    assert all(e.success for t, e in eps.items() if t != doomed)
    assert backend.replaced == 1


class AsksThenOracle:
    """Asks its model once (the answer goes to the notes), then plays the oracle."""

    name = "asks-then-oracle"

    async def run(self, env: Any, task: Any, roles: Any, recorder: Any, *, seed: Any = None) -> Any:
        from lorekit.agents import OracleAgent

        said = (await roles["default"].complete(f"{task.id}?")).text
        traj = await OracleAgent().run(env, task, roles, recorder, seed=seed)
        traj.notes["said"] = said
        return traj


def fresh_scripted_models() -> Any:
    """The per-episode factory an actor makes once: a new list script per episode."""
    from lorekit.llm import Roles, ScriptedLLM

    return lambda task, seed: Roles(ScriptedLLM(["first", "second"], model=f"m{seed}"))


def test_actors_build_each_episodes_own_models(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``make_episode_roles``: every episode on an actor starts its script over, and
    its calls come back into the driver's store under its own episode."""
    from ray import cloudpickle

    from lorekit.envs import EnvSpec
    from lorekit.eval.ray_backend import RayBackend
    from lorekit.eval.remote import HostRecipe
    from lorekit.eval.runner import plan_episodes, run_eval

    for key, value in RAY_ENV.items():
        monkeypatch.setenv(key, value)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests
    env = EnvSpec("textcraft", {})
    specs = plan_episodes(env.make().tasks("test")[:6])
    recipe = HostRecipe(env, AsksThenOracle, None, make_episode_roles=fresh_scripted_models)
    backend = RayBackend(recipe, actors=2, per_actor=2, address=cluster)
    backend.start()
    try:
        with RunStore(tmp_path / "r.sqlite3") as db:
            res = asyncio.run(
                run_eval(
                    db, env_factory=env, agent=AsksThenOracle(), episodes=specs,
                    run_id="fresh", concurrency=4, backend=backend,
                )
            )  # fmt: skip
            eps = db.episodes("fresh")
            calls = {e.episode_key: db.llm_calls("fresh", e.episode_key) for e in eps}
    finally:
        backend.close()
        ray.shutdown()
    assert res.played == 6 and res.errors == 0
    assert all(e.info["notes"]["said"] == "first" for e in eps)
    assert {k: [(c["answer"], c["model"]) for c in v] for k, v in calls.items()} == {
        s.key: [("first", f"m{s.seed}")] for s in specs
    }
