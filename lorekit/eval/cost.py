"""What a reproduction will cost, measured on a few scripted episodes before it starts.

``--dry-run`` plays a few episodes of each row (one per task group, weighted
by the group's share of the tasks) with scripted models that
answer the agent's real prompts in the shape of a real model (the caller
picks them; see :mod:`lorekit.agents.shape_models`), through the real harness
into a throw-away store. The calls are metered as every run's are (the
store's per-call token counts; scripted models count about four characters a
token, as for any server that reports no usage), per episode and per role,
and scaled to the experiment's size. Per role it also measures the share of
prompt tokens that repeat, unchanged, the start of the previous prompt of the
same role in the episode: what a provider's prompt cache can serve at its
cached price. An agent whose prompts put fixed material (manual, examples)
before what changes shows a large share; one that puts an observation first
shows almost none.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lorekit.agents import make_agent
from lorekit.envs import EnvSpec, make
from lorekit.eval.prices import ModelPrice, PriceTable
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm.base import estimate_tokens
from lorekit.llm.roles import Roles

RolesFor = Callable[[str, str, Mapping[str, Any]], Roles]
"""``(env, agent, env_options) -> Roles``: the scripted models for a row."""


@dataclass(slots=True)
class Tokens:
    """Calls and tokens, and how many prompt tokens repeat the previous prompt's start."""

    calls: float = 0
    prompt: float = 0
    completion: float = 0
    stable: float = 0

    def add(self, other: Tokens) -> None:
        self.calls += other.calls
        self.prompt += other.prompt
        self.completion += other.completion
        self.stable += other.stable

    def scaled(self, factor: float) -> Tokens:
        return Tokens(
            self.calls * factor,
            self.prompt * factor,
            self.completion * factor,
            self.stable * factor,
        )

    @property
    def stable_share(self) -> float:
        return self.stable / self.prompt if self.prompt else 0.0


def stable_prefix(
    previous: Sequence[Mapping[str, str]], messages: Sequence[Mapping[str, str]]
) -> int:
    """Tokens at the start of ``messages`` identical to the start of ``previous``
    (whole messages, then the common start of the first that differs)."""
    tokens = 0
    for old, new in zip(previous, messages, strict=False):
        if old["role"] != new["role"]:
            break
        if old["content"] == new["content"]:
            tokens += estimate_tokens(new["content"])
            continue
        a, b = old["content"], new["content"]
        same = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            same += 1
        tokens += same // 4
        break
    return tokens


def meter(calls: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Tokens]]:
    """Episode key -> role -> :class:`Tokens` of the store's calls (``RunStore.llm_calls``),
    cache hits left out as they cost nothing."""
    out: dict[str, dict[str, Tokens]] = {}
    last: dict[tuple[str, str], Sequence[Mapping[str, str]]] = {}
    for call in calls:
        episode, role = str(call["episode_key"]), str(call["role"])
        row = out.setdefault(episode, {}).setdefault(role, Tokens())
        row.calls += 1
        if call["cached"]:
            continue
        messages = call["messages"]
        row.prompt += call["prompt_tokens"]
        row.completion += call["completion_tokens"]
        previous = last.get((episode, role))
        if previous is not None:
            row.stable += min(stable_prefix(previous, messages), call["prompt_tokens"])
        last[(episode, role)] = messages
    return out


@dataclass(slots=True)
class RowMeasure:
    """A row's measured episodes (per role) and their weights in the mean episode
    (the shares of the task groups they stand for; none given: alike)."""

    row: str
    agent: str
    episodes: list[dict[str, Tokens]] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    missing: str | None = None
    """Why the row was not measured (no scripted models answer its agent)."""

    def per_episode(self) -> dict[str, Tokens]:
        """The mean episode's :class:`Tokens`, by role."""
        n = len(self.episodes)
        weights = self.weights if len(self.weights) == n else [1 / n] * n
        total: dict[str, Tokens] = {}
        for episode, weight in zip(self.episodes, weights, strict=True):
            for role, tokens in episode.items():
                total.setdefault(role, Tokens()).add(tokens.scaled(weight))
        return dict(sorted(total.items()))

    def mean(self) -> Tokens:
        out = Tokens()
        for tokens in self.per_episode().values():
            out.add(tokens)
        return out


def spread_sample(count: int, k: int) -> list[int]:
    """``k`` indices spread evenly over ``range(count)`` (the middle of ``k`` equal
    parts), so a few episodes see a split's easy and hard tasks alike."""
    k = min(k, count)
    return [int((i + 0.5) * count / k) for i in range(k)]


MAX_GROUPS = 8
"""Most task groups the dry run plays one episode of each (more: an even spread)."""


