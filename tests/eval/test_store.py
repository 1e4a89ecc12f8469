"""Tests of the run store: what goes in comes out, and crashes leave no torn episodes."""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import math
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorekit.eval.store import (
    SCHEMA_VERSION,
    RunMismatchError,
    RunStore,
    SchemaVersionError,
    StoreError,
    UnknownRunError,
)
from lorekit.llm.base import Completion, Message, RequestParams, Usage
from lorekit.llm.calls import CallRecord

CHILD = Path(__file__).with_name("_store_child.py")
REPO_ROOT = Path(__file__).resolve().parents[2]


def _load_child() -> ModuleType:
    """The child's constants and helpers, so the test and the child cannot drift apart."""
    spec = importlib.util.spec_from_file_location("_store_child", CHILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


child = _load_child()


def call(
    role: str = "executor",
    text: str = "hi",
    *,
    cached: bool = False,
    error: str | None = None,
    prompt: int = 10,
    completion: int = 5,
    billed: Usage | None = None,
    estimated: bool = False,
) -> CallRecord:
    comp = None
    if error is None:
        usage = Usage(prompt, completion, estimated)
        comp = Completion(text, usage, "m1", 0.2, cached, "stop")
    return CallRecord(
        role=role,
        model="m1",
        messages=(Message("system", "be brief"), Message("user", f"say {text}")),
        params=RequestParams(temperature=0.5, max_tokens=32, stop=("\n",), sample=1),
        started_at=1000.0,
        latency_s=0.25,
        completion=comp,
        error=error,
        meta={"attempt": 1},
        error_usage=billed,
    )


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with RunStore(tmp_path / "nested" / "runs.sqlite3") as s:
        yield s


def new_run(store: RunStore, run_id: str | None = "r1") -> str:
    return store.create_run(run_id, env="textcraft", agent="react", config={"k": [1, 2]})


def test_round_trip_of_runs_episodes_steps_and_calls(store: RunStore) -> None:
    assert store.path.parent.is_dir()  # parent directories were created
    rid = store.create_run(
        "r1", env="textcraft", agent="react", config={"t": 0.0}, meta={"git": "abc"}
    )
    ep = store.episode(rid, "craft-1/0", index=3, task_id="craft-1", task_group="easy", seed=0)
    ep.add_step("you see a table", "look", 0.0, False, {"valid": True})
    ep.add_step("you craft a stick", "craft stick", 1.0, True, {"valid": True})
    ep.add_llm_call(call("planner", "plan"))
    ep(call("executor", "act"))  # the writer is a CallSink too
    rec = ep.finish(success=True, reward=1.0, info={"turns": 2})
    assert (rec.status, rec.steps, rec.success, rec.index) == ("success", 2, True, 3)
    assert rec.wall_s >= 0 and rec.ended_at >= rec.started_at

    run = store.get_run(rid)
    assert run is not None
    assert (run.env, run.agent, run.status) == ("textcraft", "react", "running")
    assert run.config == {"t": 0.0} and run.meta == {"git": "abc"} and run.summary is None
    assert store.episodes(rid) == [rec]
    steps = store.steps(rid, "craft-1/0")
    assert [(s.idx, s.observation, s.action, s.reward, s.done) for s in steps] == [
        (0, "you see a table", "look", 0.0, False),
        (1, "you craft a stick", "craft stick", 1.0, True),
    ]
    assert steps[0].info == {"valid": True}
    calls = store.llm_calls(rid, "craft-1/0")
    assert [(c["idx"], c["role"], c["answer"]) for c in calls] == [
        (0, "planner", "plan"),
        (1, "executor", "act"),
    ]
    first = calls[0]
    assert first["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "say plan"},
    ]
    assert first["params"] == RequestParams(0.5, 32, ("\n",), None, 1).to_dict()
    assert (first["prompt_tokens"], first["completion_tokens"]) == (10, 5)
    assert (first["cached"], first["error"], first["latency_s"]) == (False, None, 0.25)
    assert first["meta"] == {"attempt": 1, "finish_reason": "stop"}
    assert first["model"] == "m1" and first["started_at"] == 1000.0

    store.set_run_status(rid, "finished", {"success_rate": 1.0})
    run = store.get_run(rid)
    assert run is not None and run.status == "finished"
    assert run.summary == {"success_rate": 1.0}
    store.set_run_status(rid, "interrupted")  # no summary given: the old one stays
    run = store.get_run(rid)
    assert run is not None and run.summary == {"success_rate": 1.0}


def test_generated_run_ids_are_readable_unique_and_listed_newest_first(store: RunStore) -> None:
    ids = [new_run(store, None) for _ in range(5)]
    assert len(set(ids)) == 5
    for rid in ids:
        date, clock, suffix = rid.split("-")
        assert len(date) == 8 and len(clock) == 6 and len(suffix) == 4
        assert date.isdigit() and clock.isdigit()
    assert [r.run_id for r in store.list_runs()] == ids[::-1]
    assert store.get_run("nope") is None


def test_resume_returns_the_same_run_and_a_mismatch_raises(store: RunStore) -> None:
    rid = new_run(store)
    ep = store.episode(rid, "a", index=0)
    ep.finish(success=True, reward=1.0)
    assert store.create_run("r1", env="textcraft", agent="react", config={"other": 1}) == "r1"
    assert len(store.list_runs()) == 1 and len(store.episodes(rid)) == 1
    with pytest.raises(RunMismatchError, match=r"r1.*react"):
        store.create_run("r1", env="textcraft", agent="adapt", config={})
    with pytest.raises(RunMismatchError):
        store.create_run("r1", env="crafter", agent="react", config={})
    with pytest.raises(StoreError):
        store.create_run("  ", env="textcraft", agent="react", config={})


def test_finish_replaces_an_earlier_copy_of_the_episode(store: RunStore) -> None:
    rid = new_run(store)
    first = store.episode(rid, "t/0", index=0, task_id="t")
    for i in range(5):
        first.add_step(f"o{i}", f"a{i}")
    first.add_llm_call(call(error="LLMTimeoutError: slow"))
    first.add_llm_call(call(error="LLMTimeoutError: slow"))
    assert first.finish(success=False, reward=0.0, error="timeout").status == "error"
    assert store.finished_episode_keys(rid) == {"t/0"}
    assert store.finished_episode_keys(rid, include_errors=False) == set()

    again = store.episode(rid, "t/0", index=0, task_id="t")
    again.add_step("o", "a", 1.0, True)
    again.add_llm_call(call())
    again.finish(success=True, reward=1.0)

    [ep] = store.episodes(rid)
    assert (ep.status, ep.steps, ep.error, ep.reward) == ("success", 1, None, 1.0)
    assert len(store.steps(rid, "t/0")) == 1
    calls = store.llm_calls(rid, "t/0")
    assert [(c["idx"], c["error"]) for c in calls] == [(0, None)]
    assert store.finished_episode_keys(rid, include_errors=False) == {"t/0"}


def test_episode_statuses_default_and_validate(store: RunStore) -> None:
    rid = new_run(store)
    assert store.episode(rid, "a", index=0).finish(success=False, reward=0.0).status == "failure"
    assert (
        store.episode(rid, "b", index=1).finish(success=False, reward=0.0, status="error").status
        == "error"
    )
    with pytest.raises(StoreError, match="episode status"):
        store.episode(rid, "c", index=2).finish(success=True, reward=1.0, status="great")
    with pytest.raises(StoreError, match="run status"):
        store.set_run_status(rid, "done")
    assert {e.episode_key for e in store.episodes(rid)} == {"a", "b"}


def test_unfinished_and_abandoned_episodes_are_never_written(store: RunStore) -> None:
    rid = new_run(store)
    pending = store.episode(rid, "pending", index=0)
    pending.add_step("o", "a")
    dropped = store.episode(rid, "dropped", index=1)
    dropped.add_step("o", "a")
    dropped.add_llm_call(call())
    dropped.abandon()
    with pytest.raises(RuntimeError), store.episode(rid, "raised", index=2) as ep:
        ep.add_step("o", "a")
        raise RuntimeError("agent crashed")
    done = store.episode(rid, "done", index=3)
    done.finish(success=True, reward=1.0)
    with pytest.raises(StoreError, match="already finished"):
        done.add_step("late", "step")
    with pytest.raises(StoreError, match="already abandoned"):
        dropped.finish(success=True, reward=1.0)
    assert [e.episode_key for e in store.episodes(rid)] == ["done"]
    assert store.llm_calls(rid) == []
    assert store.steps(rid, "pending") == [] and store.steps(rid, "dropped") == []


def test_usage_by_role_excludes_cache_hits_from_tokens(store: RunStore) -> None:
    rid = new_run(store)
    ep = store.episode(rid, "a", index=0)
    ep.add_llm_call(call("planner", prompt=100, completion=20))
    ep.add_llm_call(call("planner", cached=True, prompt=1000, completion=500))
    ep.add_llm_call(call("executor", prompt=10, completion=2))
    ep.add_llm_call(call("executor", error="LLMServerError: 503"))
    # Cut off at max_tokens before any text: failed, but billed.
    ep.add_llm_call(call("executor", error="LLMLengthError: ...", billed=Usage(40, 64)))
    ep.finish(success=True, reward=1.0)
    store.add_run_llm_call(rid, call("checker", prompt=3, completion=1, estimated=True))
    assert store.usage_by_role(rid) == {
        "planner": {
            "calls": 2,
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "cache_hits": 1,
            "errors": 0,
            "error_tokens": 0,
            "estimated_calls": 0,
        },
        "executor": {
            "calls": 3,
            "prompt_tokens": 50,
            "completion_tokens": 66,
            "cache_hits": 0,
            "errors": 2,
            "error_tokens": 104,
            "estimated_calls": 0,
        },
        "checker": {
            "calls": 1,
            "prompt_tokens": 3,
            "completion_tokens": 1,
            "cache_hits": 0,
            "errors": 0,
            "error_tokens": 0,
            "estimated_calls": 1,
        },
    }
    failed = [c for c in store.llm_calls(rid, "a") if c["error"]]
    assert [(c["prompt_tokens"], c["completion_tokens"]) for c in failed] == [(0, 0), (40, 64)]
    assert store.usage_by_role(new_run(store, "empty")) == {}


def test_calls_outside_episodes_are_kept_with_the_run(store: RunStore) -> None:
    rid = new_run(store)
    store.add_run_llm_call(rid, call("checker", "one"))
    store.add_run_llm_call(rid, call("checker", "two"))
    ep = store.episode(rid, "a", index=0)
    ep.add_llm_call(call("executor", "three"))
    ep.finish(success=True, reward=1.0)
    every = store.llm_calls(rid)
    assert [(c["episode_key"], c["idx"], c["answer"]) for c in every] == [
        (None, 0, "one"),
        (None, 1, "two"),
        ("a", 0, "three"),
    ]
    assert [c["answer"] for c in store.llm_calls(rid, "a")] == ["three"]


def test_export_jsonl_parses_and_matches_the_store(store: RunStore) -> None:
    rid = new_run(store)
    for i in (1, 0):  # written out of order: export follows the index
        ep = store.episode(rid, f"t{i}/0", index=i, task_id=f"t{i}", seed=0)
        for j in range(i + 2):
            ep.add_step(f"obs {j}", f"act {j}", float(j), j == i + 1, {"j": j})
        ep.add_llm_call(call("planner", f"plan {i}"))
        ep.finish(success=bool(i), reward=float(i), info={"nan": math.nan})
    store.add_run_llm_call(rid, call("checker", "ping"))
    buf = io.StringIO()
    n = store.export_jsonl(rid, buf)
    lines = buf.getvalue().splitlines()
    assert n == len(lines) == 4
    objs = [
        json.loads(line, parse_constant=lambda c: pytest.fail(f"non-JSON {c}")) for line in lines
    ]
    run = store.get_run(rid)
    assert run is not None
    assert objs[0] == {"type": "run", **run.to_dict()}
    for obj, rec in zip(objs[1:3], store.episodes(rid), strict=True):
        assert obj["type"] == "episode" and obj["episode_key"] == rec.episode_key
        assert obj["index"] == rec.index and obj["reward"] == rec.reward
        assert obj["step_count"] == rec.steps == len(obj["steps"])
        assert obj["info"] == {"nan": None}  # strict JSON: NaN becomes null
        assert obj["steps"] == [s.to_dict() for s in store.steps(rid, rec.episode_key)]
        expected = store.llm_calls(rid, rec.episode_key)
        for c in expected:
            del c["episode_key"]
        assert obj["llm_calls"] == expected
    assert [o["episode_key"] for o in objs[1:3]] == ["t0/0", "t1/0"]
    assert objs[3]["type"] == "run_llm_calls"
    assert [c["answer"] for c in objs[3]["llm_calls"]] == ["ping"]


class _Unprintable:
    def __str__(self) -> str:
        raise ValueError("no")


def test_odd_info_values_are_stored_as_text_never_crash(store: RunStore) -> None:
    rid = new_run(store)
    cyclic: dict[str, Any] = {"a": 1}
    cyclic["self"] = cyclic
    ep = store.episode(rid, "odd", index=0)
    odd: dict[Any, Any] = {
        "set": {1},
        "obj": _Unprintable(),
        (1, 2): "tuple key",
        "path": Path("/x"),
        "bytes": b"\x00",
    }
    ep.add_step("o", "a", info=odd)
    ep.add_step("o", "a", info=cyclic)
    ep.finish(success=True, reward=1.0, info={"when": cyclic})
    first, second = store.steps(rid, "odd")
    assert first.info == {
        "set": "{1}",
        "obj": "<unprintable _Unprintable>",
        "(1, 2)": "tuple key",
        "path": "/x",
        "bytes": "b'\\x00'",
    }
    assert second.info == {"a": 1, "self": "<cycle>"}
    assert store.episodes(rid)[0].info == {"when": {"a": 1, "self": "<cycle>"}}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=40, deadline=None)
