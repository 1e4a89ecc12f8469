"""CachedLLM: hits, misses, replay, sample separation, modes, sharing."""

import asyncio
from pathlib import Path

import pytest

from lorekit.llm import (
    CachedLLM,
    CacheMiss,
    Message,
    MeteredLLM,
    ScriptedLLM,
    SQLiteCache,
    UsageLedger,
    request_key,
)
from lorekit.llm.base import RequestParams


def counter_llm() -> ScriptedLLM:
    n = {"i": 0}

    def answer(msgs: tuple[Message, ...]) -> str:
        n["i"] += 1
        return f"answer {n['i']} to {msgs[-1].content}"

    return ScriptedLLM(fn=answer, model="m1")


async def test_hit_and_miss(tmp_path: Path) -> None:
    inner = counter_llm()
    llm = CachedLLM(inner, tmp_path / "c.sqlite3")
    first = await llm.complete("hello")
    second = await llm.complete("hello")
    assert not first.cached and second.cached
    assert second.text == first.text and second.usage == first.usage
    assert len(inner.calls) == 1 and (llm.hits, llm.misses) == (1, 1)
    other = await llm.complete("bye")
    assert not other.cached and len(inner.calls) == 2


async def test_cache_survives_reopen_and_replays(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    rec = CachedLLM(counter_llm(), path)
    a = await rec.complete("q1", RequestParams(temperature=0.7, sample=2))
    rec.cache.close()
    replay_inner = counter_llm()
    replay = CachedLLM(replay_inner, path, mode="replay")
    b = await replay.complete("q1", RequestParams(temperature=0.7, sample=2))
    assert b.cached and b.text == a.text and replay_inner.calls == []
    with pytest.raises(CacheMiss, match="replay mode") as info:
        await replay.complete("never seen")
    assert "m1" in str(info.value) and replay_inner.calls == []


async def test_sample_and_params_separate_requests(tmp_path: Path) -> None:
    inner = counter_llm()
    llm = CachedLLM(inner, tmp_path / "c.sqlite3")
    s0 = await llm.complete("q", RequestParams(temperature=1.0, sample=0))
    s1 = await llm.complete("q", RequestParams(temperature=1.0, sample=1))
    assert s0.text != s1.text and len(inner.calls) == 2
    await llm.complete("q", RequestParams(temperature=1.0, sample=0, stop=["x"]))
    await llm.complete("q", RequestParams(temperature=0.5, sample=0))
    await llm.complete("q", RequestParams(temperature=1.0, sample=0, max_tokens=50))
    assert len(inner.calls) == 5
    assert (await llm.complete("q", RequestParams(temperature=1.0, sample=1))).cached


def test_key_is_canonical() -> None:
    msgs = (Message("user", "hi"),)
    k1 = request_key("m", msgs, RequestParams(0, None, None, {"type": "json_object", "a": 1}))
    k2 = request_key("m", msgs, RequestParams(0.0, None, None, {"a": 1, "type": "json_object"}))
    assert k1 == k2
    assert k1 != request_key("m2", msgs, RequestParams())
    assert request_key("m", msgs, RequestParams(stop="x")) == request_key(
        "m", msgs, RequestParams(stop=["x"])
    )


async def test_off_mode_never_reads_or_writes(tmp_path: Path) -> None:
    inner = counter_llm()
    llm = CachedLLM(inner, tmp_path / "c.sqlite3", mode="off")
    a = await llm.complete("q")
    b = await llm.complete("q")
    assert a.text != b.text and not b.cached and len(llm.cache) == 0


async def test_usage_excludes_hits(tmp_path: Path) -> None:
    ledger = UsageLedger()
    llm = MeteredLLM(CachedLLM(counter_llm(), tmp_path / "c.sqlite3"), "planner", ledger)
    first = await llm.complete("a fairly long prompt for tokens")
    for _ in range(3):
        await llm.complete("a fairly long prompt for tokens")
    row = ledger.by_role["planner"]
    assert row.calls == 4 and row.cache_hits == 3
    assert row.prompt_tokens == first.usage.prompt_tokens
    assert row.completion_tokens == first.usage.completion_tokens


async def test_concurrent_identical_requests_share_one_call(tmp_path: Path) -> None:
    inner = ScriptedLLM(default="same", latency=0.05)
    llm = CachedLLM(inner, tmp_path / "c.sqlite3")
    outs = await asyncio.gather(*(llm.complete("q") for _ in range(5)))
    assert len(inner.calls) == 1
    assert sum(not o.cached for o in outs) == 1 and {o.text for o in outs} == {"same"}


async def test_errors_are_not_cached_and_followers_see_them(tmp_path: Path) -> None:
    inner = ScriptedLLM([RuntimeError("down"), "fine"], latency=0.02)
    llm = CachedLLM(inner, tmp_path / "c.sqlite3")
    results = await asyncio.gather(llm.complete("q"), llm.complete("q"), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    assert (await llm.complete("q")).text == "fine"


async def test_cancelled_leader_does_not_cancel_follower(tmp_path: Path) -> None:
    inner = ScriptedLLM(default="ok", latency=0.05)
    llm = CachedLLM(inner, tmp_path / "c.sqlite3")
    leader = asyncio.create_task(llm.complete("q"))
    await asyncio.sleep(0.01)
    follower = asyncio.create_task(llm.complete("q"))
    await asyncio.sleep(0.01)
    leader.cancel()
    assert (await follower).text == "ok"


def test_bad_mode_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cache mode"):
        CachedLLM(counter_llm(), SQLiteCache(tmp_path / "c.sqlite3"), mode="sometimes")  # type: ignore[arg-type]