def dry_sample(groups: Sequence[str | None], episodes: int) -> list[tuple[int, float]]:
    """Which tasks to play and each one's weight (summing to 1) in the mean episode.

    Tasks of one group (ALFWorld's task types, TextCraft's depths) cost alike and
    groups differ a lot, so with 2 to :data:`MAX_GROUPS` groups the dry run plays
    the middle task of each group, weighted by the group's share of the tasks (at
    least ``episodes`` tasks: the rest spread evenly). Otherwise, ``episodes``
    tasks spread evenly, weighted alike; ``episodes >= len(groups)``: all of them."""
    count = len(groups)
    if episodes >= count:
        return [(i, 1 / count) for i in range(count)]
    members: dict[str | None, list[int]] = {}
    for i, group in enumerate(groups):
        members.setdefault(group, []).append(i)
    if not 2 <= len(members) <= MAX_GROUPS or len(members) < episodes:
        picked = spread_sample(count, episodes)
        return [(i, 1 / len(picked)) for i in picked]
    return [(m[len(m) // 2], len(m) / count) for m in members.values()]


def measure_rows(
    env: str,
    env_options: Mapping[str, Any],
    split: str,
    rows: Sequence[Any],
    roles_for: RolesFor,
    *,
    planned: int | None,
    episodes: int = 2,
    timeout_s: float = 600.0,
    store_path: Path | None = None,
) -> list[RowMeasure]:
    """Play a few episodes per row (agent, options from the experiment) among the first
    ``planned`` tasks of ``split`` (:func:`dry_sample`: one per task group, or
    ``episodes`` spread evenly), with ``roles_for``'s models; meter them.

    A row whose agent needs no model is measured as zero calls without playing; one
    that ``roles_for`` has no models for (LookupError) is left unmeasured, the
    reason in :attr:`RowMeasure.missing`."""
    from lorekit.agents import needs_model

    built = make(env, **dict(env_options))
    try:
        tasks = list(built.tasks(split))
    finally:
        built.close()
    tasks = tasks[:planned] if planned else tasks
    sample = dry_sample([t.group for t in tasks], episodes)
    chosen = [tasks[i] for i, _ in sample]
    weights = {tasks[i].id: w for i, w in sample}
    out = []
    with tempfile.TemporaryDirectory(prefix="lorekit-dry-") as tmp:
        path = store_path or Path(tmp) / "dry.sqlite3"
        with RunStore(path) as db:
            for row in rows:
                measured = RowMeasure(row.id, row.agent)
                out.append(measured)
                if not needs_model(row.agent):
                    measured.episodes = [{} for _ in chosen]
                    measured.weights = [w for _, w in sample]
                    continue
                try:
                    roles = roles_for(env, row.agent, env_options)
                except LookupError as exc:
                    measured.missing = str(exc)
                    continue
                result = asyncio.run(
                    run_eval(
                        db,
                        env_factory=EnvSpec(env, dict(env_options)),
                        agent=make_agent(row.agent, **dict(row.options)),
                        roles=roles,
                        episodes=plan_episodes(chosen),
                        run_id=f"dry.{row.id}",
                        env_name=env,
                        concurrency=min(len(chosen), 8) or 1,
                        episode_timeout_s=timeout_s,
                    )
                )
                metered = meter(db.llm_calls(result.run_id))
                played = db.episodes(result.run_id)
                measured.episodes = [metered.get(e.episode_key, {}) for e in played]
                measured.weights = [weights[str(e.task_id)] for e in played]
    return out


@dataclass(frozen=True, slots=True)
class RowCost:
    """A row's estimate for ``episodes`` episodes, priced per role's model."""

    row: str
    episodes: int
    per_episode: Tokens
    total: Tokens
    usd: float | None
    usd_cached: float | None
    models: Mapping[str, str]
    unpriced: tuple[str, ...] = ()


def price_row(
    measured: RowMeasure,
    episodes: int,
    models: Callable[[str], str],
    table: PriceTable,
) -> RowCost:
    """Scale a row's measure to ``episodes`` and price each role with ``models(role)``'s
    price: at list price, and with the stable prefix at the cached price."""
    per = measured.per_episode()
    usd = cached = 0.0
    names, unpriced = {}, []
    for role, tokens in per.items():
        name = names[role] = models(role)
        price: ModelPrice | None = table.find(name)
        if price is None:
            unpriced.append(name)
            continue
        total = tokens.scaled(episodes)
        usd += price.cost(total.prompt, total.completion)
        cached += price.cost(total.prompt, total.completion, total.stable)
    mean = measured.mean()
    return RowCost(
        measured.row,
        episodes,
        mean,
        mean.scaled(episodes),
        None if unpriced else usd,
        None if unpriced else cached,
        names,
        tuple(dict.fromkeys(unpriced)),
    )
