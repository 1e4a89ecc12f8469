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

import click

from lorekit.cli.console import console, err_console
from lorekit.cli.errors import UserError

DRY_EPISODES = 2
"""Episodes the dry run plays per row at least (one per task group where a split has
2 to 8 groups)."""
MAX_DRY_ROWS = 20
"""Rows a dry run measures at most (each plays episodes); an experiment with more
rows says which were left out, and ``--rows`` picks the ones to measure."""
EXIT_COST_LIMIT = 3
"""Exit code of a run that stopped at ``--max-cost`` (resumable)."""


class CostLimitReached(click.ClickException):
    """The spend recorded in the store reached ``--max-cost``; exit 3, resumable."""

    exit_code = EXIT_COST_LIMIT


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


def rough_usd(exp: Any, rows: Sequence[Any], episodes: int, table: Any) -> float | None:
    """``costs.yaml``'s rough per-agent estimate priced at each row's paper model (the
    executor's, or its only one); None when a paper model has no price."""
    from lorekit.eval.reproduce import estimate

    usd = 0.0
    for row, cost in zip(rows, estimate(exp, rows, episodes), strict=True):
        if not cost.calls:
            continue
        price = table.find(paper_model(row)("executor"))
        if price is None:
            return None
        usd += price.cost(
            cost.calls * cost.prompt_tokens_per_call, cost.calls * cost.completion_tokens_per_call
        )
    return usd


def print_dry_run(
    exp: Any,
    rows: Sequence[Any],
    planned: int | None,
    split: str,
    table: Any,
    cfg: Any | None,
) -> None:
    """Play a few scripted episodes per row (:data:`DRY_EPISODES` at least, one per
    task group: :func:`lorekit.eval.cost.dry_sample`), then print per row the
    measured calls and tokens per episode, the total for the experiment's size, the
    price at the paper's (or the given) models and the prompts' stable prefix share."""
    from lorekit.agents.shape_models import shape_roles
    from lorekit.eval.cost import measure_rows, price_row

    left_out = len(rows) - MAX_DRY_ROWS
    rows = list(rows)[:MAX_DRY_ROWS]
    console.print(f"{exp.paper}, {exp.source}: {exp.title}")
    console.print(f"env {exp.env}, split {split}, options {dict(exp.env_options)}")
    if exp.needs_data:
        console.print(f"needs data: {exp.needs_data}")
    try:
        size = planned or len(_split_tasks(exp, split))
        err_console.print("dry run: scripted episodes of each row (one per task group) ...")
        measured = measure_rows(
            exp.env,
            exp.env_options,
            split,
            rows,
            shape_roles,
            planned=size,
            episodes=DRY_EPISODES,
        )
    except (LookupError, TypeError, ValueError, OSError) as exc:
        raise UserError(f"--dry-run: {exc}") from None
    lines, totals = [], []
    who = "your models" if cfg is not None else "the paper's models"
    for row, m in zip(rows, measured, strict=True):
        if m.missing is not None:
            lines.append([row.id, row.agent, "-", "-", "not measured", m.missing, *["-"] * 4])
            continue
        models = configured_model(cfg) if cfg is not None else paper_model(row)
        cost = price_row(m, size, models, table)
        totals.append(cost)
        per, shares = cost.per_episode, m.per_episode()
        stable = ", ".join(f"{r} {t.stable_share:.0%}" for r, t in shares.items()) or "-"
        lines.append(
            [
                row.id,
                row.agent,
                " ".join(f"{k}={json.dumps(v)}" for k, v in row.options.items()) or "-",
                ", ".join(f"{r}={n}" for r, n in cost.models.items()) or "-",
                f"{per.calls:,.1f}",
                f"{per.prompt:,.0f} / {per.completion:,.0f}",
                stable,
                f"{cost.total.calls:,.0f}",
                f"{cost.total.prompt + cost.total.completion:,.0f}",
                _usd(cost.usd, cost.usd_cached, cost.unpriced),
            ]
        )
    headers = [
        "row",
        "agent",
        "options",
        "priced as",
        "calls/ep",
        "prompt / completion tokens/ep",
        "stable prefix",
        f"calls ({size} ep)",
        "tokens",
        "USD (cached)",
    ]
    print_table(headers, lines)
    calls = sum(c.total.calls for c in totals)
    tokens = sum(c.total.prompt + c.total.completion for c in totals)
    priced = [c for c in totals if c.usd is not None]
    money = (
        f", ${sum(c.usd or 0 for c in priced):,.2f} at {who} "
        f"(${sum(c.usd_cached or 0 for c in priced):,.2f} with prompt caching)"
        if priced
        else ""
    )
    console.print(
        f"estimate: {calls:,.0f} calls, {tokens:,.0f} tokens for {size} episodes per row{money}"
    )
    skipped = [r.id for r, m in zip(rows, measured, strict=True) if m.missing is not None]
    if skipped:
        console.print(
            f"not measured (no scripted models answer their agents): {', '.join(skipped)}"
        )
    _print_prefix_shares(rows, measured)
    unpriced = sorted({n for c in totals for n in c.unpriced})
    if unpriced:
        console.print(f"no price for: {', '.join(unpriced)} (add them with --prices FILE)")
    played = max((len(m.episodes) for m in measured), default=0)
    console.print(
        f"measured on {played} episodes per row (one per task group, weighted by its share; "
        "at least 2) with scripted models answering the real prompts (about 4 characters a "
        "token); stable prefix: the share of prompt tokens that repeat the start of the "
        "role's previous prompt (what prompt caching discounts)"
    )
    if left_out > 0:
        console.print(
            f"measured the first {MAX_DRY_ROWS} of {MAX_DRY_ROWS + left_out:,} rows (a dry run "
            f"plays episodes of each row; the estimate leaves out the other {left_out:,}); "
            "pick the rows to measure with --rows"
        )
    console.print(table.dated)


