"""Team metrics: TC (NaN without success), mPT, ticks, and usage per role from the calls."""

from __future__ import annotations

import json
import math

import pytest
from _mode_members import TO_TREE, Dummy, make_world

from lorekit.agents.teams.clock import VirtualClock
from lorekit.agents.teams.metrics import ratio, summarize, team_metrics, usage_by_role
from lorekit.agents.teams.modes import ModeOutcome, run_members
from lorekit.llm import MeteredLLM
from lorekit.llm.accounting import Price
from lorekit.llm.calls import CallRecord


async def test_tc_is_the_time_to_success_and_mpt_the_mean_iterations() -> None:
    world = make_world(VirtualClock())
    walker = Dummy("walker", "p1", world, [2.0], actions=[TO_TREE[:4], TO_TREE[4:]])
    helper = Dummy("helper", "p2", world, [0.5])
    out = await run_members([walker, helper], "async", world, cutoff_s=100, max_time_s=100)
    metrics = team_metrics(out)
    assert metrics.tc == pytest.approx(5.6) and metrics.success
    assert metrics.mpt == pytest.approx(sum(out.iterations.values()) / 2)
    assert out.iterations["helper"] > out.iterations["walker"]
    assert metrics.ticks == 28 and metrics.clock == "virtual" and metrics.mode == "async"


async def test_tc_is_nan_when_no_progress_for_the_cutoff() -> None:
    world = make_world(VirtualClock())
    out = await run_members([Dummy("idler", "p1", world, [1.0])], "round", world,
                            cutoff_s=5, max_time_s=100)  # fmt: skip
    metrics = team_metrics(out)
    assert math.isnan(metrics.tc) and metrics.reason == "no_progress"
    data = metrics.to_dict()
    assert data["tc"] is None
    json.dumps(data, allow_nan=False)  # plain JSON


async def test_tokens_cost_and_latency_per_role_come_from_the_calls() -> None:
    clock = VirtualClock()
    world = make_world(clock, players=3)
    calls: list[CallRecord] = []
    members = [
        Dummy("lead", "p1", world, [4.0], rounds=2, role="leader"),
        Dummy("w1", "p2", world, [1.0], rounds=3),
        Dummy("w2", "p3", world, [1.5], rounds=3),
    ]
    for m in members:
        m.model = MeteredLLM(m.model, m.role, sink=calls.append)  # type: ignore[assignment]
    out = await run_members(members, "async", world, cutoff_s=100, max_time_s=100)
    prices = {"scripted-leader": Price(10.0, 30.0), "scripted-worker": Price(1.0, 2.0)}
    metrics = team_metrics(out, calls, prices=prices)
    leader, worker = metrics.usage["leader"], metrics.usage["worker"]
    assert (leader.calls, worker.calls) == (2, 6)
    assert leader.latency_s == pytest.approx(8.0)  # the model's latency, spent on the clock
    assert worker.latency_s == pytest.approx(3 * 1.0 + 3 * 1.5)
    assert leader.prompt_tokens > 0 and worker.completion_tokens > 0
    expected = (leader.prompt_tokens * 10 + leader.completion_tokens * 30) / 1e6
    assert leader.cost_usd == pytest.approx(expected)
    assert metrics.tokens == leader.total_tokens + worker.total_tokens
    assert usage_by_role(calls)["leader"].cost_usd == 0.0  # no price, no cost


def test_summary_over_seeds_ignores_failed_runs_for_tc() -> None:
    def outcome(success_s: float | None, iterations: dict[str, int]) -> ModeOutcome:
        reason = "success" if success_s else "no_progress"
        ok = success_s is not None
        return ModeOutcome("async", "virtual", reason, ok, 50.0, success_s, 1.0, "", 9, iterations)

    runs = [team_metrics(outcome(10.0, {"a": 2, "b": 4})),
            team_metrics(outcome(30.0, {"a": 1, "b": 1})),
            team_metrics(outcome(None, {"a": 5, "b": 5}))]  # fmt: skip
    summary = summarize(runs)
    assert summary["tc"] == pytest.approx(20.0)
    assert summary["success_rate"] == pytest.approx(2 / 3)
    assert summary["mpt"] == pytest.approx((3 + 1 + 5) / 3)
    assert math.isnan(summarize(runs[2:])["tc"])
    assert ratio(10.0, 20.0) == 0.5 and math.isnan(ratio(math.nan, 2.0))
    with pytest.raises(ValueError, match="at least one run"):
        summarize([])
