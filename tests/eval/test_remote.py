"""Remote play without a cluster: an EpisodeHost plays, the driver replays into its store.

Everything the Ray backend does except the transport lives in
``lorekit.eval.remote``; these tests check that a remotely played episode
lands in the store exactly as a local one does (steps, calls, usage, notes,
errors and timeouts), so the one slow Ray test only has to check the wiring.
"""

from __future__ import annotations

import asyncio
import functools
import pickle
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from lorekit.agents import OracleAgent, ReActAgent, Recorder, Trajectory, make_agent
from lorekit.config import ModelSettings, RunConfig, build_roles
from lorekit.envs import EnvSpec, Task, TextEnv
from lorekit.eval.backend import EpisodeBackend, EpisodeTimeout, LocalBackend
from lorekit.eval.remote import (
    EpisodeHost,
    HostRecipe,
    RemoteEpisode,
    RemoteEpisodeError,
    portable,
    replay,
)
from lorekit.eval.runner import EpisodeSpec, plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM
from lorekit.llm.accounting import UsageLedger

TEXTCRAFT = EnvSpec("textcraft", {})


def scripted_roles() -> Roles:
    return Roles(ScriptedLLM(default="Thought: look\nAction: inventory", model="sim"))


def react() -> ReActAgent:
    return make_agent("react", max_turns=3)  # type: ignore[no-any-return]


class HostBackend:
    """A backend that plays through an EpisodeHost and replays, as Ray does, minus Ray.

    Each result is pickled and unpickled on the way back, so anything that
    could not cross a process boundary fails here too.
    """

    name = "host"
    discarded = 0
    stuck_threads = 0

    def __init__(self, recipe: HostRecipe) -> None:
        self.host = EpisodeHost(recipe, "test-host")

    async def play(
        self, spec: EpisodeSpec, writer: Any, ledger: UsageLedger, timeout_s: float | None
    ) -> Trajectory:
        remote = await self.host.play(spec, timeout_s)
        travelled: RemoteEpisode = pickle.loads(pickle.dumps(remote))
        return replay(travelled, writer, ledger)

    def close(self) -> None:
        self.host.close()


def _recipe(agent: Any = react, roles: Any = scripted_roles) -> HostRecipe:
    return HostRecipe(TEXTCRAFT, agent, roles)


def _store_view(db: RunStore, run_id: str) -> list[tuple[Any, ...]]:
    out = []
    for e in sorted(db.episodes(run_id), key=lambda e: e.index):
        steps = [(s.action, s.observation, s.reward) for s in db.steps(run_id, e.episode_key)]
        calls = [
            (c["role"], c["answer"], c["prompt_tokens"])
            for c in db.llm_calls(run_id, e.episode_key)
        ]
        out.append((e.episode_key, e.status, e.success, e.steps, steps, calls, e.info["notes"]))
    return out


async def test_remote_episodes_land_in_the_store_exactly_like_local_ones(tmp_path: Path) -> None:
    tasks = TEXTCRAFT.make().tasks("test")[:6]
    specs = plan_episodes(tasks)
    backend = HostBackend(_recipe())
    with RunStore(tmp_path / "r.sqlite3") as db:
        local = await run_eval(
            db, env_factory=TEXTCRAFT, agent=react(), roles=scripted_roles(),
            episodes=specs, run_id="local", concurrency=3,
        )  # fmt: skip
        remote = await run_eval(
            db, env_factory=TEXTCRAFT, agent=react(), roles=scripted_roles(),
            episodes=specs, run_id="remote", concurrency=3, backend=backend,
        )  # fmt: skip
        assert local.played == remote.played == 6
        a, b = _store_view(db, "local"), _store_view(db, "remote")
        assert a == b
        assert all(row[3] == 3 and len(row[5]) == 3 for row in b)
        usage_local = dict(db.episodes("local")[0].info["usage"])
        usage_remote = dict(db.episodes("remote")[0].info["usage"])
        assert usage_remote.pop("latency_s") > 0 and usage_local.pop("latency_s") > 0
        assert usage_local == usage_remote and usage_remote["calls"] == 3
    backend.close()


async def test_a_run_eval_keeps_a_backend_it_was_given_open(tmp_path: Path) -> None:
    backend = HostBackend(_recipe(OracleAgent))
    spec = plan_episodes(TEXTCRAFT.make().tasks("test")[:2])
    with RunStore(tmp_path / "r.sqlite3") as db:
        for rid in ("one", "two"):  # the same host serves both runs
            res = await run_eval(
                db, env_factory=TEXTCRAFT, agent=OracleAgent(), roles=scripted_roles(),
                episodes=spec, run_id=rid, backend=backend,
            )  # fmt: skip
            assert res.successes == 2
    assert backend.host.played == 4 and backend.host.pool.opened == 2  # reused by run two
    backend.close()


class _Boom(Exception):
    """An exception that cannot be pickled (it holds a lock)."""

    def __init__(self) -> None:
        super().__init__("agent broke holding a lock")
        self.lock = threading.Lock()