def _print_prefix_shares(rows: Sequence[Any], measured: Sequence[Any]) -> None:
    """Per agent: the share of prompt tokens in a stable prefix, and how it orders its prompts."""
    from lorekit.agents.shape_models import prompt_order

    seen: dict[str, Any] = {}
    for row, m in zip(rows, measured, strict=True):
        total = seen.setdefault(row.agent, [0.0, 0.0])
        mean = m.mean()
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


class CostGuard:
    """``--max-cost`` over a whole reproduction (its builds and rows, and what earlier
    sessions of the same ``--run-id`` spent), on one :class:`~lorekit.llm.budget.SpendLimit`:
    every call reserves its expected cost before it is sent (:meth:`wrap_models`), every
    episode its expected cost before it starts (the harness's ``before_episode``, this
    object), and an episode's reservation is released when it ends (:meth:`ended`). An
    episode cut short by a refused call is not stored (its calls are, outside it), so
    resuming plays it again and the spend stays counted."""

    def __init__(self, limit: Any, run_ids: Sequence[str]) -> None:
        self.limit = limit
        self.run_ids = list(run_ids)

    @property
    def tripped(self) -> bool:
        return self.limit.stopped is not None

    def expect(self, episode_usd: float, answer_tokens: int | None = None) -> None:
        """What the next row's episodes and calls are expected to cost (its estimate)."""
        from lorekit.llm.budget import DEFAULT_ANSWER_TOKENS

        self.limit.episode_usd = max(0.0, episode_usd)
        self.limit.answer_tokens = answer_tokens or DEFAULT_ANSWER_TOKENS

    def wrap_models(self, roles: Any) -> Any:
        return self.limit.wrap(roles)

    def __call__(self, spec: Any = None) -> bool:
        return bool(self.limit.admit(str(getattr(spec, "key", spec))))

    def ended(self, outcome: Any) -> None:
        self.limit.episode_ended(outcome.spec.key, float(outcome.cost_usd))

    def message(self, run_id: str) -> str:
        lim = self.limit
        return (
            f"stopped at --max-cost {lim.limit_usd:g}: {lim.stopped}. Spent on this "
            f"reproduction: ${lim.total:,.4f} (${lim.spent_before:,.4f} before this session); "
            "no episode was left half-written. Resume with --run-id "
            f"{run_id} and a higher --max-cost"
        )


def cost_guard(cfg: Any, run_ids: Sequence[str], limit: float, table: Any) -> CostGuard:
    """A guard over ``run_ids`` (a reproduction's rows and builds); every configured
    model must have a price (``cfg`` is priced from ``table`` already, a role's own
    ``price:`` winning)."""
    from lorekit.eval.prices import ModelPrice, spent
    from lorekit.eval.store import RunStore
    from lorekit.llm.budget import SpendLimit

    prices = cfg.prices()
    for settings in cfg.roles.values():
        if settings.provider != "scripted" and settings.model not in prices:
            raise UserError(
                f"--max-cost: no price for model {settings.model!r}; give one with "
                "--prices FILE (or price: in the run config)"
            )
    before = 0.0
    if Path(cfg.store).is_file():
        extra = {m: ModelPrice(m, p.prompt, p.completion) for m, p in prices.items()}
        with RunStore.open_readonly(cfg.store) as db:
            before = spent(db, run_ids, table, extra).usd
    return CostGuard(SpendLimit(limit, before, prices.get), run_ids)
