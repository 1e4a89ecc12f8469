"""A child process for the run store's crash tests; the test kills it with SIGKILL.

Why a real process: only a process that dies without running any cleanup
(no ``finally``, no ``close``, no atexit) shows what a crashed run leaves on disk.

Usage:
    python _store_child.py block  STORE RUN_ID MARKER N_FINISHED
        finish N episodes, buffer half of another one, touch MARKER, then hang.
    python _store_child.py stream STORE RUN_ID MARKER SEED
        resume the run and commit small episodes in a loop until killed;
        touch MARKER once the first one of this process is committed.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lorekit.eval.store import EpisodeWriter, RunStore
from lorekit.llm.base import Completion, Message, RequestParams, Usage
from lorekit.llm.calls import CallRecord

STEPS_PER_EPISODE = 4
CALLS_PER_EPISODE = 3
HALF_KEY = "half-played"
MAX_LIFETIME_S = 30.0  # a child the test forgot to kill still goes away


def call(role: str, text: str) -> CallRecord:
    """A deterministic model call whose answer names where it was made."""
    return CallRecord(
        role=role,
        model="scripted",
        messages=(Message("user", f"prompt for {text}"),),
        params=RequestParams(),
        started_at=time.time(),
        latency_s=0.01,
        completion=Completion(text=f"answer for {text}", usage=Usage(7, 3), model="scripted"),
    )


def play(ep: EpisodeWriter, n_steps: int, n_calls: int) -> None:
    for i in range(n_steps):
        ep.add_step(f"{ep.episode_key} obs {i}", f"{ep.episode_key} act {i}", 0.0, False, {"i": i})
    for j in range(n_calls):
        ep.add_llm_call(call("executor", f"{ep.episode_key} call {j}"))


def touch(marker: str) -> None:
    Path(marker).write_text("ready")


def block(store: RunStore, run_id: str, marker: str, n_finished: int) -> None:
    for i in range(n_finished):
        ep = store.episode(run_id, f"ep-{i}", index=i, task_id=f"task-{i}", seed=i)
        play(ep, STEPS_PER_EPISODE, CALLS_PER_EPISODE)
        ep.finish(success=i % 2 == 0, reward=float(i))
    half = store.episode(run_id, HALF_KEY, index=n_finished, task_id="half", seed=0)
    play(half, STEPS_PER_EPISODE + 1, CALLS_PER_EPISODE)
    touch(marker)
    time.sleep(MAX_LIFETIME_S)


def stream(store: RunStore, run_id: str, marker: str, seed: int) -> None:
    rng = random.Random(seed)
    start = len(store.finished_episode_keys(run_id))
    deadline = time.monotonic() + MAX_LIFETIME_S
    i = start
    while time.monotonic() < deadline:
        n_steps, n_calls = rng.randint(1, 25), rng.randint(0, 6)
        ep = store.episode(run_id, f"s-{i:06d}", index=i)
        play(ep, n_steps, n_calls)
        ep.finish(success=True, reward=1.0, info={"calls": n_calls, "steps": n_steps})
        if i == start:
            touch(marker)
        i += 1


def main() -> None:
    mode, path, run_id, marker, number = sys.argv[1:6]
    store = RunStore(path)
    store.create_run(run_id, env="crash-env", agent="crash-agent", config={})
    if mode == "block":
        block(store, run_id, marker, int(number))
    elif mode == "stream":
        stream(store, run_id, marker, int(number))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
