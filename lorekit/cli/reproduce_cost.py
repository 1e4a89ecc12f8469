"""``lorekit reproduce``'s cost side: the measured dry run, dated prices, ``--max-cost``.

Kept apart from :mod:`lorekit.cli.reproduce` (which plays and compares) so
that the money is in one place: the price table (:mod:`lorekit.eval.prices`,
dated, overridable with ``--prices``), the dry run's scripted measure
(:mod:`lorekit.eval.cost` with :mod:`lorekit.agents.shape_models`), and the
guard that stops a run once the spend recorded in the store reaches
``--max-cost`` (exit code 3; the run resumes with the same ``--run-id`` and
a higher limit).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lorekit.cli.console import console, err_console
from lorekit.cli.errors import UserError
from lorekit.cli.reproduce_limit import EXIT_COST_LIMIT, CostLimitReached  # noqa: F401

DRY_EPISODES = 2
"""Episodes the dry run plays per row at least (one per task group where a split has
2 to 8 groups)."""
MAX_DRY_ROWS = 20
"""Rows a dry run measures at most (each plays episodes); an experiment with more
rows says which were left out, and ``--rows`` picks the ones to measure."""


def load_table(prices: str | None) -> Any:
    """The dated default table with the user's ``--prices`` file over it."""
    from lorekit.eval.prices import PriceError, price_table

    try:
        return price_table(prices)
    except PriceError as exc:
        raise UserError(f"--prices: {exc}") from None


def paper_model(row: Any) -> Callable[[str], str]:
    """The model the paper used for a role of ``row`` (its only or first one otherwise)."""
    named: Mapping[str, str] = row.paper_models

    def pick(role: str) -> str:
        if role in named:
            return named[role]
        if "default" in named:
            return named["default"]
        return next(iter(named.values()), "unknown")

    return pick


def configured_model(cfg: Any) -> Callable[[str], str]:
    """The model the user's ``--model``/``--role``/``--config`` gives a role."""

    def pick(role: str) -> str:
        settings = cfg.roles.get(role) or cfg.roles[cfg.default_role]
        return str(settings.model)

    return pick


def measure_experiment(exp: Any, rows: Sequence[Any], planned: int, split: str) -> Any:
    """Measure ``rows`` (and the builds they test with) as the dry run does, into a
    throw-away store: :class:`~lorekit.cli.reproduce_estimates.Estimate`."""
    import tempfile

    from lorekit.agents import agent_parameters, make_agent
    from lorekit.agents.shape_models import (
        acting_roles,
        idle_roles,
        paper_ratio,
        published_shape,
        shape_roles,
    )
    from lorekit.cli.reproduce_estimates import Estimate, fingerprint
    from lorekit.eval.cost import measure_rows
    from lorekit.eval.cost_range import episode_range

    est = Estimate(planned)
    with tempfile.TemporaryDirectory(prefix="lorekit-dry-") as tmp:
        store = Path(tmp) / "dry.sqlite3"
        try:
            built = _measure_builds(exp, rows, store, est)
        except LookupError as exc:  # no scripted models for a build: its rows go unmeasured
            for row in rows:
                if row.build:
                    est.missing[row.id] = f"its build: {exc}"
                    est.prints[row.id] = fingerprint(exp, row, planned)
            built, rows = {}, [r for r in rows if not r.build]

        def options(row: Any) -> dict[str, Any]:
            out = {**row.options, **built.get(row.build, {})}
            if "store" in agent_parameters(row.agent):
                out["store"] = str(store)
            return out

        try:
            expert = make_agent("oracle")
        except (LookupError, TypeError, ValueError):
            expert = None
        measured = measure_rows(
            exp.env, exp.env_options, split, rows, shape_roles, planned=planned,
            episodes=DRY_EPISODES, store_path=store, idle_for=idle_roles,
            acting_for=acting_roles,
            expert=expert if any(acting_roles(r.agent) for r in rows) and _has_expert(exp)
            else None,
            options_for=options,
        )  # fmt: skip
    for row, m in zip(rows, measured, strict=True):
        est.prints[row.id] = fingerprint(exp, row, planned)
        if m.missing is not None:
            est.missing[row.id] = m.missing
            continue
        published = published_shape(exp.env, row.agent, row.options)
        est.rows[row.id] = episode_range(m, paper_ratio=paper_ratio(), published=published)
    return est