@given(info=st.dictionaries(st.text(), json_values, max_size=4))
def test_json_info_round_trips_exactly(
    tmp_path_factory: pytest.TempPathFactory, info: dict[str, Any]
) -> None:
    with RunStore(tmp_path_factory.mktemp("h") / "s.sqlite3") as s:
        rid = new_run(s)
        ep = s.episode(rid, "k", index=0)
        ep.add_step("o", "a", info=info)
        ep.finish(success=True, reward=0.0, info=info)
        assert s.steps(rid, "k")[0].info == info
        assert s.episodes(rid)[0].info == info


async def test_concurrent_asyncio_episodes_interleave_and_land_intact(store: RunStore) -> None:
    rid = new_run(store)
    n_eps, n_steps = 40, 12

    async def episode(i: int) -> None:
        ep = store.episode(rid, f"task-{i}/0", index=i, task_id=f"task-{i}", seed=0)
        rng = random.Random(i)
        for j in range(n_steps):
            ep.add_step(f"obs {i}.{j}", f"act {i}.{j}", float(j), j == n_steps - 1, {"ep": i})
            ep.add_llm_call(call("executor", f"{i}.{j}"))
            await asyncio.sleep(rng.random() / 1000)  # let the other episodes run between steps
        ep.finish(success=i % 3 != 0, reward=float(i))

    await asyncio.gather(*(episode(i) for i in range(n_eps)))
    eps = store.episodes(rid)
    assert [e.index for e in eps] == list(range(n_eps))
    for e in eps:
        i = e.index
        steps = store.steps(rid, e.episode_key)
        assert e.steps == n_steps
        assert [(s.idx, s.observation, s.action) for s in steps] == [
            (j, f"obs {i}.{j}", f"act {i}.{j}") for j in range(n_steps)
        ]
        assert {s.info["ep"] for s in steps} == {i}
        calls = store.llm_calls(rid, e.episode_key)
        assert [c["answer"] for c in calls] == [f"{i}.{j}" for j in range(n_steps)]
    assert store.usage_by_role(rid)["executor"]["calls"] == n_eps * n_steps


