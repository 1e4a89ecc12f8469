"""What a team episode leaves in the run store, and the run's team summary.

A team run's notes (``notes["team"]``) hold the organization, the mode and
clock, the event list of the timeline (``{"time", "tick", "agent", "kind",
...}``), the message pool, each agent's trace and the metrics (TC, mPT,
engine ticks); :func:`record_result` turns a team result into that plain data,
and :func:`team_summary` averages a run's episodes for its summary.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any


def record_result(result: Any, world: Any) -> dict[str, Any]:
    """A team result as plain data for the notes: events, messages, traces, metrics."""
    events = [_plain(e) for e in getattr(result, "events", None) or ()]
    pool = getattr(result, "messages", None)
    if pool is None and hasattr(world, "messages"):
        pool = world.messages()
    return {
        "events": [e for e in events if isinstance(e, dict)],
        "messages": [_plain(m) for m in pool or ()],
        "traces": _plain(getattr(result, "traces", None) or {}),
        "metrics": _plain(getattr(result, "metrics", None) or {}),
        "success": bool(getattr(result, "success", world.success)),
        "ticks": int(getattr(world, "tick", 0) or 0),
        "progress": str(world.progress()) if hasattr(world, "progress") else "",
    }


def _plain(value: Any) -> Any:
    """Objects with ``to_dict``, and dataclasses, as dicts; containers walked."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, type):
        return _plain(to_dict())  # the owner's own plain form first
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


TC_KEYS = ("tc", "time_cost", "tc_s")
MPT_KEYS = ("mpt", "mean_prompt_times")


def metric(metrics: Mapping[str, Any], names: Sequence[str]) -> float | None:
    """The first of ``names`` that ``metrics`` holds, as a number, or None when it
    holds none. A name present with a null value reads as NaN (JSON has no NaN,
    so a TC of "no progress for the cutoff" may be stored as null)."""
    for name in names:
        if name not in metrics:
            continue
        value = metrics[name]
        if value is None:
            return math.nan
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def team_summary(episodes: Sequence[Any]) -> dict[str, Any]:
    """The team metrics over a run's finished episodes, for the run summary.

    TC is averaged over the episodes that have a finite one (NaN means the
    team made no progress for the cutoff); ``tc_nan`` counts the others.
    """
    tcs: list[float] = []
    nan = 0
    mpts: list[float] = []
    ticks: list[float] = []
    for e in episodes:
        team = (e.info.get("notes") or {}).get("team") or {}
        metrics = team.get("metrics") or {}
        tc = metric(metrics, TC_KEYS)
        if tc is not None and math.isfinite(tc):
            tcs.append(tc)
        elif tc is not None:
            nan += 1
        mpt = metric(metrics, MPT_KEYS)
        if mpt is not None:
            mpts.append(mpt)
        if isinstance(team.get("ticks"), int):
            ticks.append(float(team["ticks"]))
    return {
        "tc_mean": _mean(tcs),
        "tc_nan": nan,
        "mpt_mean": _mean(mpts),
        "ticks_mean": _mean(ticks),
        "episodes": len(episodes),
    }
