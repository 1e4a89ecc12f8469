"""The S-Agents study's measures of a team run.

- **TC** (time cost): clock seconds from the start of the run to the tick that
  completed the task. NaN when the task was not completed, whether because no
  progress was made for the cutoff (the paper's rule) or because a time limit
  or the world's end came first; ``reason`` says which.
- **mPT** (mean prompt times): planning passes per member, averaged. A pass
  is one prompt of the task and action planners; wake-ups that return at once
  (a worker with no orders yet) and monitor-only passes do not count.
- **ticks**: engine ticks the world played during the run.
- **usage**: calls, tokens, cost and model latency per role, read from the
  run's :class:`~lorekit.llm.calls.CallRecord` list through the same ledger
  as every other run (so cache hits and failed calls count the usual way).

On a virtual clock the times are virtual seconds and a run's figures repeat
exactly for the same seeds.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lorekit.agents.teams.modes import ModeOutcome
from lorekit.llm.accounting import PriceTable, RoleUsage, UsageLedger
from lorekit.llm.calls import CallRecord


@dataclass(frozen=True)
class TeamMetrics:
    """One run's measures (see the module docstring)."""

    tc: float
    success: bool
    reason: str
    mpt: float
    iterations: dict[str, int]
    ticks: int
    elapsed_s: float
    clock: str
    mode: str
    usage: dict[str, RoleUsage] = field(default_factory=dict)
    plans: dict[str, int] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return sum(row.total_tokens for row in self.usage.values())

    @property
    def cost_usd(self) -> float:
        return sum(row.cost_usd for row in self.usage.values())

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON; a NaN TC is written as None (JSON has no NaN)."""
        return {
            "tc": None if math.isnan(self.tc) else self.tc,
            "success": self.success,
            "reason": self.reason,
            "mpt": self.mpt,
            "iterations": dict(self.iterations),
            "plans": dict(self.plans),
            "ticks": self.ticks,
            "elapsed_s": self.elapsed_s,
            "clock": self.clock,
            "mode": self.mode,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "usage": {role: row.to_dict() for role, row in sorted(self.usage.items())},
        }


def usage_by_role(
    calls: Iterable[CallRecord], prices: PriceTable | None = None
) -> dict[str, RoleUsage]:
    """Calls, tokens, cost and latency per role. Latency is what the model reported
    (a scripted model's sampled latency, spent on the virtual clock), not the
    microseconds a virtual run really took."""
    ledger = UsageLedger(prices)
    for call in calls:
        completion = call.completion
        latency = completion.latency_s if completion is not None else call.latency_s
        ledger.record(call.role, call.model, completion, latency, billed=call.error_usage)
    return dict(ledger.by_role)


def team_metrics(
    outcome: ModeOutcome,
    calls: Iterable[CallRecord] = (),
    *,
    prices: PriceTable | None = None,
) -> TeamMetrics:
    """The measures of one run from its outcome and its model calls."""
    tc = outcome.success_s if outcome.success and outcome.success_s is not None else math.nan
    plans = dict(outcome.plans or outcome.iterations)
    counts = list(plans.values())
    return TeamMetrics(
        tc=tc,
        success=outcome.success,
        reason=outcome.reason,
        mpt=statistics.fmean(counts) if counts else 0.0,
        iterations=dict(outcome.iterations),
        ticks=outcome.ticks,
        elapsed_s=outcome.elapsed_s,
        clock=outcome.clock,
        mode=outcome.mode,
        usage=usage_by_role(calls, prices),
        plans=plans,
    )


def summarize(runs: Sequence[TeamMetrics]) -> dict[str, Any]:
    """Means over several runs (seeds): TC over the successful runs only (NaN
    if none succeeded, as the paper reports it), mPT and ticks over all."""
    if not runs:
        raise ValueError("summarize needs at least one run")
    times = [r.tc for r in runs if not math.isnan(r.tc)]
    return {
        "runs": len(runs),
        "success_rate": sum(r.success for r in runs) / len(runs),
        "tc": statistics.fmean(times) if times else math.nan,
        "mpt": statistics.fmean(r.mpt for r in runs),
        "ticks": statistics.fmean(r.ticks for r in runs),
        "tokens": statistics.fmean(r.tokens for r in runs),
        "cost_usd": statistics.fmean(r.cost_usd for r in runs),
    }


def ratio(value: float, baseline: float) -> float:
    """``value / baseline`` for a table of ratios to solo; NaN when either is NaN or 0."""
    if math.isnan(value) or math.isnan(baseline) or baseline == 0:
        return math.nan
    return value / baseline


def role_rows(usage: Mapping[str, RoleUsage]) -> list[dict[str, Any]]:
    """Per-role rows for a printed table."""
    return [{"role": role, **row.to_dict()} for role, row in sorted(usage.items())]
