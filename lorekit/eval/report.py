"""Run summaries: success with its standard error, overall and by task group.

The numbers come only from what the store recorded (the environment's own
reward and success flag), never from an agent's report of itself.

Tokens are what was billed: cache hits count none, failed calls count what
the server charged for them (an answer cut off at ``max_tokens`` before any
text costs as much as a good one). Counts estimated locally, because the
server reported no usage (or the model was scripted), are shown as ``~1,234``
with a note saying how many calls were estimated.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lorekit.eval.store_schema import USAGE_KEYS
from lorekit.llm.accounting import Price, tokens_label
from lorekit.tables import fit_table, say_left_out

if TYPE_CHECKING:
    from lorekit.eval.store import EpisodeRecord, RunStore


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """Aggregates over one set of episodes (a task group, or all of them)."""

    group: str
    episodes: int
    successes: int
    errors: int
    success_rate: float
    stderr: float
    mean_reward: float
    mean_steps: float
    mean_wall_s: float
    llm_calls: int
    tokens: int
    cache_hits: int
    cost_usd: float
    error_tokens: int = 0
    estimated_calls: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def success_stderr(successes: int, n: int) -> float:
    """Standard error of a success rate (binomial): sqrt(p (1 - p) / n)."""
    if n == 0:
        return 0.0
    p = successes / n
    return math.sqrt(p * (1.0 - p) / n)


def summarize_group(group: str, episodes: Iterable[EpisodeRecord]) -> GroupSummary:
    eps = list(episodes)
    n = len(eps)
    ok = sum(1 for e in eps if e.success)

    def mean(xs: list[float]) -> float:
        return sum(xs) / n if n else 0.0

    return GroupSummary(
        group=group,
        episodes=n,
        successes=ok,
        errors=sum(1 for e in eps if e.status == "error"),
        success_rate=ok / n if n else 0.0,
        stderr=success_stderr(ok, n),
        mean_reward=mean([e.reward for e in eps]),
        mean_steps=mean([e.steps for e in eps]),
        mean_wall_s=mean([e.wall_s for e in eps]),
        llm_calls=int(_usage_sum(eps, "calls")),
        tokens=int(_usage_sum(eps, "total_tokens")),
        cache_hits=int(_usage_sum(eps, "cache_hits")),
        cost_usd=_usage_sum(eps, "cost_usd"),
        error_tokens=int(_usage_sum(eps, "error_tokens")),
        estimated_calls=int(_usage_sum(eps, "estimated_calls")),
    )


def _usage_sum(episodes: list[EpisodeRecord], key: str) -> float:
    """Sum one field of the per-episode usage the harness keeps in ``info``."""
    total = 0.0
    for e in episodes:
        usage = e.info.get("usage") if isinstance(e.info, dict) else None
        if isinstance(usage, dict):
            total += float(usage.get(key, 0) or 0)
    return total


def _group_order(name: str) -> tuple[int, str]:
    """Sort "depth-2" before "depth-10": numeric suffixes compare as numbers."""
    head, _, tail = name.rpartition("-")
    return (int(tail), head) if tail.isdigit() else (10**9, name)


def summarize(episodes: Iterable[EpisodeRecord]) -> dict[str, GroupSummary]:
    """``{"all": ..., group: ...}`` with groups in natural order."""
    eps = list(episodes)
    by_group: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for e in eps:
        by_group[e.task_group or "-"].append(e)
    out = {"all": summarize_group("all", eps)}
    for g in sorted(by_group, key=_group_order):
        out[g] = summarize_group(g, by_group[g])
    return out


def run_summary(store: RunStore, run_id: str) -> dict[str, Any]:
    """Everything ``runs show`` prints, as plain data (also stored with the run)."""
    eps = store.episodes(run_id)
    usage = store.usage_by_role(run_id)
    span = (max(e.ended_at for e in eps) - min(e.started_at for e in eps)) if eps else 0.0
    totals = {k: sum(int(u.get(k, 0)) for u in usage.values()) for k in USAGE_KEYS}
    return {
        "groups": {g: s.to_dict() for g, s in summarize(eps).items()},
        "usage_by_role": usage,
        "usage": totals,
        "wall_s": span,
        "models": store.models_answered([run_id]),
    }


def stored_cost(store: RunStore, run_id: str, prices: Mapping[str, Price] | None) -> float:
    """What the store holds of a run's spend, over every session that played it: each
    stored episode's cost (priced when it played) and the calls kept outside any
    episode (an episode a spending limit cut short), priced with ``prices``."""
    total = _usage_sum(store.episodes(run_id), "cost_usd")
    for model, (p, c) in store.tokens_by_model([run_id], outside_episodes=True).items():
        price = (prices or {}).get(model)
        if price is not None:
            total += (p * price.prompt + c * price.completion) / 1e6
    return total


def render_run(store: RunStore, run_id: str, console: Console) -> None:
    """Print a run's header, its success table by group and its usage by role."""
    run = store.get_run(run_id)
    if run is None:
        raise LookupError(f"no run {run_id!r}")
    s = run_summary(store, run_id)
    cost = (run.summary or {}).get("cost_usd")
    console.print(
        f"[bold]{run.run_id}[/bold]  env={run.env}  agent={run.agent}  "
        f"status={store.run_status(run_id, run.status)}  "
        f"wall={s['wall_s']:.1f}s" + (f"  cost=${cost:.4f}" if cost is not None else "")
    )
    provenance = (run.config or {}).get("tasks_from")
    if provenance:
        console.print(f"tasks: {escape(str(provenance))}")
    groups = s["groups"]
    columns = _success_columns(groups.values())
    table = Table(*columns, box=box.SIMPLE_HEAD)
    for g, row in groups.items():
        cells = {
            "group": escape(g),
            "n": str(row["episodes"]),
            "success": f"{row['success_rate']:.1%}",
            "±se": f"{row['stderr']:.1%}",
            "err": str(row["errors"]),
            "reward": f"{row['mean_reward']:.3f}",
            "steps": f"{row['mean_steps']:.1f}",
            "calls": str(row["llm_calls"]),
            "tokens": tokens_label(row["tokens"], row.get("estimated_calls", 0) > 0),
            "$": f"{row['cost_usd']:.4f}",
            "wall s": f"{row['mean_wall_s']:.2f}",
        }
        table.add_row(*(cells[c] for c in columns))
    left_out = fit_table(console, table, keep=("group", "success", "n"), drop=_DROP_WHEN_NARROW)
    console.print(table)
    say_left_out(console, left_out)
    stops = stop_reasons(store.episodes(run_id))
    if stops:
        console.print(
            "stopped: " + ", ".join(f"{escape(k)} {v}" for k, v in stops.items()), highlight=False
        )
    env_line = env_summary_line(store, run.env, run_id)
    if env_line:
        console.print(env_line, highlight=False)
    answered = store.models_answered([run_id])
    if answered:
        console.print("models: " + escape("; ".join(models_answered_text(answered))))
    _render_usage(s["usage_by_role"], console)
    refused, note = store.refused_usage(run_id)
    if refused:
        console.print(
            f"{refused} call(s) reported token counts that cannot be counts (first: "
            f"{escape(note or '?')}); they count the local estimate instead",
            highlight=False,
        )