def dry_estimate(exp: Any, rows: Sequence[Any], planned: int | None, split: str) -> Any:
    """What the dry run measures of ``rows`` for ``planned`` episodes each (default the
    experiment's sample, else its split's size): :func:`measure_experiment`, or, when the
    split's games are not installed here (ALFWorld's ``valid_seen`` comes only with the
    full download), an estimate that leaves every row out and says why."""
    from lorekit.cli.reproduce_estimates import Estimate, fingerprint

    try:
        size = planned or len(_split_tasks(exp, split))
    except ValueError as exc:  # the split is unknown to the games installed here
        size = planned or _sampled(exp)
        est = Estimate(size)
        for row in rows:
            est.missing[row.id] = f"its games are not here: {exc}"
            est.prints[row.id] = fingerprint(exp, row, size)
        return est
    return measure_experiment(exp, rows, size, split)


def _sampled(exp: Any) -> int:
    """Episodes per row of an experiment that samples its split per task group (0: none)."""
    sample = getattr(exp, "select", None)
    return int(sample.per_group * len(sample.order)) if sample is not None else 0


def _has_expert(exp: Any) -> bool:
    from lorekit.envs import make

    env = make(exp.env, **dict(exp.env_options))
    try:
        return callable(getattr(env, "expert_action", None))
    finally:
        env.close()


def _measure_builds(exp: Any, rows: Sequence[Any], store: Path, est: Any) -> dict[str, Any]:
    """Play the builds ``rows`` need with their scripted models (``--simulate``'s, on its
    shorter plan) into ``store``; save per build what the full-size build would cost
    (its episodes' mean times the build's size, plus the calls outside episodes: the
    manual's formulation). Returns build id -> the options its rows test with."""
    from lorekit.cli.options import HarnessOptions, ModelChoice
    from lorekit.cli.reproduce_build import needed_builds, run_builds
    from lorekit.cli.reproduce_estimates import fingerprint
    from lorekit.eval.cost import Tokens, meter
    from lorekit.eval.store import RunStore

    needed = [r for r in rows if r.build]
    if not needed:
        return {}
    harness = HarnessOptions(store=str(store), progress=False, concurrency=1)
    built = run_builds(
        exp, needed, models=ModelChoice(), harness=harness, env_opt=(), prefix="dry",
        simulate=True,
    )  # fmt: skip
    with RunStore(store) as db:
        for build in exp.builds:
            if build.id not in built:
                continue
            rid = built[build.id].run_id
            episodes = db.episodes(rid)
            metered = meter(db.llm_calls(rid))
            run = db.get_run(rid)
            types = (run.config.get("task_types") if run is not None else None) or len(
                {e.task_group for e in episodes}
            )  # the whole set's, where the build records it (played shorter)
            size = build.per_type * max(1, int(types))
            roles: dict[str, Tokens] = {}
            for key, per_role in metered.items():
                factor = size / max(1, len(episodes)) if key != "None" else 1.0
                for role, tokens in per_role.items():
                    roles.setdefault(role, Tokens()).add(tokens.scaled(factor))
            est.builds[build.id] = roles
            # a row that tests with it, or with a build that starts from it
            row = next(r for r in needed if build.id in needed_builds(exp, [r]))
            est.prints[f"build:{build.id}"] = fingerprint(exp, row, est.planned)
    return {b: dict(v.options) for b, v in built.items()}


def priced(
    exp: Any, rows: Sequence[Any], est: Any, episodes: int, table: Any, cfg: Any | None
) -> tuple[list[tuple[Any, Any]], dict[str, Any], Any]:
    """Each measured row's :class:`~lorekit.eval.cost_range.PricedRange` for ``episodes``
    episodes at the paper's models (or ``cfg``'s), each needed build's, and their sum:
    ``(rows, builds, total)``; a total is a PricedRange over every row and build."""
    from lorekit.eval.cost import Tokens as T
    from lorekit.eval.cost_range import EpisodeRange, price_range

    out = []
    for row in rows:
        span = est.rows.get(row.id)
        if span is None:
            continue
        models = configured_model(cfg) if cfg is not None else paper_model(row)
        out.append((row, price_range(span, episodes, models, table)))
    from lorekit.cli.reproduce_build import needed_builds

    builds: dict[str, Any] = {}
    needed = needed_builds(exp, rows)  # with the builds those start from
    for build in exp.builds:
        roles = est.builds.get(build.id)
        if roles is None or build.id not in needed:
            continue
        models = configured_model(cfg) if cfg is not None else _build_model(build)
        whole = {r: T(t.calls, t.prompt, t.completion, t.stable) for r, t in roles.items()}
        builds[build.id] = price_range(EpisodeRange(whole, whole, whole), 1, models, table)
    total = _sum_ranges([c for _, c in out] + list(builds.values()))
    return out, builds, total


