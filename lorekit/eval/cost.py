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
class Play:
    """One sampled task of a row, played three ways (see :func:`measure_rows`)."""

    task_id: str
    group: str | None
    weight: float
    scripted: dict[str, Tokens] = field(default_factory=dict)
    """Per role, the scripted models' episode: the prompts' real shape."""
    first_prompt: dict[str, float] = field(default_factory=dict)
    """Per role, the prompt tokens of its first call in the scripted episode."""
    idle: dict[str, Tokens] | None = None
    """Per role, the episode with the acting roles answering an action that changes
    nothing: every executor run to its cap (None: no idle play for this agent or env)."""
    growth: float | None = None
    """Prompt tokens an acting role's turn adds to its next prompt (idle play)."""
    expert_steps: float | None = None
    """The env's expert's actions on a task of this group, on the mean (None: the env
    has no expert)."""
    expert_turn: float | None = None
    """Tokens of one of the expert's actions and the env's reply, on the mean."""
    idle_turn: float | None = None
    """Tokens of the idle action and the env's reply, on the mean (idle play)."""
    run_length: int = 0
    """The most calls of one acting run whose prompts kept growing (idle play): the
    row's turn cap, which is where its longest prompt is sent."""
    idle_answer: float = 0.0
    """Completion tokens of an idle call (the idle action)."""
    answer_cap: int = 0
    """The most ``max_tokens`` an acting call asked for (0: none asked): how long an
    answer the agent lets a model give."""

    def perfect_growth(self) -> float:
        """What a perfect model's turn adds to the next prompt: an idle turn's growth
        with the idle action and reply swapped for the expert's."""
        grow = self.growth or 0.0
        if self.expert_turn is None:
            return grow
        return max(self.expert_turn, grow - (self.idle_turn or 0.0) + self.expert_turn)


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
    plays: list[Play] = field(default_factory=list)
    acting: tuple[str, ...] = ()
    """The agent's roles that choose the env's actions (see :class:`Play`)."""

    def per_episode(self) -> dict[str, Tokens]:
        """The mean scripted episode's :class:`Tokens`, by role."""
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


def growth_per_turn(calls: Sequence[Mapping[str, Any]], roles: Sequence[str]) -> float | None:
    """The prompt tokens a turn of ``roles`` adds to the next prompt of the same run
    (the mean increase between consecutive calls whose prompt grew; a prompt that
    shrinks starts another run). None when no prompt grew."""
    rises = _runs(calls, roles)[0]
    return sum(rises) / len(rises) if rises else None


def longest_run(calls: Sequence[Mapping[str, Any]], roles: Sequence[str]) -> int:
    """The most consecutive calls of one of ``roles`` whose prompts kept growing."""
    return _runs(calls, roles)[1]