def model_text(model: str, served: str | None, endpoint: str | None) -> str:
    """One model as a run names it: the model requested, the one that answered when
    the server said it was another, and where: ``gpt-4o (served as qwen2.5-7b) at URL``."""
    text = model if not served or served == model else f"{model} (served as {served})"
    return f"{text} at {endpoint}" if endpoint else text


def models_answered_text(answered: Iterable[Mapping[str, Any]]) -> list[str]:
    """``role=model (served as ...) at URL`` per role of
    :meth:`~lorekit.eval.store_read.StoreReader.models_answered`, each role once
    (its most used model first, then any other it was given)."""
    by_role: dict[str, list[str]] = {}
    for a in answered:
        text = model_text(str(a["model"]), a.get("served"), a.get("endpoint"))
        shown = by_role.setdefault(str(a["role"]), [])
        if text not in shown:
            shown.append(text)
    return [f"{role}={' + '.join(texts)}" for role, texts in sorted(by_role.items())]


def env_summary(store: RunStore, env: str, run_id: str) -> dict[str, Any] | None:
    """The env's own summary of the run (Crafter's score; :mod:`lorekit.envs.summaries`),
    or None when the env has none or the run has nothing to summarize yet."""
    from lorekit.envs.summaries import run_summary as env_run_summary

    fn = env_run_summary(env)
    if fn is None:
        return None
    try:
        return dict(fn(store, run_id, []) or {}) or None
    except Exception:  # an env's summary is an extra; the run's own summary stands
        return None


