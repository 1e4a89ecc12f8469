"""The figures and episodes an HTML report shows, as plain JSON data.

Everything here is read from the run store (opened read-only by the CLI), so
a report can be made while a run is still writing, and the same numbers feed
both the plots (drawn in Python, :mod:`.report_html_svg`) and the page's
episode browser (rendered in the browser from the embedded JSON). Success and
its standard error come from :func:`lorekit.eval.report.summarize`, an env's
own figures (Crafter's score) from the env (:mod:`lorekit.envs.summaries`): one
definition of each figure, whether printed by ``runs show`` or drawn here.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lorekit.agents.views import claiming
from lorekit.envs.summaries import RunSummary, run_summary
from lorekit.eval.report import model_text, summarize
from lorekit.eval.store_read import StoreReader
from lorekit.eval.store_schema import EpisodeRecord

#: A message or answer longer than this is cut in the page (the store keeps it whole).
TEXT_CHARS = 20_000
#: Columns of a laws PPO run's ``progress.csv`` drawn as learning curves.
RL_CURVES = ("crafter/score", "rollout/ep_rew_mean", "crafter/unlocked_mean")
_STEP_COLUMN = "time/total_timesteps"
_ERROR_TYPE = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")


@dataclass(slots=True)
class RunFigures:
    """What the report's plots and tables show for one run."""

    run_id: str
    env: str
    agent: str
    status: str
    created_at: float
    groups: dict[str, dict[str, Any]]
    per_episode: list[dict[str, Any]]
    roles: dict[str, dict[str, Any]]
    latencies: list[float]
    cache_hit_rate: float | None
    errors: dict[str, int]
    summary: RunSummary | None = None
    rl: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    #: the split its tasks came from (``lorekit run --split``); None when not recorded
    split: str | None = None
    #: the models that answered, most calls first (else the ones its config names)
    models: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.run_id} ({self.agent} on {self.env})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "label": self.label,
            "env": self.env,
            "agent": self.agent,
            "status": self.status,
            "split": self.split,
            "models": self.models,
            "created_at": self.created_at,
            "groups": self.groups,
            "per_episode": self.per_episode,
            "roles": self.roles,
            "cache_hit_rate": self.cache_hit_rate,
            "errors": self.errors,
            "summary": self.summary,
            "rl": self.rl,
            "notes": self.notes,
        }


def error_type(text: str) -> str:
    """A short class for an error text: ``RuntimeError: boom`` -> ``RuntimeError``,
    ``episode timed out after 30 s`` -> ``episode timed out``."""
    text = text.strip()
    m = _ERROR_TYPE.match(text)
    if m and (":" in text or text == m.group(1)):
        return m.group(1)
    if " timed out" in text.split(";")[0]:
        return text.split(" timed out")[0] + " timed out"
    return text.split(":")[0][:40] or "error"


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation; 0 for no values."""
    if not values:
        return 0.0
    xs = sorted(values)
    pos = (len(xs) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _prices(config: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """USD per million prompt/completion tokens by model, from a run's stored config."""
    roles = ((config or {}).get("run") or {}).get("roles") or {}
    out: dict[str, tuple[float, float]] = {}
    for settings in roles.values():
        if not isinstance(settings, Mapping):
            continue
        price = settings.get("price")
        if isinstance(price, Mapping) and settings.get("model"):
            out[str(settings["model"])] = (
                float(price.get("prompt") or 0.0),
                float(price.get("completion") or 0.0),
            )
    return out


