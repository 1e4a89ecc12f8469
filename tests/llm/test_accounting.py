"""Usage and cost per role; calls reach the sink; roles fall back to default."""

import asyncio
from pathlib import Path

import pytest

from lorekit.llm import (
    CachedLLM,
    CallRecord,
    Completion,
    LLMLengthError,
    MeteredLLM,
    Price,
    Roles,
    ScriptedLLM,
    Usage,
    UsageLedger,
    tokens_label,
)
from lorekit.llm.base import RequestParams


def test_price_cost() -> None:
    assert Price(2.0, 8.0).cost(Usage(1_000_000, 500_000)) == pytest.approx(6.0)
    with pytest.raises(ValueError):
        Price(-1, 0)


def test_ledger_counts_per_role_and_prices_by_model() -> None:
    ledger = UsageLedger({"big": Price(1.0, 2.0)})
    ledger.record("planner", "big", Completion("x", Usage(1000, 500), "big"), 0.1)
    ledger.record("planner", "big", Completion("x", Usage(1000, 500), "big", cached=True), 0.0)
    ledger.record("executor", "small", Completion("x", Usage(10, 5), "small"), 0.1)
    ledger.record("executor", "small", None, 0.2)
    p, e = ledger.by_role["planner"], ledger.by_role["executor"]
    assert (p.calls, p.cache_hits, p.prompt_tokens, p.completion_tokens) == (2, 1, 1000, 500)
    assert p.cost_usd == pytest.approx(0.002)
    assert (e.calls, e.errors, e.cost_usd, e.total_tokens) == (2, 1, 0.0, 15)
    total = ledger.total()
    assert (total.calls, total.total_tokens, total.errors) == (4, 1515, 1)
    assert set(ledger.to_dict()) == {"executor", "planner"}


async def test_metered_llm_sends_every_call_to_sink() -> None:
    seen: list[CallRecord] = []
    llm = MeteredLLM(ScriptedLLM(["hi", RuntimeError("down")]), "executor", sink=seen.append)
    await llm.complete([{"role": "user", "content": "q"}], RequestParams(temperature=0.3, sample=1))
    with pytest.raises(RuntimeError):
        await llm.complete("again")
    assert [r.ok for r in seen] == [True, False]
    first = seen[0].to_dict()
    assert first["answer"] == "hi" and first["role"] == "executor"
    assert first["params"]["temperature"] == 0.3 and first["params"]["sample"] == 1
    assert first["messages"] == [{"role": "user", "content": "q"}]
    assert seen[1].error == "RuntimeError: down" and seen[1].completion is None
    assert llm.ledger.by_role["executor"].errors == 1


async def test_roles_default_fallback_and_metering_by_asked_name() -> None:
    default = ScriptedLLM(default="d", model="base")
    planner = ScriptedLLM(default="p", model="smart")
    roles = Roles({"default": default, "planner": planner})
    assert roles["planner"] is planner and roles["executor"] is default
    assert "builder" in roles
    ledger = UsageLedger()
    sink: list[CallRecord] = []
    metered = roles.metered(ledger, sink.append)
    await metered["planner"].complete("a")
    await metered["executor"].complete("b")
    await metered["executor"].complete("c")
    assert metered["executor"] is metered["executor"]
    assert {r: u.calls for r, u in ledger.by_role.items()} == {"planner": 1, "executor": 2}
    assert [c.model for c in sink] == ["smart", "base", "base"]


def test_roles_without_default_name_what_is_configured() -> None:
    roles = Roles({"planner": ScriptedLLM(default="p")})
    with pytest.raises(KeyError, match="configured: planner"):
        roles["executor"]
    assert "executor" not in roles
    single = Roles(ScriptedLLM(default="x"))
    assert list(single) == ["default"]


# ------------------------------------------------ failed calls, estimates
def test_ledger_counts_billed_tokens_of_failed_calls_and_says_so() -> None:
    ledger = UsageLedger({"big": Price(1.0, 2.0)})
    ledger.record("planner", "big", Completion("x", Usage(100, 10), "big"), 0.1)
    ledger.record("planner", "big", None, 0.2, billed=Usage(100, 64))  # cut off, billed
    ledger.record("planner", "big", None, 0.1)  # a 503: nothing billed
    row = ledger.by_role["planner"]
    assert (row.calls, row.errors) == (3, 2)
    assert (row.prompt_tokens, row.completion_tokens, row.error_tokens) == (200, 74, 164)
    assert row.cost_usd == pytest.approx((200 * 1.0 + 74 * 2.0) / 1e6)
    assert row.to_dict()["error_tokens"] == 164 and row.to_dict()["total_tokens"] == 274


def test_ledger_counts_estimated_calls_and_labels_totals() -> None:
    ledger = UsageLedger()
    ledger.record("a", "m", Completion("x", Usage(1000, 234), "m"), 0.0)
    assert ledger.total().estimated_calls == 0 and ledger.total().tokens_text == "1,234"
    ledger.record("a", "m", Completion("x", Usage(5, 5, estimated=True), "m"), 0.0)
    ledger.record("a", "m", None, 0.0, billed=Usage(3, 3, estimated=True))
    total = ledger.total()
    assert total.estimated_calls == 2 and total.tokens_text == "~1,250"
    assert tokens_label(7, False) == "7" and tokens_label(7, True) == "~7"


async def test_scripted_model_usage_is_marked_estimated() -> None:
    out = await ScriptedLLM(["hello there"]).complete("hi")
    assert out.usage.estimated and out.usage.completion_tokens > 0


async def test_metered_llm_keeps_the_usage_of_a_failed_call() -> None:
    billed = Usage(40, 16)
    cut = LLMLengthError("the answer hit max_tokens=16 before any text", usage=billed)
    seen: list[CallRecord] = []
    llm = MeteredLLM(ScriptedLLM([cut]), "executor", sink=seen.append)
    with pytest.raises(LLMLengthError):
        await llm.complete("q", RequestParams(max_tokens=16))
    row = llm.ledger.by_role["executor"]
    assert (row.errors, row.prompt_tokens, row.completion_tokens, row.error_tokens) == (
        1,
        40,
        16,
        56,
    )
    record = seen[0]
    assert not record.ok and record.usage == billed
    d = record.to_dict()
    assert d["error"].startswith("LLMLengthError") and (
        d["prompt_tokens"],
        d["completion_tokens"],
    ) == (
        40,
        16,
    )


async def test_cache_followers_of_a_failed_call_do_not_count_its_tokens(tmp_path: Path) -> None:
    gate = asyncio.Event()

    async def slow_failure(msgs: object) -> str:
        await gate.wait()
        raise LLMLengthError("cut off", usage=Usage(10, 20))

    shared = CachedLLM(ScriptedLLM(fn=slow_failure), tmp_path / "c.sqlite3")
    ledger = UsageLedger()
    a, b = MeteredLLM(shared, "a", ledger), MeteredLLM(shared, "b", ledger)
    calls = [asyncio.create_task(m.complete("same")) for m in (a, b)]
    await asyncio.sleep(0.01)
    gate.set()
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(r, LLMLengthError) for r in results)
    assert ledger.total().errors == 2
    assert ledger.total().total_tokens == 30  # billed once, to the caller that asked
