"""The early-stop rule: a run whose first episodes all hit the same model error
(connection, auth, unknown model, quota, ...) stops; anything else disarms it."""

import asyncio
from pathlib import Path

import pytest

from lorekit.agents import ReActAgent
from lorekit.envs import TextEnv, make
from lorekit.eval.abort import EarlyStop, RunAborted, model_error
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM
from lorekit.llm.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
)

REFUSED = LLMConnectionError("connection refused", model="m", endpoint="http://127.0.0.1:9/v1")


def textcraft() -> TextEnv:
    return make("textcraft")


def test_trips_after_the_first_k_identical_model_errors() -> None:
    stop = EarlyStop(3)
    for _ in range(2):
        stop.observe(REFUSED)
    assert not stop.tripped
    stop.observe(REFUSED)
    assert stop.tripped


@pytest.mark.parametrize(
    "other",
    [
        None,  # a normal episode (success or ordinary failure)
        ValueError("agent bug"),  # not a model setup error
        TimeoutError("episode timed out"),
        LLMServerError("connection refused", model="m", endpoint="http://127.0.0.1:9/v1"),
        LLMConnectionError("connection refused", model="m", endpoint="http://other:1/v1"),
        LLMConnectionError("connection reset", model="m", endpoint="http://127.0.0.1:9/v1"),
    ],
)
def test_anything_else_among_the_first_episodes_disarms_it(other: BaseException | None) -> None:
    stop = EarlyStop(3)
    stop.observe(REFUSED)
    stop.observe(other)
    for _ in range(10):
        stop.observe(REFUSED)
    assert not stop.tripped


def test_the_same_agent_error_trips_it_but_episode_timeouts_never_do() -> None:
    bad_option = EarlyStop(3)
    for _ in range(3):
        bad_option.observe(ValueError("could not convert string to float: 'abc'"))
    assert bad_option.tripped
    slow = EarlyStop(3)
    for _ in range(10):
        slow.observe(TimeoutError("episode timed out after 600 s"))
    assert not slow.tripped


def test_zero_never_trips_and_negative_is_refused() -> None:
    stop = EarlyStop(0)
    for _ in range(10):
        stop.observe(REFUSED)
    assert not stop.tripped
    with pytest.raises(ValueError, match="first"):
        EarlyStop(-1)


@pytest.mark.parametrize(
    "error",
    [
        LLMAuthError("invalid api key", model="m", status=401),
        LLMRequestError("model 'x' not found", model="x", status=404),
        LLMRateLimitError("you exceeded your current quota", model="m", status=429),
        LLMServerError("bad gateway", model="m", status=502),
    ],
)
def test_any_model_error_repeated_by_every_early_episode_trips_it(error: Exception) -> None:
    stop = EarlyStop(3)
    for _ in range(3):
        stop.observe(error)
    assert stop.tripped


def test_model_errors_are_found_behind_a_wrapper() -> None:
    auth = LLMAuthError("bad key", model="m", status=401)
    try:
        try:
            raise auth
        except LLMAuthError as exc:
            raise RuntimeError("agent gave up") from exc
    except RuntimeError as wrapped:
        assert model_error(wrapped) is auth
    assert isinstance(model_error(LLMRequestError("no such model", status=404)), LLMRequestError)
    assert model_error(ValueError("x")) is None and model_error(None) is None


async def test_watch_returns_the_result_when_the_work_finishes() -> None:
    async def work() -> int:
        await asyncio.sleep(0)
        return 7

    assert await EarlyStop(3).watch(work()) == 7


async def test_watch_cancels_the_rest_when_the_rule_trips() -> None:
    stop = EarlyStop(2)
    cancelled: list[int] = []

    async def episode(i: int) -> None:
        if i < 2:
            await asyncio.sleep(0)
            stop.observe(REFUSED)
            return
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(i)
            raise

    with pytest.raises(RunAborted, match="first 2 episodes") as info:
        await stop.watch(asyncio.gather(*(episode(i) for i in range(5))))
    assert info.value.error is REFUSED
    assert sorted(cancelled) == [2, 3, 4]


async def test_run_eval_stops_early_and_keeps_the_played_episodes(tmp_path: Path) -> None:
    roles = Roles(ScriptedLLM(default=REFUSED))
    tasks = textcraft().tasks("test")[:20]
    with RunStore(tmp_path / "r.sqlite3") as db:
        with pytest.raises(RunAborted, match="connection refused"):
            await run_eval(
                db,
                env_factory=textcraft,
                agent=ReActAgent(),
                roles=roles,
                episodes=plan_episodes(tasks),
                run_id="r",
                concurrency=1,
                early_stop=EarlyStop(3),
            )
        eps = db.episodes("r")
        assert len(eps) == 3 and all(e.status == "error" for e in eps)
        run = db.get_run("r")
        assert run is not None and run.status == "interrupted"


async def test_run_eval_plays_everything_once_an_episode_succeeds(tmp_path: Path) -> None:
    calls = {"n": 0}

    def answer(messages: object) -> str:
        calls["n"] += 1
        if calls["n"] > 1:
            raise REFUSED
        return "Thought: done\nAction: inventory"

    roles = Roles(ScriptedLLM(fn=answer))
    tasks = textcraft().tasks("test")[:6]
    with RunStore(tmp_path / "r.sqlite3") as db:
        result = await run_eval(
            db,
            env_factory=textcraft,
            agent=ReActAgent(max_turns=1),
            roles=roles,
            episodes=plan_episodes(tasks),
            run_id="r",
            concurrency=1,
            early_stop=EarlyStop(3),
        )
    assert result.played == 6 and result.errors == 5