def _roles(
    calls: list[dict[str, Any]], prices: Mapping[str, tuple[float, float]]
) -> dict[str, Any]:
    """Calls, tokens, cost, cache hits, errors and latency quantiles per role.

    Counted as :meth:`StoreReader.usage_by_role` counts them: a cache hit costs
    no tokens, a failed call costs what the server billed.
    """
    rows: dict[str, dict[str, Any]] = {}
    lat: dict[str, list[float]] = {}
    for c in calls:
        r = rows.setdefault(
            c["role"],
            dict.fromkeys(
                ("calls", "prompt_tokens", "completion_tokens", "cache_hits", "errors"), 0
            )
            | {"cost_usd": 0.0, "estimated": False},
        )
        spent = not c["cached"]
        p, k = (c["prompt_tokens"], c["completion_tokens"]) if spent else (0, 0)
        r["calls"] += 1
        r["prompt_tokens"] += p
        r["completion_tokens"] += k
        r["cache_hits"] += int(c["cached"])
        r["errors"] += int(c["error"] is not None)
        r["estimated"] = r["estimated"] or (bool(c.get("usage_estimated")) and spent)
        price = prices.get(c["model"])
        if price is not None:
            r["cost_usd"] += (p * price[0] + k * price[1]) / 1e6
        if not c["cached"]:
            lat.setdefault(c["role"], []).append(float(c["latency_s"]))
    for role, r in rows.items():
        xs = lat.get(role, [])
        r["latency_p50"] = percentile(xs, 0.5)
        r["latency_p90"] = percentile(xs, 0.9)
        r["latency_max"] = max(xs, default=0.0)
    return dict(sorted(rows.items()))


def run_figures(store: StoreReader, run_id: str, *, rl_dir: Path | None = None) -> RunFigures:
    """Every figure of one run (``LookupError`` for an unknown run)."""
    info = store.get_run(run_id)
    if info is None:
        raise LookupError(f"no run {run_id!r} in {store.path}")
    episodes = store.episodes(run_id)
    calls = store.llm_calls(run_id)
    per_key = Counter(c["episode_key"] for c in calls)
    errors: Counter[str] = Counter()
    for e in episodes:
        if e.error:
            errors[f"episode: {error_type(e.error)}"] += 1
    for c in calls:
        if c["error"]:
            errors[f"model call: {error_type(c['error'])}"] += 1
    hits = sum(1 for c in calls if c["cached"])
    figures = RunFigures(
        run_id=run_id,
        env=info.env,
        agent=info.agent,
        status=store.run_status(run_id, info.status),
        created_at=info.created_at,
        groups={g: s.to_dict() for g, s in summarize(episodes).items()},
        per_episode=[
            {
                "key": e.episode_key,
                "index": e.index,
                "group": e.task_group,
                "status": e.status,
                "steps": e.steps,
                "calls": per_key.get(e.episode_key, 0),
            }
            for e in episodes
        ],
        roles=_roles(calls, _prices(info.config)),
        latencies=[float(c["latency_s"]) for c in calls if not c["cached"]],
        cache_hit_rate=hits / len(calls) if calls else None,
        errors=dict(errors.most_common()),
        split=run_split(info.config),
        models=_models(calls),
    )
    summary = run_summary(info.env)
    if summary is not None:
        figures.summary = summary(store, run_id, figures.notes)
    if info.agent.startswith("ppo:"):
        out = rl_dir or Path(str((info.meta or {}).get("out") or ""))
        figures.rl = rl_curves(out, figures.notes)
    return figures


def run_split(config: Mapping[str, Any] | None) -> str | None:
    """The split a run's tasks came from: ``lorekit run`` records it in the config
    (``split``); runs made in code may pass it to the env (``env_kwargs.split``)."""
    config = config or {}
    kwargs = config.get("env_kwargs")
    for value in (
        config.get("split"),
        kwargs.get("split") if isinstance(kwargs, Mapping) else None,
    ):
        if isinstance(value, str) and value:
            return value
    return None


def _models(calls: Sequence[Mapping[str, Any]]) -> list[str]:
    """The models that answered the run's calls, most used first, each with the model the
    server answered as (when it said another) and its endpoint; none for a run whose
    agent called no model (the config's default role, ``echo`` when none was set, is
    not a model the run used)."""
    used: Counter[str] = Counter()
    for c in calls:
        if not c.get("model"):
            continue
        meta = c.get("meta")
        meta = meta if isinstance(meta, Mapping) else {}
        served, endpoint = meta.get("served_model"), meta.get("endpoint")
        used[
            model_text(
                str(c["model"]),
                served if isinstance(served, str) else None,
                endpoint if isinstance(endpoint, str) else None,
            )
        ] += 1
    return [m for m, _ in used.most_common()]