def test_episodes_finished_from_many_threads_land_intact(store: RunStore) -> None:
    rid = new_run(store)

    def worker(t: int) -> None:
        for k in range(15):
            ep = store.episode(rid, f"{t}/{k}", index=t * 100 + k)
            for j in range(3):
                ep.add_step(f"{t}/{k} {j}", "a")
            ep.finish(success=True, reward=1.0)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    eps = store.episodes(rid)
    assert len(eps) == 90
    assert all(len(store.steps(rid, e.episode_key)) == 3 == e.steps for e in eps)


def test_reader_connection_sees_commits_while_the_writer_is_open(store: RunStore) -> None:
    rid = new_run(store)
    with RunStore.open_readonly(store.path) as reader:
        assert reader.episodes(rid) == []
        ep = store.episode(rid, "a", index=0)
        ep.add_step("o", "a")
        assert reader.episodes(rid) == []  # buffered, not committed
        ep.finish(success=True, reward=1.0)
        assert [e.episode_key for e in reader.episodes(rid)] == ["a"]
        assert len(reader.steps(rid, "a")) == 1
        with pytest.raises(StoreError, match="read-only"):
            reader.create_run("x", env="e", agent="a", config={})
        with pytest.raises(StoreError, match="read-only"):
            reader.episode(rid, "b", index=1)


