"""Usage and cost per role; calls reach the sink; roles fall back to default."""

import pytest

from lorekit.llm import (
    CallRecord,
    Completion,
    MeteredLLM,
    Price,
    Roles,
    ScriptedLLM,
    Usage,
    UsageLedger,
)


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
    await llm.complete([{"role": "user", "content": "q"}], temperature=0.3, sample=1)
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