def comparison_warnings(runs: Sequence[RunFigures]) -> list[str]:
    """What makes the runs on one page not comparable figure by figure: different splits
    (other tasks, often of another difficulty) or different envs."""
    out: list[str] = []
    if len(runs) < 2:
        return out
    splits = {r.run_id: r.split for r in runs}
    known = {s for s in splits.values() if s is not None}
    if len(known) > 1:
        named = ", ".join(f"{rid}: {s or 'not recorded'}" for rid, s in splits.items())
        out.append(
            f"These runs played different splits ({named}): their success rates come from "
            "different tasks and are not directly comparable."
        )
    elif known and None in splits.values():
        unknown = ", ".join(rid for rid, s in splits.items() if s is None)
        out.append(f"The split of {unknown} is not recorded; the others played {known.pop()}.")
    envs = list(dict.fromkeys(r.env for r in runs))
    if len(envs) > 1:
        out.append(f"These runs played different envs ({', '.join(envs)}).")
    return out


def rl_curves(out_dir: Path, notes: list[str] | None = None) -> dict[str, Any] | None:
    """Learning curves of a laws PPO run from ``OUT/<reward>/seed-K/progress.csv``:
    ``{"columns": {column: {seed: [[steps, value], ...]}}}``; None when no log is found."""
    seeds = sorted(out_dir.glob("seed-*/progress.csv")) if str(out_dir) else []
    if not seeds:
        if notes is not None:
            notes.append(f"learning curves: no seed-*/progress.csv under {out_dir or '(unknown)'}")
        return None
    columns: dict[str, dict[str, list[list[float]]]] = {c: {} for c in RL_CURVES}
    for path in seeds:
        seed = path.parent.name
        with path.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                x = _number(row.get(_STEP_COLUMN))
                if x is None:
                    continue
                for c in RL_CURVES:
                    y = _number(row.get(c))
                    if y is not None:
                        columns[c].setdefault(seed, []).append([x, y])
    return {"out": str(out_dir), "columns": {c: v for c, v in columns.items() if v}}


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def _cut(text: Any, limit: int = TEXT_CHARS) -> Any:
    if isinstance(text, str) and len(text) > limit:
        return text[:limit] + f"\n… [{len(text) - limit:,} more characters in the run store]"
    return text


def episode_data(store: StoreReader, e: EpisodeRecord) -> dict[str, Any]:
    """One episode for the page: header, steps, every model call, the agent's notes
    and the views that draw them (by name, in order; see :mod:`lorekit.agents.views`)."""
    steps = store.steps(e.run_id, e.episode_key)
    calls = store.llm_calls(e.run_id, e.episode_key)
    info = e.info if isinstance(e.info, dict) else {}
    notes = info.get("notes") or {}
    return {
        "run_id": e.run_id,
        "key": e.episode_key,
        "index": e.index,
        "task_id": e.task_id,
        "group": e.task_group,
        "seed": e.seed,
        "status": e.status,
        "success": e.success,
        "reward": e.reward,
        "wall_s": e.wall_s,
        "error": e.error,
        "stop_reason": info.get("stop_reason"),
        "initial_observation": _cut(info.get("initial_observation")),
        "steps": [
            {
                "action": _cut(s.action),
                "observation": _cut(s.observation),
                "reward": s.reward,
                "done": s.done,
                "valid": (s.info or {}).get("valid"),
            }
            for s in steps
        ],
        "calls": [
            {
                "role": c["role"],
                "model": c["model"],
                "messages": [
                    {"role": str(m.get("role")), "content": _cut(str(m.get("content")))}
                    for m in (c["messages"] or [])
                    if isinstance(m, Mapping)
                ],
                "answer": _cut(c["answer"]),
                "prompt_tokens": c["prompt_tokens"],
                "completion_tokens": c["completion_tokens"],
                "latency_s": c["latency_s"],
                "cached": c["cached"],
                "estimated": c["usage_estimated"],
                "error": c["error"],
                "meta": c["meta"],
            }
            for c in calls
        ],
        "notes": notes,
        "views": [view.name for view in claiming(notes)] if isinstance(notes, Mapping) else [],
    }
