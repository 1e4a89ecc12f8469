"""``--max-cost``: one spending limit over a whole reproduction.

The guard keeps one account (:class:`~lorekit.llm.budget.SpendLimit`) for the
builds and rows of one ``--run-id``, what earlier sessions of it spent
included, and reserves before it spends: each call's expected cost before the
call is sent, each episode's (the row's saved estimate) before it starts. The
command ends with exit code 3 (:class:`~lorekit.cli.reproduce_cost.CostLimitReached`)
and the ``--run-id`` that resumes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lorekit.cli.errors import UserError


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


def reproduction_guard(
    exp: Any,
    rows: list[Any],
    models: Any,
    harness: Any,
    prefixes: Sequence[str],
    max_cost: float | None,
    table: Any,
) -> Any:
    """``--max-cost``'s guard over the reproduction's rows and the builds they need, in
    every repeated run (``prefixes``: ``RUN``, ``RUN.r2``, ...), what earlier sessions
    spent included; None without a limit."""
    if max_cost is None:
        return None
    from lorekit.cli.prepare import prepare_config

    cfg = prepare_config(models, cache=harness.cache, store=harness.store, prices=table)[0]
    from lorekit.cli.reproduce_build import needed_builds

    builds = sorted(needed_builds(exp, rows))  # with the earlier builds those start from
    run_ids = [f"{p}.{r.id}" for p in prefixes for r in rows]
    run_ids += [f"{p}.build-{b}" for p in prefixes for b in builds]
    return cost_guard(cfg, run_ids, max_cost, table)


def expect_row(
    guard: Any,
    exp: Any,
    row: Any,
    table: Any,
    models: Any,
    harness: Any,
) -> None:
    """Tell ``--max-cost``'s guard what one episode of ``row`` is expected to cost (the
    central figure of its saved estimate, at the configured models), so an episode is
    only started where it fits; without a saved estimate only calls are reserved."""
    from lorekit.cli.prepare import prepare_config
    from lorekit.cli.reproduce_cost import configured_model
    from lorekit.cli.reproduce_estimates import load_saved, saved_for
    from lorekit.eval.cost_range import price_range

    saved = load_saved().get(exp.id)
    est = None if saved is None else saved_for(exp, [row], saved.planned)
    span = None if est is None else est.rows.get(row.id)
    if span is None:
        guard.expect(0.0)
        return
    cfg = prepare_config(models, cache=harness.cache, store=harness.store, prices=table)[0]
    cost = price_range(span, 1, configured_model(cfg), table)
    guard.expect(cost.usd["central"] or 0.0, span.answer_tokens())