def _build_model(build: Any) -> Callable[[str], str]:
    named: Mapping[str, str] = build.paper_models

    def pick(role: str) -> str:
        return named.get(role) or next(iter(named.values()), "unknown")

    return pick


def _sum_ranges(parts: Sequence[Any]) -> Any:
    from lorekit.eval.cost_range import ENDS, PricedRange

    def add(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a + b

    tokens = {e: sum(p.tokens[e] for p in parts) for e in ENDS}
    calls = {e: sum(p.calls[e] for p in parts) for e in ENDS}
    usd: dict[str, float | None] = dict.fromkeys(ENDS, 0.0)
    cached: dict[str, float | None] = dict.fromkeys(ENDS, 0.0)
    for p in parts:
        for e in ENDS:
            usd[e], cached[e] = add(usd[e], p.usd[e]), add(cached[e], p.usd_cached[e])
    unpriced = tuple(dict.fromkeys(n for p in parts for n in p.unpriced))
    return PricedRange(0, tokens, calls, usd, cached, {}, unpriced)


def listed_estimate(exp: Any, table: Any) -> str:
    """``reproduce list``'s estimate of ``exp``: its saved dry run, priced at the paper's
    models, worded as the dry run words it (:func:`range_text`)."""
    from lorekit.cli.reproduce_estimates import load_saved, range_text, saved_for

    saved = load_saved().get(exp.id)
    est = None if saved is None else saved_for(exp, exp.runnable_rows, saved.planned)
    if est is None:
        return "not measured here: see `reproduce run EXPERIMENT --dry-run`"
    left_out = unmeasured(exp.runnable_rows, est)
    if not any(r.id in est.rows for r in exp.runnable_rows):
        return f"not measured: {left_out}"
    total = priced(exp, exp.runnable_rows, est, est.planned, table, None)[2]
    models = " at the paper's models" if total.usd["central"] is not None else ""
    rest = f"; not measured: {left_out}" if left_out else ""
    return f"{est.planned} ep/row: {range_text(total.tokens, total.usd)}{models}{rest}"


def unmeasured(rows: Sequence[Any], est: Any) -> str:
    """The rows the estimate leaves out and why (``row (reason), ...``; rows sharing a
    reason are named together), empty when it leaves none out."""
    why: dict[str, list[str]] = {}
    for row in rows:
        if row.id not in est.rows:
            reason = est.missing.get(row.id, "no scripted models answer its agent")
            why.setdefault(reason, []).append(row.id)
    return "; ".join(f"{', '.join(ids)} ({reason})" for reason, ids in why.items())


def print_dry_run(
    exp: Any,
    rows: Sequence[Any],
    planned: int | None,
    split: str,
    table: Any,
    cfg: Any | None,
) -> None:
    """Measure ``rows`` (:func:`measure_experiment`) and print per row the calls and
    tokens per episode at each end of the range, the total for the experiment's size
    and its price at the paper's (or the given) models, then the prompts' stable
    prefix shares and the builds the rows need."""
    from lorekit.cli.reproduce_estimates import range_text, short_tokens

    left_out = len(rows) - MAX_DRY_ROWS
    rows = list(rows)[:MAX_DRY_ROWS]
    console.print(f"{exp.paper}, {exp.source}: {exp.title}")
    console.print(f"env {exp.env}, split {split}, options {dict(exp.env_options)}")
    if exp.needs_data:
        console.print(f"needs data: {exp.needs_data}")
    try:
        err_console.print(
            "dry run: each row's episodes (one per task group) with scripted models, "
            "played to its budget, and the env's expert ..."
        )
        est = dry_estimate(exp, rows, planned, split)
    except (LookupError, TypeError, ValueError, OSError) as exc:
        raise UserError(f"--dry-run: {exc}") from None
    size = est.planned
    costs, builds, total = priced(exp, rows, est, size, table, cfg)
    who = "your models" if cfg is not None else "the paper's models"
    lines = []
    for row, cost in costs:
        span = est.rows[row.id]
        per = {e: span.total(e) for e in ("low", "central", "high")}
        lines.append(
            [
                row.id,
                row.agent,
                " ".join(f"{k}={json.dumps(v)}" for k, v in row.options.items()) or "-",
                ", ".join(f"{r}={n}" for r, n in cost.models.items()) or "-",
                f"~{per['central'].calls:,.1f} ({per['low'].calls:,.1f} to "
                f"{per['high'].calls:,.1f})",
                f"~{short_tokens(per['central'].prompt + per['central'].completion)} "
                f"({short_tokens(per['low'].prompt + per['low'].completion)} to "
                f"{short_tokens(per['high'].prompt + per['high'].completion)})",
                ", ".join(f"{k} {v}" for k, v in sorted(span.basis.items())),
                _usd(cost.usd["central"], cost.usd_cached["central"], cost.unpriced),
            ]
        )
    headers = ["row", "agent", "options", "priced as", "calls/ep", "tokens/ep", "from",
               f"USD, {size} ep (cached)"]  # fmt: skip
    print_table(headers, lines)
    for build_id, cost in builds.items():
        console.print(
            f"build {build_id}: ~{short_tokens(cost.tokens['central'])} tokens, "
            f"{_usd(cost.usd['central'], cost.usd_cached['central'], cost.unpriced)} USD "
            "(its scripted models' build, scaled to the build's size)"
        )
    if est.rows:
        console.print(
            f"estimate: {range_text(total.tokens, total.usd)} for {size} episodes per row"
            + (" and the builds" if builds else "")
            + f" at {who}"
        )
    else:
        console.print("estimate: none (no row could be measured here)")
    skipped = unmeasured(rows, est)
    if skipped:
        console.print(f"not measured, so left out of the estimate: {skipped}")
    _print_prefix_shares(rows, est)
    if total.unpriced:
        console.print(f"no price for: {', '.join(total.unpriced)} (add them with --prices FILE)")
    console.print(
        "range: ~ a model like the paper's (the authors' run replayed, or the paper's "
        "success rate), from a perfect model (one call per action of the env's expert) "
        "to one that wanders to its budget (every run to its turn cap); measured on one "
        "episode per task group, weighted by its share, with LoreKit's real prompts "
        "(about 4 characters a token)"
    )
    if left_out > 0:
        console.print(
            f"measured the first {MAX_DRY_ROWS} of {MAX_DRY_ROWS + left_out:,} rows (a dry run "
            f"plays episodes of each row; the estimate leaves out the other {left_out:,}); "
            "pick the rows to measure with --rows"
        )
    console.print(table.dated)


def _print_prefix_shares(rows: Sequence[Any], est: Any) -> None:
    """Per agent: the share of prompt tokens in a stable prefix, and how it orders its prompts."""
    from lorekit.agents.shape_models import prompt_order

    seen: dict[str, list[float]] = {}
    for row in rows:
        span = est.rows.get(row.id)
        if span is None:
            continue
        total = seen.setdefault(row.agent, [0.0, 0.0])
        mean = span.total("central")
        total[0] += mean.stable
        total[1] += mean.prompt
    for agent, (stable, prompt) in seen.items():
        if not prompt:
            continue
        order = prompt_order(agent) or "its prompt order is not described"
        console.print(f"stable prefix, {agent}: {stable / prompt:.0%} of prompt tokens; {order}")


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    """A table that fits the terminal without cutting a cell short."""
    from rich.table import Table

    from lorekit.tables import fit_table

    table = Table(*headers)
    for row in rows:
        table.add_row(*row)
    fit_table(console, table)
    console.print(table)


def _usd(usd: float | None, cached: float | None, unpriced: Sequence[str]) -> str:
    if usd is None or cached is None:
        return f"no price: {', '.join(unpriced)}"
    return f"{usd:,.2f} ({cached:,.2f})"


def _split_tasks(exp: Any, split: str) -> list[Any]:
    from lorekit.envs import make

    env = make(exp.env, **dict(exp.env_options))
    try:
        return list(env.tasks(split))
    finally:
        env.close()
