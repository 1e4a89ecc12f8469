"""The report's table helpers and its first section: which runs the page compares.

Each run gets one colour, by its place on the page, and keeps it in every
chart, the runs table and the legends: a chart that leaves a run out (no model
calls, not a Crafter run) must not shift the others' colours. The table names
each run's split and models, and a warning says when the runs are not
comparable figure by figure (different splits or envs).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from html import escape
from typing import Any

from lorekit.eval.report_html_data import RunFigures, comparison_warnings
from lorekit.eval.report_html_svg import colour


def table(head: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "") -> str:
    """An HTML table; every cell escaped (run ids, groups and roles are user data)."""
    th = "".join(f"<th>{escape(str(h))}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def section(ident: str, title: str, *parts: str) -> str:
    return f'<section id="{ident}"><h2>{escape(title)}</h2>{"".join(parts)}</section>'


def pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1%}"


def run_colours(runs: Sequence[RunFigures]) -> dict[str, str]:
    """Each run's colour in every chart: by its place among all the page's runs."""
    return {r.run_id: colour(i) for i, r in enumerate(runs)}


def _models(models: Sequence[str]) -> str:
    if not models:
        return "-"
    shown = ", ".join(models[:3])
    return shown + (f" +{len(models) - 3}" if len(models) > 3 else "")


def runs_section(runs: Sequence[RunFigures]) -> str:
    colours = run_colours(runs)
    head = ["", "run", "env", "split", "agent", "model", "status", "created", "episodes"]
    head += ["success ± se", "errors", "steps/ep", "model calls", "cache hits"]
    rows = []
    for r in runs:
        a = r.groups["all"]
        cells = (
            r.run_id,
            r.env,
            r.split or "-",
            r.agent,
            _models(r.models),
            r.status,
            time.strftime("%Y-%m-%d %H:%M", time.localtime(r.created_at)),
            a["episodes"],
            f"{a['success_rate']:.1%} ± {a['stderr']:.1%}",
            a["errors"],
            f"{a['mean_steps']:.1f}",
            sum(p["calls"] for p in r.per_episode),
            pct(r.cache_hit_rate),
        )
        swatch = f'<td><i class="swatch" style="background:{colours[r.run_id]}"></i></td>'
        tds = "".join(f"<td>{escape(str(c))}</td>" for c in cells)
        rows.append(f"<tr>{swatch}{tds}</tr>")
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    runs_table = (
        f'<table class="runs"><thead><tr>{th}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )
    warnings = "".join(f'<p class="warning">{escape(w)}</p>' for w in comparison_warnings(runs))
    notes = "".join(f'<p class="note">{escape(n)}</p>' for r in runs for n in r.notes)
    return section("runs", "Runs", warnings, runs_table, notes)
