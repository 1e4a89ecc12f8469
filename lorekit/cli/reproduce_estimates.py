"""One estimate per experiment, shown the same way by ``reproduce list``, the dry run,
``--max-cost`` and the docs.

The dry run measures (it plays each row three ways: :mod:`lorekit.eval.cost`);
``reproduce list`` cannot play every experiment each time it lists them, so it
reads what the dry run measured for the shipped experiments, saved in
``reproduce_estimates.yaml`` beside this module (``python
benchmarks/reproduce_cost.py --write`` measures and saves them; a test measures
again and compares). Each saved row carries a fingerprint of what it was
measured with (env, options, split, agent, row options, the split's size): a
row whose file changed since is shown as not measured, never with a stale figure.
:func:`range_text` is the one wording of an estimate.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.eval.cost import Tokens
from lorekit.eval.cost_range import ENDS, EpisodeRange

SAVED = Path(__file__).with_name("reproduce_estimates.yaml")


def fingerprint(exp: Any, row: Any, planned: int) -> str:
    """What a row's estimate depends on in its experiment file, hashed."""
    build = next((b for b in exp.builds if b.id == row.build), None)
    key = {
        "env": exp.env,
        "env_options": dict(exp.env_options),
        "split": exp.split,
        "agent": row.agent,
        "options": dict(row.options),
        "build": None if build is None else [build.variant, build.split, build.per_type],
        "planned": planned,
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]


@dataclass(slots=True)
class Estimate:
    """An experiment's measured rows (per episode) and builds (whole)."""

    planned: int
    rows: dict[str, EpisodeRange] = field(default_factory=dict)
    builds: dict[str, dict[str, Tokens]] = field(default_factory=dict)
    """Build id -> per role, what the whole build costs (scripted models)."""
    prints: dict[str, str] = field(default_factory=dict)
    """Row id (or ``build:ID``) -> its fingerprint."""
    missing: dict[str, str] = field(default_factory=dict)
    """Row id -> why the dry run could not measure it (no scripted models for its agent,
    a file it reads that is not there, a team that plays its own loop)."""


def _tokens(value: Any) -> Tokens:
    calls, prompt, completion, stable = (float(x) for x in value)
    return Tokens(calls, prompt, completion, stable)


def _plain(roles: Mapping[str, Tokens]) -> dict[str, list[float]]:
    return {
        r: [round(t.calls, 3), round(t.prompt, 1), round(t.completion, 1), round(t.stable, 1)]
        for r, t in sorted(roles.items())
    }


def load_saved(path: Path = SAVED) -> dict[str, Estimate]:
    """Experiment id -> its saved estimate (an empty mapping when none are saved)."""
    if not path.is_file():
        return {}
    data = _parsed(path)
    out: dict[str, Estimate] = {}
    for exp_id, entry in (data.get("experiments") or {}).items():
        est = Estimate(int(entry["planned"]))
        for row_id, row in (entry.get("rows") or {}).items():
            span = EpisodeRange(basis=dict(row.get("basis") or {}))
            span.context.update({k: float(v) for k, v in (row.get("context") or {}).items()})
            for end in ENDS:
                span.end(end).update({r: _tokens(v) for r, v in (row.get(end) or {}).items()})
            est.rows[str(row_id)] = span
            est.prints[str(row_id)] = str(row["fingerprint"])
        for row_id, row in (entry.get("not_measured") or {}).items():
            est.missing[str(row_id)] = str(row["reason"])
            est.prints[str(row_id)] = str(row["fingerprint"])
        for build_id, build in (entry.get("builds") or {}).items():
            est.builds[str(build_id)] = {
                r: _tokens(v) for r, v in (build.get("roles") or {}).items()
            }
            est.prints[f"build:{build_id}"] = str(build["fingerprint"])
        out[str(exp_id)] = est
    return out


_PARSED: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}


def _parsed(path: Path) -> dict[str, Any]:
    """The saved file parsed, once per version of it: ``reproduce list`` reads it for every
    experiment, and parsing its thousands of lines each time took most of the command."""
    stat = path.stat()
    key = (stat.st_mtime_ns, stat.st_size)
    cached = _PARSED.get(path)
    if cached is None or cached[0] != key:
        cached = (key, yamlio.safe_load(path.read_text(encoding="utf-8")) or {})
        _PARSED[path] = cached
    return cached[1]


def save(estimates: Mapping[str, Estimate], path: Path = SAVED) -> None:
    """Write the estimates (sorted, rounded) with the header that says where they come from."""
    import yaml

    data: dict[str, Any] = {"experiments": {}}
    for exp_id, est in sorted(estimates.items()):
        rows = {
            row_id: {
                "fingerprint": est.prints[row_id],
                "basis": dict(sorted(span.basis.items())),
                "context": {k: round(v, 1) for k, v in sorted(span.context.items())},
                **{end: _plain(span.end(end)) for end in ENDS},
            }
            for row_id, span in est.rows.items()
        }
        builds = {
            b: {"fingerprint": est.prints[f"build:{b}"], "roles": _plain(roles)}
            for b, roles in est.builds.items()
        }
        missing = {
            row_id: {"fingerprint": est.prints[row_id], "reason": reason}
            for row_id, reason in sorted(est.missing.items())
        }
        data["experiments"][exp_id] = {"planned": est.planned, "rows": rows, "builds": builds}
        if missing:
            data["experiments"][exp_id]["not_measured"] = missing
    header = (
        "# What `reproduce run EXPERIMENT --dry-run` measured for each shipped experiment,\n"
        "# read by `reproduce list` and --max-cost (lorekit/cli/reproduce_estimates.py).\n"
        "# Made by `python benchmarks/reproduce_cost.py --write`; do not edit by hand.\n"
        "# Per row and end (low, central, high), per role and episode: calls, prompt,\n"
        "# completion and stable-prefix tokens; per build, the whole build's.\n"
    )
    path.write_text(header + yaml.safe_dump(data, sort_keys=False, width=100), encoding="utf-8")


def saved_for(exp: Any, rows: Sequence[Any], planned: int) -> Estimate | None:
    """The saved estimate of ``rows`` when every one (and every build they need) was
    measured with what the experiment file says now; None otherwise."""
    est = load_saved().get(exp.id)
    if est is None or est.planned != planned:
        return None
    for row in rows:
        known = row.id in est.rows or row.id in est.missing
        if est.prints.get(row.id) != fingerprint(exp, row, planned) or not known:
            return None
        if row.id in est.rows and row.build is not None and f"build:{row.build}" not in est.prints:
            return None
    return est


def short_tokens(value: float) -> str:
    """``12.3M``, ``45k``, ``900``: token counts as people read them."""
    if value >= 1e6:
        return f"{value / 1e6:,.1f}M"
    if value >= 1e3:
        return f"{value / 1e3:,.0f}k"
    return f"{value:,.0f}"


def range_text(tokens: Mapping[str, float], usd: Mapping[str, float | None]) -> str:
    """The one wording of an estimate: ``~12.3M tokens (4.1M to 98.0M), ~$18.50 ($6.10 to
    $147.00)``: the central figure, then the perfect model's and the wandering one's."""
    text = (
        f"~{short_tokens(tokens['central'])} tokens ({short_tokens(tokens['low'])} to "
        f"{short_tokens(tokens['high'])})"
    )
    if all(usd.get(end) is not None for end in ENDS):
        low, mid, high = (float(usd[end] or 0.0) for end in ("low", "central", "high"))
        text += f", ~${mid:,.2f} (${low:,.2f} to ${high:,.2f})"
    return text
