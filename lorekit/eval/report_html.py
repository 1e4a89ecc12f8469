"""``lorekit report``: one self-contained HTML file comparing runs and holding their episodes.

The page has two halves. The figures (success per task group with standard
errors, steps and model calls per episode, tokens and cost per role, latency,
cache hits, errors, an env's own figures such as Crafter's score, PPO learning
curves) are drawn here, in Python, as inline SVG and HTML tables. The episodes
travel as JSON inside the page and a small inlined script (``report_html.js``)
lets a reader page through them: steps, every model call, and the agent's own
record, drawn by the scripts of the agents' views (:mod:`lorekit.agents.views`),
inlined after it.

Safety: prompts and answers are model output and user data. Tables and SVG
escape every text; the JSON is embedded so that no ``<`` survives in it (it
cannot close its ``<script>`` element); the script only ever sets
``textContent``. On top of that the page's Content-Security-Policy allows no
network access and runs only the one script whose hash it names, so even a
mistake in escaping could not run injected code.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from collections.abc import Mapping, Sequence
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any

from lorekit.agents.views import load_views, report_script_text
from lorekit.envs.summaries import RunSummary
from lorekit.eval.report_html_data import RunFigures, episode_data, run_figures
from lorekit.eval.report_html_reproduce import reproduce_sections
from lorekit.eval.report_html_runs import run_colours, runs_section, section, table
from lorekit.eval.report_html_svg import Series, bar_chart, histogram, xy_chart
from lorekit.eval.store_read import StoreReader
from lorekit.textsafe import storable

_SLOT = re.compile(r"\{\{(\w+)\}\}")
#: Line styles of a run's seeds in the learning curves (the colour is the run's).
DASHES = ("", "6 3", "2 3", "8 3 2 3")


def _asset(name: str) -> str:
    return files("lorekit.eval").joinpath(name).read_text(encoding="utf-8")


def script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` left in it
    (they become ``\\u003c`` etc., which JSON.parse reads back unchanged)."""
    text = json.dumps(_finite(data), ensure_ascii=False, allow_nan=False, default=str)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(ch, esc)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def script_hash(js: str) -> str:
    """The CSP source naming exactly this inline script."""
    digest = hashlib.sha256(js.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def content_policy(js: str) -> str:
    """No network, no plugins, no other script than ours; inline styles and SVG allowed."""
    return (
        f"default-src 'none'; script-src {script_hash(js)}; style-src 'unsafe-inline'; "
        "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'"
    )


def page_script() -> str:
    """The page's one script: the generic browser, then each view's renderer, then the start.

    One inline script, so the page's policy names one hash and the views'
    ``registerView`` calls all run before the first episode is drawn."""
    parts = [_asset("report_html.js")]
    parts += [report_script_text(view) for view in load_views()]
    parts.append("LoreKitReport.start();\n")
    return "\n".join(parts)


def page_policy() -> str:
    """The Content-Security-Policy of every report page (the viewer also sends it as a header)."""
    return content_policy(page_script())


def _tok(n: int, estimated: bool) -> str:
    return f"{'~' if estimated else ''}{n:,}"


def _success_section(runs: Sequence[RunFigures]) -> str:
    groups: list[str] = []
    for r in runs:
        groups += [g for g in r.groups if g not in groups]
    colours = run_colours(runs)
    series = [
        Series(
            r.run_id,
            [r.groups.get(g, {}).get("success_rate", 0.0) for g in groups],
            [r.groups.get(g, {}).get("stderr", 0.0) for g in groups],
            colour=colours[r.run_id],
        )
        for r in runs
    ]
    chart = bar_chart(
        "success",
        "Success rate per task group (whiskers: ± one standard error)",
        groups,
        series,
        percent=True,
        y_label="success",
    )
    rows = [(g, *(_cell(r, g) for r in runs)) for g in groups]
    cells = table(("group", *(r.run_id for r in runs)), rows, "success")
    return section("success", "Success by task group", chart, cells)


def _cell(r: RunFigures, g: str) -> str:
    s = r.groups.get(g)
    if not s:
        return "-"
    return f"{s['success_rate']:.1%} ± {s['stderr']:.1%} (n={s['episodes']})"


def _effort_section(runs: Sequence[RunFigures]) -> str:
    charts = []
    colours = run_colours(runs)
    for what, label in (("steps", "environment steps"), ("calls", "model calls")):
        series = [
            Series(
                r.run_id,
                points=[(p["index"], p[what]) for p in r.per_episode],
                colour=colours[r.run_id],
            )
            for r in runs
        ]
        charts.append(
            xy_chart(
                f"{what}-per-episode",
                f"{label.capitalize()} per episode",
                series,
                x_label="episode index",
                y_label=label,
                lines=False,
            )
        )
    return section("effort", "Steps and model calls per episode", *charts)


def _usage_section(runs: Sequence[RunFigures]) -> str:
    roles: list[str] = []
    for r in runs:
        roles += [k for k in r.roles if k not in roles]
    if not roles:
        return section("usage", "Tokens and cost per role", '<p class="note">no model calls</p>')
    series = [
        Series(
            r.run_id,
            [
                float(r.roles.get(k, {}).get("prompt_tokens", 0))
                + r.roles.get(k, {}).get("completion_tokens", 0)
                for k in roles
            ],
            colour=run_colours(runs)[r.run_id],
        )
        for r in runs
    ]
    chart = bar_chart(
        "tokens", "Tokens per role (cache hits cost none)", roles, series, y_label="tokens"
    )
    rows = []
    estimated = False
    for r in runs:
        for k, u in r.roles.items():
            estimated = estimated or u["estimated"]
            rows.append(
                (
                    r.run_id,
                    k,
                    u["calls"],
                    _tok(u["prompt_tokens"], u["estimated"]),
                    _tok(u["completion_tokens"], u["estimated"]),
                    f"${u['cost_usd']:.4f}",
                    f"{u['cache_hits']} ({u['cache_hits'] / u['calls']:.0%})",
                    u["errors"],
                    f"{u['latency_p50']:.3f}",
                    f"{u['latency_p90']:.3f}",
                    f"{u['latency_max']:.3f}",
                )
            )
    head = ["run", "role", "calls", "prompt tok", "completion tok", "cost", "cache hits"]
    head += ["errors", "p50 s", "p90 s", "max s"]
    note = (
        '<p class="note">~ marks token counts estimated locally (no server usage; scripted '
        "models). Cost uses the prices in each run's config; none given, none shown.</p>"
        if estimated
        else ""
    )
    return section(
        "usage", "Tokens, cost and cache hits per role", chart, table(head, rows, "usage"), note
    )


def _latency_section(runs: Sequence[RunFigures]) -> str:
    colours = run_colours(runs)  # a run's own colour, also when others made no calls
    series = [Series(r.run_id, r.latencies, colour=colours[r.run_id]) for r in runs if r.latencies]
    if not series:
        return ""
    chart = histogram(
        "latency",
        "Latency of model calls (cache hits left out; last bin holds the slowest 1%)",
        series,
        x_label="latency per call (bin centres)",
    )
    return section("latency", "Latency of model calls", chart)


def _errors_section(runs: Sequence[RunFigures]) -> str:
    kinds: list[str] = []
    for r in runs:
        kinds += [k for k in r.errors if k not in kinds]
    if not kinds:
        return section("errors", "Errors by type", '<p class="note">no errors recorded</p>')
    rows = [(k, *(r.errors.get(k, 0) for r in runs)) for k in kinds]
    return section("errors", "Errors by type", table(("type", *(r.run_id for r in runs)), rows))


def _summary_sections(runs: Sequence[RunFigures]) -> str:
    """One section per kind of env summary (:mod:`lorekit.envs.summaries`): a row
    per run and a bar chart of the rates, all runs of that kind side by side,
    each run in its own page colour."""
    kinds: dict[str, list[tuple[str, RunSummary]]] = {}
    for r in runs:
        if r.summary:
            kinds.setdefault(r.summary["section"], []).append((r.run_id, r.summary))
    colours = run_colours(runs)
    out = []
    for ident, group in kinds.items():
        first = group[0][1]
        names = sorted({a for _, s in group for a in s["rates"]})
        series = [
            Series(rid, [s["rates"].get(a, 0.0) for a in names], colour=colours[rid])
            for rid, s in group
        ]
        chart = bar_chart(ident, first["chart"], names, series, percent=True)
        rows = table(("run", *first["columns"]), [(rid, *s["cells"]) for rid, s in group])
        out.append(section(ident, first["title"], rows, chart))
    return "".join(out)


def _rl_section(runs: Sequence[RunFigures]) -> str:
    rl = [r for r in runs if r.rl]
    if not rl:
        return ""
    columns: list[str] = []
    for r in rl:
        columns += [c for c in (r.rl or {})["columns"] if c not in columns]
    charts = []
    for c in columns:
        series = [  # a run's colour; its seeds told apart by dashes
            Series(
                f"{r.run_id} {seed}",
                points=[(x, y) for x, y in pts],
                colour=run_colours(runs)[r.run_id],
                dash=DASHES[k % len(DASHES)],
            )
            for r in rl
            for k, (seed, pts) in enumerate((r.rl or {})["columns"].get(c, {}).items())
        ]
        charts.append(
            xy_chart(
                f"rl-{c}",
                f"Learning curve: {c}",
                series,
                x_label="environment steps",
                y_label=c,
                dots=False,
            )
        )
    return section("rl", "Learning curves (PPO)", *charts)


def intern_messages(episodes: list[dict[str, Any]]) -> list[str]:
    """Replace each prompt message's text by its index in the returned list.

    An agent sends the same system prompt and manual with every call, so most
    of a page's prompt text is repeats: keeping each text once made a
    TextCraft report about three times smaller (1.1 MB to 0.34 MB).
    """
    texts: list[str] = []
    index: dict[str, int] = {}
    for episode in episodes:
        for call in episode["calls"]:
            for message in call["messages"]:
                text = message.pop("content")
                if text not in index:
                    index[text] = len(texts)
                    texts.append(text)
                message["text"] = index[text]
    return texts


def build_report(
    store: StoreReader,
    run_ids: Sequence[str],
    *,
    max_episodes: int | None = None,
    rl_dir: Path | None = None,
    title: str = "LoreKit report",
    reproductions: Sequence[Mapping[str, Any]] = (),
    live: Mapping[str, Any] | None = None,
) -> str:
    """The whole page as one string. ``max_episodes`` caps the episodes embedded per run
    (the figures always use all of them). ``reproductions`` are saved ``reproduce run``
    comparisons, drawn first (:mod:`lorekit.eval.report_html_reproduce`). ``live``
    (``{"version": token, "every_s": seconds}``, from ``lorekit view``) makes the page
    poll ``version`` and reload itself when it changes. ``LookupError`` names an unknown
    run."""
    runs = [run_figures(store, rid, rl_dir=rl_dir) for rid in run_ids]
    episodes = []
    for rid in run_ids:
        eps = store.episodes(rid)
        for e in eps[:max_episodes] if max_episodes is not None else eps:
            episodes.append(episode_data(store, e))
    body = "".join(
        (
            reproduce_sections(reproductions),
            runs_section(runs),
            _success_section(runs),
            _effort_section(runs),
            _usage_section(runs),
            _latency_section(runs),
            _errors_section(runs),
            _summary_sections(runs),
            _rl_section(runs),
        )
    )
    data = {
        "runs": [{"run_id": r.run_id, "label": r.label} for r in runs],
        "episodes": episodes,
        "texts": intern_messages(episodes),
        "live": dict(live) if live else None,
    }
    return render_page(title, body, data, subtitle=f"{len(runs)} run(s) from {store.path}")


def render_page(title: str, body: str, data: Any, *, subtitle: str = "") -> str:
    """Fill the page template; one pass, so inserted text is never scanned for slots."""
    js = page_script()
    parts = {
        "title": escape(title),
        "subtitle": escape(subtitle),
        "generated": escape(time.strftime("%Y-%m-%d %H:%M:%S")),
        "csp": escape(content_policy(js), quote=False).replace('"', "&quot;"),
        "css": _asset("report_html.css"),
        "body": body,
        "data": script_json(data),
        "js": js,
    }
    page = _SLOT.sub(lambda m: parts[m.group(1)], _asset("report_html_page.html"))
    # A lone surrogate (a title typed as bytes that are not UTF-8, a saved comparison's
    # "\ud800") cannot be written as UTF-8: it shows as U+FFFD instead of failing the page.
    return storable(page)