class NotesThenFail:
    """Plays two steps, writes notes, then raises ``error``."""

    name = "notes-then-fail"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def run(
        self, env: TextEnv, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        from lorekit.agents.base import Episode

        ep = await Episode.start(env, task, recorder, seed=seed)
        ep.trajectory.notes["tree"] = {"goal": task.goal, "children": []}
        await roles.get("executor").complete("think")
        await ep.act("inventory")
        await ep.act("inventory")
        raise self.error


@pytest.mark.parametrize(
    ("error", "kind", "text"),
    [
        (RuntimeError("agent bug"), "RuntimeError", "agent bug"),
        (_Boom(), "RemoteEpisodeError", "_Boom: agent broke holding a lock"),
    ],
)
async def test_an_error_travels_back_with_the_partial_episode(
    tmp_path: Path, error: BaseException, kind: str, text: str
) -> None:
    backend = HostBackend(_recipe(functools.partial(NotesThenFail, error)))
    spec = plan_episodes(TEXTCRAFT.make().tasks("test")[:1])
    with RunStore(tmp_path / "r.sqlite3") as db:
        res = await run_eval(
            db, env_factory=TEXTCRAFT, agent=react(), roles=scripted_roles(),
            episodes=spec, run_id="r", backend=backend,
        )  # fmt: skip
        assert res.errors == 1
        (ep,) = db.episodes("r")
        assert ep.status == "error" and kind in (ep.error or "") and text in (ep.error or "")
        assert ep.info["notes"]["tree"]["children"] == []
        assert ep.info["stop_reason"] == "error"
        assert [s.action for s in db.steps("r", ep.episode_key)] == ["inventory", "inventory"]
        assert len(db.llm_calls("r", ep.episode_key)) == 1
    backend.close()


class Sleeper:
    name = "sleeper"

    async def run(
        self, env: TextEnv, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        await asyncio.sleep(30)
        raise AssertionError("not reached")


async def test_a_remote_timeout_is_reported_like_a_local_one(tmp_path: Path) -> None:
    spec = plan_episodes(TEXTCRAFT.make().tasks("test")[:1])
    errors = []
    for name, backend in (
        ("local", LocalBackend(TEXTCRAFT, Sleeper(), scripted_roles())),
        ("host", HostBackend(_recipe(Sleeper))),
    ):
        assert isinstance(backend, EpisodeBackend)
        with RunStore(tmp_path / f"{name}.sqlite3") as db:
            await run_eval(
                db, env_factory=TEXTCRAFT, agent=Sleeper(), roles=scripted_roles(),
                episodes=spec, run_id="r", backend=backend, episode_timeout_s=0.3,
            )  # fmt: skip
            errors.append(db.episodes("r")[0].error)
        backend.close()
    assert errors[0] == errors[1] == "episode timed out after 0.3 s"


def test_portable_keeps_picklable_errors_and_timeouts() -> None:
    keep = ValueError("x")
    assert portable(keep) is keep
    assert isinstance(portable(TimeoutError()), TimeoutError)

    class Hung(TimeoutError):
        def __init__(self) -> None:
            super().__init__("hung")
            self.lock = threading.Lock()

    moved = portable(Hung())
    assert isinstance(moved, EpisodeTimeout) and "Hung: hung" in str(moved)
    assert isinstance(portable(_Boom()), RemoteEpisodeError)


def test_replay_refuses_an_empty_result(tmp_path: Path) -> None:
    with RunStore(tmp_path / "r.sqlite3") as db:
        db.create_run("r", env="textcraft", agent="x", config={}, meta={})
        writer = db.episode("r", "k", index=0, task_id="t", task_group="g", seed=0)
        with pytest.raises(RemoteEpisodeError, match="no result and no error"):
            replay(RemoteEpisode("k"), writer, UsageLedger())


class CountingLimiter:
    """A cluster-style limiter double: counts the slots it hands out."""

    def __init__(self, log: list[str], key: tuple[str, ...]) -> None:
        self.log, self.key = log, key

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[None]:
        self.log.append("/".join(self.key))
        yield


async def test_build_roles_takes_its_limiters_from_the_factory() -> None:
    settings = {"provider": "scripted", "model": "sim", "answers": ["ok"], "max_in_flight": 2}
    cfg = RunConfig(
        roles={"planner": ModelSettings(**settings), "executor": ModelSettings(**settings)},
        cache={"mode": "off"},
    )
    log: list[str] = []
    made: list[tuple[str, ...]] = []

    def factory(key: tuple[str, ...], s: ModelSettings) -> CountingLimiter:
        made.append(key)
        assert s.max_in_flight == 2
        return CountingLimiter(log, key)

    roles = build_roles(cfg, limiter_factory=factory)
    await roles.get("planner").complete("a")
    await roles.get("executor").complete("b")
    assert made == [("scripted", "sim")]  # one limiter for the shared endpoint
    assert log == ["scripted/sim", "scripted/sim"]


def test_a_ray_address_nobody_listens_on_fails_fast() -> None:
    import socket

    from lorekit.eval.ray_backend import check_reachable

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        with pytest.raises(ConnectionError, match=rf"no Ray cluster answers at 127.0.0.1:{port}"):
            check_reachable(f"127.0.0.1:{port}", timeout_s=2)
        with pytest.raises(ConnectionError, match="ray start --head"):
            check_reachable(f"ray://127.0.0.1:{port}", timeout_s=2)
    check_reachable("auto")  # left to Ray
