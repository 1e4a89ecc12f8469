"""The dry run's measure: stable prompt prefixes, metering per episode and role, and
its estimate against the metered tokens of the same simulated run."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from lorekit.agents.shape_models import shape_roles
from lorekit.eval.cost import (
    RowMeasure,
    Tokens,
    dry_sample,
    measure_rows,
    meter,
    price_row,
    spread_sample,
    stable_prefix,
)
from lorekit.eval.prices import price_table
from lorekit.eval.reproduce import find_experiment


def _m(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


def test_stable_prefix_counts_whole_messages_then_the_common_start() -> None:
    system = _m("system", "x" * 400)  # 100 tokens
    first = [system, _m("user", "Goal: a")]
    grown = [*first, _m("assistant", "Action: b"), _m("user", "Observation: c")]
    assert stable_prefix(first, grown) == 100 + 2  # the system, then "Goal: a" (7 chars)
    changed = [_m("system", "y" + "x" * 399), _m("user", "Goal: a")]
    assert stable_prefix(first, changed) == 0  # the first character differs
    half = [_m("system", "x" * 200 + "z" * 200), _m("user", "Goal: a")]
    assert stable_prefix(first, half) == 50
    assert stable_prefix(first, [_m("user", "x" * 400)]) == 0  # another chat role


def _call(episode: str, role: str, messages: list[dict[str, str]], **kw: Any) -> dict[str, Any]:
    tokens = sum((len(m["content"]) + 3) // 4 for m in messages)
    return {
        "episode_key": episode,
        "role": role,
        "messages": messages,
        "prompt_tokens": tokens,
        "completion_tokens": 5,
        "cached": kw.get("cached", False),
    }


def test_meter_compares_each_call_with_the_previous_one_of_its_role_and_episode() -> None:
    fixed = _m("system", "m" * 400)
    calls = [
        _call("e1", "executor", [fixed, _m("user", "a" * 40)]),
        _call("e1", "planner", [_m("system", "p" * 400), _m("user", "b" * 40)]),
        _call("e1", "executor", [fixed, _m("user", "a" * 40), _m("user", "c" * 40)]),
        _call("e2", "executor", [fixed, _m("user", "a" * 40)]),  # a new episode starts over
        _call("e2", "executor", [fixed, _m("user", "a" * 40)], cached=True),
    ]
    out = meter(calls)
    first = out["e1"]["executor"]
    assert (first.calls, first.prompt, first.completion, first.stable) == (2, 230, 10, 110)
    assert out["e1"]["planner"].stable == 0
    second = out["e2"]["executor"]
    assert (second.calls, second.prompt, second.stable) == (2, 110, 0)  # a cache hit is free
    assert first.stable_share == pytest.approx(110 / 230)


def test_spread_sample_covers_the_split() -> None:
    assert spread_sample(200, 2) == [50, 150]
    assert spread_sample(3, 2) == [0, 2]
    assert spread_sample(1, 2) == [0]


def test_dry_sample_plays_one_task_per_group_weighted_by_its_share() -> None:
    groups = ["a", "b", "a", "a", "c", "b", "a", "a"]
    assert dry_sample(groups, 2) == [(3, 5 / 8), (5, 2 / 8), (4, 1 / 8)]
    assert dry_sample(["x"] * 10, 2) == [(2, 0.5), (7, 0.5)]  # one group: an even spread
    many = [str(i) for i in range(20)]  # more groups than MAX_GROUPS: an even spread
    assert dry_sample(many, 2) == [(5, 0.5), (15, 0.5)]
    assert dry_sample(groups[:2], 2) == [(0, 0.5), (1, 0.5)]  # as many as asked: all


def test_the_mean_episode_weighs_each_by_its_group_share() -> None:
    m = RowMeasure("r", "react", [{"executor": Tokens(10, 100)}, {"executor": Tokens(2, 20)}])
    assert m.mean().calls == 6  # alike without weights
    m.weights = [0.25, 0.75]
    assert (m.mean().calls, m.mean().prompt) == (4, 40)


def test_rows_without_a_model_or_without_scripted_models_play_nothing() -> None:
    def no_models(env: str, agent: str, options: Any) -> Any:
        raise LookupError(f"no scripted models answer agent {agent!r}")

    rows = [
        SimpleNamespace(id="o", agent="oracle", options={}),
        SimpleNamespace(id="r", agent="react", options={}),
    ]
    oracle, react = measure_rows("textcraft", {}, "test", rows, no_models, planned=4)
    assert oracle.missing is None and oracle.mean().calls == 0 and len(oracle.episodes) == 2
    assert react.missing == "no scripted models answer agent 'react'" and not react.episodes


def test_price_row_scales_and_prices_each_role_at_its_model() -> None:
    m = RowMeasure("r", "adapt")
    m.episodes = [
        {"executor": Tokens(10, 1000, 100, 800), "planner": Tokens(1, 500, 50, 0)},
        {"executor": Tokens(20, 3000, 300, 2400)},
    ]
    models = {"executor": "gpt-4o", "planner": "gpt-4"}.__getitem__
    cost = price_row(m, 100, models, price_table())
    assert (cost.per_episode.calls, cost.total.calls) == (15.5, 1550)
    assert cost.total.prompt == 100 * (2000 + 250) and cost.total.stable == 100 * 1600
    usd = (200_000 * 2.5 + 20_000 * 10 + 25_000 * 30 + 2_500 * 60) / 1e6
    assert cost.usd == pytest.approx(usd)
    assert cost.usd_cached == pytest.approx(usd - 160_000 * (2.5 - 1.25) / 1e6)
    unknown = price_row(m, 100, lambda role: "mystery", price_table())
    assert unknown.usd is None and unknown.unpriced == ("mystery",)


def test_the_dry_run_estimate_meets_the_metered_run_within_20_percent() -> None:
    """Two scripted episodes per row, spread over the first 12 tasks, against all 12 played
    with the same scripted models through the same prompts (the benchmark does the paper's
    size: benchmarks/reproduce_cost.py)."""
    exp = find_experiment("adapt-table2-textcraft")
    rows = exp.runnable_rows
    args = (exp.env, exp.env_options, exp.split, rows, shape_roles)
    dry = measure_rows(*args, planned=12, episodes=2)
    full = measure_rows(*args, planned=12, episodes=12)
    table = price_table()
    estimate, metered = Tokens(), Tokens()
    for d, f in zip(dry, full, strict=True):
        assert 2 <= len(d.episodes) <= 4 and len(f.episodes) == 12  # one per depth
        estimate.add(price_row(d, 12, lambda role: "gpt-4o", table).total)
        metered.add(price_row(f, 12, lambda role: "gpt-4o", table).total)
    assert metered.calls > 12 * len(rows)  # every row called the model
    ratio = (estimate.prompt + estimate.completion) / (metered.prompt + metered.completion)
    assert 0.8 <= ratio <= 1.2, ratio
    assert 0.5 < metered.stable_share < 1  # the ADaPT prompts put their fixed parts first