def env_summary_line(store: RunStore, env: str, run_id: str) -> str | None:
    """One line of the env's own figures: ``Crafter score 12.34%, reward ± se ...``."""
    summary = env_summary(store, env, run_id)
    if summary is None:
        return None
    cells = ", ".join(
        f"{c} {v}" for c, v in zip(summary["columns"], summary["cells"], strict=False)
    )
    return escape(cells)


_COLUMNS = ("group", "n", "success", "±se", "err", "reward", "steps", "calls", "tokens", "$")
_DROP_WHEN_NARROW = ("wall s", "$", "calls", "tokens", "±se", "reward", "steps", "err")
"""The summary's columns that give way first when the terminal is too narrow."""


def _success_columns(groups: Iterable[Mapping[str, Any]]) -> list[str]:
    """The summary's columns, less those with nothing to say: no model calls
    (oracle, random) leaves calls and tokens empty, no prices leaves ``$``."""
    rows = list(groups)
    columns = [*_COLUMNS, "wall s"]
    if not any(r["llm_calls"] or r["tokens"] for r in rows):
        columns = [c for c in columns if c not in ("calls", "tokens")]
    if not any(r["cost_usd"] for r in rows):
        columns.remove("$")
    return columns


def stop_reasons(episodes: Iterable[EpisodeRecord]) -> dict[str, int]:
    """How many episodes stopped for each reason (``done``, ``step_cap``,
    ``budget``, ``no_expert``, ``error``, ...), most frequent first."""
    counts: dict[str, int] = defaultdict(int)
    for e in episodes:
        reason = e.info.get("stop_reason") if isinstance(e.info, dict) else None
        if not reason and e.status == "error":
            reason = "error"
        counts[str(reason or "unknown")] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _render_usage(usage: Mapping[str, Mapping[str, int]], console: Console) -> None:
    if not usage:
        console.print("no model calls recorded")
        return
    headers = ["role", "calls", "prompt tok", "completion tok", "cache hits", "errors"]
    if any(u.get("error_tokens", 0) for u in usage.values()):
        headers.append("failed-call tok")
    table = Table(*headers, box=box.SIMPLE_HEAD)
    for role, u in sorted(usage.items()):
        guessed = u.get("estimated_calls", 0) > 0
        cells = [
            escape(role),
            str(u.get("calls", 0)),
            tokens_label(u.get("prompt_tokens", 0), guessed),
            tokens_label(u.get("completion_tokens", 0), guessed),
            str(u.get("cache_hits", 0)),
            str(u.get("errors", 0)),
            tokens_label(u.get("error_tokens", 0), guessed and u.get("error_tokens", 0) > 0),
        ]
        table.add_row(*cells[: len(headers)])
    left_out = fit_table(
        console,
        table,
        keep=("role", "calls", "prompt tok", "completion tok"),
        drop=("failed-call tok", "cache hits", "errors"),
    )
    console.print(table)
    say_left_out(console, left_out)
    for note in usage_notes(usage.values()):
        console.print(note, highlight=False)


def usage_notes(rows: Iterable[Mapping[str, int]]) -> list[str]:
    """Footnotes under a token table: how many counts are estimates (a row
    whose counts include any shows ``~`` on its token numbers), and how many
    tokens were billed for calls that failed."""
    rows = list(rows)
    estimated = sum(int(r.get("estimated_calls", 0)) for r in rows)
    failed = sum(int(r.get("error_tokens", 0)) for r in rows)
    notes = []
    if estimated:
        notes.append(
            f"~ includes local estimates: {estimated} call(s) got no token counts from a "
            "server (one that sends none, or a scripted model)"
        )
    if failed:
        notes.append(f"tokens include {failed:,} billed for failed calls (see errors)")
    return notes