def _runs(calls: Sequence[Mapping[str, Any]], roles: Sequence[str]) -> tuple[list[float], int]:
    rises: list[float] = []
    last: dict[tuple[str, str], int] = {}
    length: dict[tuple[str, str], int] = {}
    longest = 0
    for call in calls:
        if call["role"] not in roles or call["cached"]:
            continue
        key = (str(call["episode_key"]), str(call["role"]))
        tokens = int(call["prompt_tokens"])
        grew = key in last and tokens > last[key]
        if grew:
            rises.append(tokens - last[key])
        length[key] = length.get(key, 0) + 1 if grew else 1
        longest = max(longest, length[key])
        last[key] = tokens
    return rises, longest


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
    idle_for: RolesFor | None = None,
    acting_for: Callable[[str], tuple[str, ...]] | None = None,
    expert: Any = None,
    options_for: Callable[[Any], Mapping[str, Any]] | None = None,
) -> list[RowMeasure]:
    """Play a few episodes per row (agent, options from the experiment) among the first
    ``planned`` tasks of ``split`` (:func:`dry_sample`: one per task group, or
    ``episodes`` spread evenly), with ``roles_for``'s models; meter them.

    With ``idle_for`` (models whose acting roles, ``acting_for(agent)``, answer an
    action that changes nothing) each task is played again to the row's budget, and
    with ``expert`` (an agent that plays the env's expert, needing no model) the
    expert's actions are counted (:data:`EXPERT_PER_GROUP` tasks of each group): the
    ends of the estimate's range
    (:mod:`lorekit.eval.cost_range`). ``options_for(row)`` gives a row's agent options
    (default its ``options``; a row that tests with a build gets the build's too).

    A row whose agent needs no model is measured as zero calls without playing; one
    that ``roles_for`` has no models for (LookupError), or whose agent cannot be made
    here (a file it reads is absent), is left unmeasured, the reason in
    :attr:`RowMeasure.missing`."""
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
            play = _Player(db, env, env_options, chosen, timeout_s)
            steps = (
                _Player(db, env, env_options, _per_group(tasks), timeout_s).expert_steps(expert)
                if expert is not None
                else {}
            )
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
                options = dict(options_for(row) if options_for is not None else row.options)
                try:
                    agent = make_agent(row.agent, **options)
                except (TypeError, ValueError, OSError) as exc:  # e.g. a file it reads is absent
                    measured.missing = str(exc)
                    continue
                scripted = play(f"dry.{row.id}", agent, roles)
                plays = {
                    str(e.task_id): Play(str(e.task_id), e.task_group, weights[str(e.task_id)])
                    for e in db.episodes(scripted)
                }
                metered = meter(db.llm_calls(scripted))
                for e in db.episodes(scripted):
                    one = plays[str(e.task_id)]
                    one.scripted = metered.get(e.episode_key, {})
                    one.first_prompt = _first_prompts(db.llm_calls(scripted, e.episode_key))
                    if e.task_group in steps or (e.task_group is None and None in steps):
                        one.expert_steps, one.expert_turn = steps[e.task_group]
                measured.episodes = [p.scripted for p in plays.values()]
                measured.weights = [p.weight for p in plays.values()]
                measured.plays = list(plays.values())
                acting = acting_for(row.agent) if acting_for is not None else ()
                measured.acting = acting
                if idle_for is not None and acting:
                    try:
                        idle_models = idle_for(env, row.agent, env_options)
                    except LookupError:
                        continue
                    idle = play(f"idle.{row.id}", make_agent(row.agent, **options), idle_models)
                    calls = db.llm_calls(idle)
                    by_episode = meter(calls)
                    growth = growth_per_turn(calls, acting)
                    answer = sum(
                        c["completion_tokens"] for c in calls if c["role"] in acting
                    ) / max(1, sum(1 for c in calls if c["role"] in acting))
                    cap = max((_max_tokens(c) for c in calls if c["role"] in acting), default=0)
                    for e in db.episodes(idle):
                        one = plays[str(e.task_id)]
                        one.idle = by_episode.get(e.episode_key, {})
                        one.growth = growth
                        one.idle_turn = turn_tokens(db.steps(idle, e.episode_key))
                        mine = [c for c in calls if c["episode_key"] == e.episode_key]
                        one.run_length = longest_run(mine, acting)
                        one.idle_answer = answer
                        one.answer_cap = cap
    return out


def _first_prompts(calls: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    first: dict[str, float] = {}
    for call in calls:
        first.setdefault(str(call["role"]), float(call["prompt_tokens"]))
    return first


@dataclass(frozen=True, slots=True)
class _Player:
    """Plays one agent on the chosen tasks into the dry run's throw-away store."""

    db: RunStore
    env: str
    env_options: Mapping[str, Any]
    tasks: Sequence[Any]
    timeout_s: float

    def __call__(self, run_id: str, agent: Any, roles: Roles | None) -> str:
        result = asyncio.run(
            run_eval(
                self.db,
                env_factory=EnvSpec(self.env, dict(self.env_options)),
                agent=agent,
                roles=roles if roles is not None else Roles({}),
                episodes=plan_episodes(self.tasks),
                run_id=run_id,
                env_name=self.env,
                concurrency=min(len(self.tasks), 8) or 1,
                episode_timeout_s=self.timeout_s,
            )
        )
        return result.run_id

    def expert_steps(self, expert: Any) -> dict[str | None, tuple[float, float]]:
        """Task group -> the expert's mean actions on its tasks and the mean tokens of one
        action and reply (tasks it could not finish are left out)."""
        run = self(f"expert.{id(expert)}", expert, None)
        found: dict[str | None, list[tuple[int, float]]] = {}
        for e in self.db.episodes(run):
            if e.status == "success":
                turn = turn_tokens(self.db.steps(run, e.episode_key))
                found.setdefault(e.task_group, []).append((e.steps, turn))
        return {
            g: (sum(n for n, _ in v) / len(v), sum(t for _, t in v) / len(v))
            for g, v in found.items()
        }


EXPERT_PER_GROUP = 10
"""Tasks of each group the env's expert plays (it needs no model): one task's length
varies too much to stand for its group's (TextCraft's depth 3: 6 to 15 actions)."""


def _per_group(tasks: Sequence[Any]) -> list[Any]:
    by_group: dict[Any, list[Any]] = {}
    for task in tasks:
        by_group.setdefault(task.group, []).append(task)
    out = []
    for group in by_group.values():
        out += [group[i] for i in spread_sample(len(group), EXPERT_PER_GROUP)]
    return out


def turn_tokens(steps: Sequence[Any]) -> float:
    """The mean tokens of a step's action and observation (about 4 characters a token)."""
    if not steps:
        return 0.0
    return sum(estimate_tokens(s.action) + estimate_tokens(s.observation) for s in steps) / len(
        steps
    )


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


def _max_tokens(call: Mapping[str, Any]) -> int:
    params = call.get("params") or {}
    value = params.get("max_tokens") if isinstance(params, Mapping) else None
    return value if isinstance(value, int) else 0
