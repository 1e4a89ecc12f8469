"""ScriptedLLM answers like a model would: lists, rules, functions, faults, latency."""

import asyncio
import re
import time

import pytest

from lorekit.agents.teams.clock import VirtualClock, join
from lorekit.llm import LLM, LLMServerError, Message, ScriptedLLM, ScriptExhausted
from lorekit.llm.base import RequestParams
from lorekit.llm.scripted import Latency


async def test_list_answers_in_order_then_exhausted() -> None:
    llm = ScriptedLLM(["one", "two"])
    assert isinstance(llm, LLM)
    assert (await llm.complete("a")).text == "one"
    assert (await llm.complete("b")).text == "two"
    assert llm.remaining == 0
    with pytest.raises(ScriptExhausted, match="call 3"):
        await llm.complete("c")
    assert [c.last for c in llm.calls] == ["a", "b", "c"]
    assert llm.calls[2].error is not None


async def test_default_answers_after_list_runs_out() -> None:
    llm = ScriptedLLM(["x"], default="fallback")
    assert [(await llm.complete("q")).text for _ in range(3)] == ["x", "fallback", "fallback"]


async def test_rules_substring_and_regex_with_sequences() -> None:
    llm = ScriptedLLM(
        rules=[
            ("inventory", ["first", "second"]),
            (re.compile(r"craft \d+ stick"), "craft ok"),
        ],
        default="no rule",
    )
    assert (await llm.complete("show inventory")).text == "first"
    assert (await llm.complete("show inventory again")).text == "second"
    assert (await llm.complete("inventory")).text == "second"  # last answer repeats
    assert (await llm.complete("please craft 4 stick now")).text == "craft ok"
    assert (await llm.complete("something else")).text == "no rule"


async def test_rules_match_last_message_unless_all() -> None:
    msgs = [Message("system", "you craft"), Message("user", "go")]
    last = ScriptedLLM(rules=[("craft", "hit")], default="miss")
    every = ScriptedLLM(rules=[("craft", "hit")], default="miss", match_on="all")
    assert (await last.complete(msgs)).text == "miss"
    assert (await every.complete(msgs)).text == "hit"


async def test_function_sync_and_async() -> None:
    sync = ScriptedLLM(fn=lambda msgs: msgs[-1].content.upper())

    async def answer(msgs: tuple[Message, ...]) -> str:
        await asyncio.sleep(0)
        return str(len(msgs))

    asy = ScriptedLLM(fn=answer)
    assert (await sync.complete("abc")).text == "ABC"
    assert (await asy.complete([{"role": "user", "content": "x"}] * 3)).text == "3"


async def test_exception_answers_are_raised() -> None:
    llm = ScriptedLLM(["ok", LLMServerError("boom", model="m")])
    assert (await llm.complete("a")).text == "ok"
    with pytest.raises(LLMServerError, match="boom"):
        await llm.complete("b")


async def test_stop_and_max_tokens_behave_like_a_server() -> None:
    llm = ScriptedLLM(default="Thought: x\nAction: get 1 stick\nObservation: fake")
    out = await llm.complete("q", RequestParams(stop=["\nObservation:"]))
    assert out.text == "Thought: x\nAction: get 1 stick"
    assert out.finish_reason == "stop"
    cut = await llm.complete("q", RequestParams(max_tokens=2))
    assert len(cut.text) == 8 and cut.finish_reason == "length"
    assert out.usage.prompt_tokens >= 1 and out.usage.completion_tokens >= 1


async def test_latency_is_seeded_and_slept() -> None:
    a = ScriptedLLM(default="x", latency=Latency.uniform(0.01, 0.03), seed=7)
    b = ScriptedLLM(default="x", latency=Latency.uniform(0.01, 0.03), seed=7)
    la = [(await a.complete("q")).latency_s for _ in range(3)]
    lb = [(await b.complete("q")).latency_s for _ in range(3)]
    assert la == lb and all(0.01 <= x <= 0.03 for x in la)
    # the default sleep really sleeps (a lower bound: safe on a slow machine)
    t0 = time.perf_counter()
    await ScriptedLLM(default="x", latency=0.05).complete("q")
    assert time.perf_counter() - t0 >= 0.05
    # ten calls sleep concurrently, measured on a virtual clock: 0.05 s, not 0.5 s
    clock = VirtualClock()
    fixed = ScriptedLLM(default="x", latency=0.05, sleep=clock.sleep)
    with clock.participate():
        await join(clock, *(clock.spawn(fixed.complete("q")) for _ in range(10)))
    assert clock.now() == pytest.approx(0.05) and len(fixed.calls) == 10


def test_bad_construction_is_rejected() -> None:
    with pytest.raises(ValueError, match="at most one"):
        ScriptedLLM(["a"], fn=lambda m: "b")
    with pytest.raises(ValueError, match="needs"):
        ScriptedLLM()
    with pytest.raises(ValueError, match="latency"):
        ScriptedLLM(default="x", latency=-1)


async def test_bad_requests_are_rejected() -> None:
    llm = ScriptedLLM(default="x")
    with pytest.raises(ValueError, match="temperature"):
        await llm.complete("q", RequestParams(temperature=3.0))
    with pytest.raises(ValueError, match="at least one message"):
        await llm.complete([])
    with pytest.raises(ValueError, match="role"):
        await llm.complete([{"role": "robot", "content": "x"}])