def test_reader_in_another_process_sees_committed_episodes(store: RunStore) -> None:
    rid = new_run(store)
    for i in range(3):
        ep = store.episode(rid, f"e{i}", index=i)
        ep.add_step("o", "a")
        ep.finish(success=True, reward=1.0)
    pending = store.episode(rid, "pending", index=3)
    pending.add_step("o", "a")
    script = (
        "import sys; from lorekit.eval.store import RunStore\n"
        "s = RunStore.open_readonly(sys.argv[1])\n"
        "print(','.join(e.episode_key for e in s.episodes(sys.argv[2])))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(store.path), rid],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert out.stdout.strip() == "e0,e1,e2"


def test_unknown_runs_name_the_run_and_the_store(store: RunStore) -> None:
    readers: list[Callable[[str], object]] = [
        store.episodes,
        store.usage_by_role,
        store.finished_episode_keys,
        store.llm_calls,
        lambda r: store.steps(r, "k"),
        lambda r: store.export_jsonl(r, io.StringIO()),
        lambda r: store.episode(r, "k", index=0),
        lambda r: store.set_run_status(r, "finished"),
        lambda r: store.add_run_llm_call(r, call()),
    ]
    for reader in readers:
        with pytest.raises(UnknownRunError) as info:
            reader("ghost")
        assert isinstance(info.value, LookupError)
        assert "ghost" in str(info.value) and str(store.path) in str(info.value)


def test_open_readonly_of_a_missing_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "store.sqlite3"
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        RunStore.open_readonly(missing)
    assert not missing.parent.exists()


def test_a_newer_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    RunStore(path).close()
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    for opener in (RunStore, RunStore.open_readonly):
        with pytest.raises(SchemaVersionError, match=f"version {SCHEMA_VERSION + 1}"):
            opener(path)


def test_files_that_are_not_run_stores_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite3"
    raw = sqlite3.connect(other)
    raw.execute("CREATE TABLE t (x)")
    raw.close()
    with pytest.raises(StoreError, match="not a LoreKit run store"):
        RunStore(other)
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is no database at all, just some bytes " * 50)
    with pytest.raises(StoreError, match=re.escape(str(junk))):
        RunStore(junk)


def test_closed_store_says_so(tmp_path: Path) -> None:
    s = RunStore(tmp_path / "s.sqlite3")
    s.close()
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.list_runs()


# -- crashes: a real child process killed with SIGKILL --------------------------------


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), *args],
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_for(marker: Path, proc: subprocess.Popen[bytes], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not marker.exists():
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            pytest.fail(f"child exited early with {proc.returncode}: {err}")
        if time.monotonic() > deadline:
            pytest.fail("child never reached its marker")
        time.sleep(0.01)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    if proc.stderr:
        proc.stderr.close()


def _assert_store_is_sound(path: Path) -> None:
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        raw.close()


def test_sigkill_mid_episode_leaves_no_trace_of_it(tmp_path: Path) -> None:
    path, marker, n = tmp_path / "crash.sqlite3", tmp_path / "mid-episode", 6
    proc = _spawn("block", str(path), "crash", str(marker), str(n))
    try:
        _wait_for(marker, proc)
    finally:
        _kill(proc)
    assert proc.returncode == -signal.SIGKILL
    _assert_store_is_sound(path)
    with RunStore.open_readonly(path) as s:
        eps = s.episodes("crash")
        assert [e.episode_key for e in eps] == [f"ep-{i}" for i in range(n)]
        assert child.HALF_KEY not in s.finished_episode_keys("crash")
        assert s.steps("crash", child.HALF_KEY) == []
        assert s.llm_calls("crash", child.HALF_KEY) == []
        for e in eps:
            assert e.steps == child.STEPS_PER_EPISODE
            steps = s.steps("crash", e.episode_key)
            assert [step.action for step in steps] == [
                f"{e.episode_key} act {j}" for j in range(child.STEPS_PER_EPISODE)
            ]
            calls = s.llm_calls("crash", e.episode_key)
            assert [c["answer"] for c in calls] == [
                f"answer for {e.episode_key} call {j}" for j in range(child.CALLS_PER_EPISODE)
            ]
        every = s.llm_calls("crash")
        assert len(every) == n * child.CALLS_PER_EPISODE
        assert all(child.HALF_KEY not in c["answer"] for c in every)
    raw = sqlite3.connect(path)
    for table in ("episodes", "steps", "llm_calls"):
        rows = raw.execute(
            f"SELECT count(*) FROM {table} WHERE episode_key = ?", (child.HALF_KEY,)
        ).fetchone()[0]
        assert rows == 0, table
    raw.close()


def test_sigkill_at_random_moments_never_tears_an_episode(tmp_path: Path) -> None:
    path = tmp_path / "stream.sqlite3"
    rng = random.Random(int(os.environ.get("LOREKIT_CRASH_SEED", "20261121")))
    total = 0
    for round_ in range(6):  # each round resumes the run the previous kill interrupted
        marker = tmp_path / f"started-{round_}"
        proc = _spawn("stream", str(path), "stream", str(marker), str(round_))
        try:
            _wait_for(marker, proc)
            time.sleep(rng.uniform(0.0, 0.3))
        finally:
            _kill(proc)
        assert proc.returncode == -signal.SIGKILL
        _assert_store_is_sound(path)
        with RunStore.open_readonly(path) as s:
            eps = s.episodes("stream")
            assert len(eps) > total  # this round committed at least its first episode
            total = len(eps)
            assert [e.index for e in eps] == list(range(total))  # no gaps, no duplicates
            calls_by_key: dict[str, int] = {}
            for c in s.llm_calls("stream"):
                calls_by_key[c["episode_key"]] = calls_by_key.get(c["episode_key"], 0) + 1
            for e in eps:
                steps = s.steps("stream", e.episode_key)
                assert e.steps == e.info["steps"] == len(steps)
                assert [step.idx for step in steps] == list(range(e.steps))
                assert calls_by_key.pop(e.episode_key, 0) == e.info["calls"]
            assert calls_by_key == {}  # no calls of an episode that is not there
