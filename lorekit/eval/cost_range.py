"""The cost estimate as a range: a perfect model, a model like the paper's, one that
wanders to its budget.

Scripted models are far shorter than a real model (against a server answering
valid actions, ReAct on TextCraft cost 72 times their figure), so the estimate
is not what they spend. From the plays of :func:`lorekit.eval.cost.measure_rows`
it takes only the prompts' shape, and gives, per episode and role:

- **low**, a perfect model: the acting roles make one call per action of the
  env's expert on the task, each prompt the role's first one grown by one turn
  per call; the other roles as few calls as any sampled
  task needed (ADaPT's planner none, Plan-and-Execute's one plan); a turn adds
  what an idle turn adds, with the expert's action and the env's reply in place of
  the idle ones;
- **high**, a model that wanders to its budget: the idle play, every executor
  run to its turn cap (or the env's step cap);
- **central**, a model like the paper's: where the authors' own run of the
  row's agent was replayed through LoreKit, what that replay cost for the task's
  group (``published``); otherwise the low end times ``paper_ratio``, what the
  replayed published run cost against the perfect model's estimate of the same
  row (a model like the paper's gives up about as early as it succeeds: in the
  published TextCraft run failed episodes cost less than successful ones), never
  above the high end.

A row without an idle play (AgentKit, SPRING, AutoManual) or an env without an
expert keeps the scripted play at that end; :attr:`EpisodeRange.basis` says
which ends stand on what.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from lorekit.eval.cost import Play, RowMeasure, Tokens
from lorekit.eval.prices import PriceTable

ENDS = ("low", "central", "high")


@dataclass(slots=True)
class EpisodeRange:
    """Per role, what one episode of a row costs at each end (the mean over its groups)."""

    low: dict[str, Tokens] = field(default_factory=dict)
    central: dict[str, Tokens] = field(default_factory=dict)
    high: dict[str, Tokens] = field(default_factory=dict)
    basis: dict[str, str] = field(default_factory=dict)
    """Each end -> what it stands on (``expert``, ``idle``, ``published: FILE``, ...)."""
    context: dict[str, float] = field(default_factory=dict)
    """How long one prompt of the acting roles gets: ``first`` (the longest first
    prompt), ``growth`` (what a turn adds), ``idle_answer`` (the idle answer's tokens,
    part of ``growth``), ``turns`` (the turn cap the idle play reached) and, where the
    agent asks for one, ``answer_cap`` (its calls' largest ``max_tokens``); see
    :func:`longest_prompt`."""

    def end(self, name: str) -> dict[str, Tokens]:
        return {"low": self.low, "central": self.central, "high": self.high}[name]

    def total(self, name: str) -> Tokens:
        out = Tokens()
        for tokens in self.end(name).values():
            out.add(tokens)
        return out

    def answer_tokens(self) -> int:
        """The longest mean answer of any role at the central figure (tokens per call)."""
        per_call = [t.completion / t.calls for t in self.central.values() if t.calls]
        return int(max(per_call, default=0)) or 1


def longest_prompt(context: Mapping[str, float], answer: int, turns: int | None = None) -> float:
    """The longest prompt (tokens) a row's acting role sends with answers of ``answer``
    tokens each (a model that fills its ``max_tokens``), at ``turns`` turns (default the
    turn cap its idle play reached), its answer included: what must fit a model's context."""
    turns = int(context.get("turns", 1)) if turns is None else turns
    per_turn = max(0.0, context.get("growth", 0.0) - context.get("idle_answer", 0.0)) + answer
    return context.get("first", 0.0) + max(0, turns - 1) * per_turn + answer


def turns_that_fit(context: Mapping[str, float], answer: int, limit: float) -> int:
    """The most turns whose longest prompt (:func:`longest_prompt`) stays within ``limit``."""
    per_turn = max(0.0, context.get("growth", 0.0) - context.get("idle_answer", 0.0)) + answer
    room = limit - context.get("first", 0.0) - answer
    return max(0, int(room // per_turn) + 1) if per_turn > 0 and room >= 0 else 0


def _add(into: dict[str, Tokens], roles: Mapping[str, Tokens], weight: float) -> None:
    for role, tokens in roles.items():
        into.setdefault(role, Tokens()).add(tokens.scaled(weight))


def _sum(roles: Mapping[str, Tokens]) -> float:
    return sum(t.prompt + t.completion for t in roles.values())


def _mix(low: Mapping[str, Tokens], high: Mapping[str, Tokens], s: float) -> dict[str, Tokens]:
    out: dict[str, Tokens] = {}
    _add(out, low, s)
    _add(out, high, 1 - s)
    return out


def _perfect(play: Play, acting: tuple[str, ...], fewest: Mapping[str, float]) -> dict[str, Tokens]:
    """A perfect model on ``play``'s task: one acting call per expert action."""
    steps = play.expert_steps
    assert steps is not None
    out: dict[str, Tokens] = {}
    for role, tokens in play.scripted.items():
        calls = tokens.calls or 1
        if role in acting:
            first = play.first_prompt.get(role, tokens.prompt / calls)
            grow = play.perfect_growth()
            prompt = steps * first + grow * steps * (steps - 1) / 2
            share = tokens.stable_share
            out[role] = Tokens(steps, prompt, steps * tokens.completion / calls, prompt * share)
        else:
            out[role] = tokens.scaled(fewest.get(role, 0.0) / calls)
    return out


def episode_range(
    measure: RowMeasure,
    *,
    paper_ratio: float | None = None,
    published: tuple[str, Mapping[str, Mapping[str, Mapping[str, float]]]] | None = None,
) -> EpisodeRange:
    """The range of one measured row; see the module docstring. ``paper_ratio`` is what
    a model like the paper's spends against a perfect model (None: the middle of the
    range); ``published`` the replayed authors' run ``(file, {group: {role: tokens}})``."""
    out = EpisodeRange()
    plays = measure.plays
    if not plays:  # an agent without a model, or one not measured: the scripted figure
        for name in ENDS:
            _add(out.end(name), measure.per_episode(), 1.0)
            out.basis[name] = "scripted"
        return out
    fewest: dict[str, float] = {}
    for play in plays:
        for role, tokens in play.scripted.items():
            fewest[role] = min(fewest.get(role, tokens.calls), tokens.calls)
    for play in plays:
        scripted = play.scripted
        perfect = play.expert_steps is not None and any(r in measure.acting for r in scripted)
        low = _perfect(play, measure.acting, fewest) if perfect else scripted
        high = play.idle if play.idle else scripted
        if _sum(high) < _sum(low):  # an idle run cut short (patience): at least the expert's
            high = low
        out.basis["low"] = "expert" if perfect else "scripted"
        out.basis["high"] = "idle" if play.idle else "scripted"
        groups = published[1] if published is not None else {}
        if play.group in groups:
            central = {
                role: Tokens(t["calls"], t["prompt"], t["completion"],
                             t["prompt"] * _share(scripted, role))
                for role, t in groups[str(play.group)].items()
            }  # fmt: skip
            out.basis["central"] = f"published: {published[0]}" if published else "published"
        elif paper_ratio is not None and perfect:
            ratio = min(paper_ratio, _sum(high) / _sum(low)) if _sum(low) else 1.0
            central = _mix(low, {}, ratio)
            out.basis.setdefault("central", f"{paper_ratio:g} x low")
        else:
            central = _mix(low, high, 0.5)
            out.basis.setdefault("central", "middle")
        _add(out.low, low, play.weight)
        _add(out.central, central, play.weight)
        _add(out.high, high, play.weight)
        _context(out.context, play, measure.acting)
    return out


def _context(into: dict[str, float], play: Play, acting: tuple[str, ...]) -> None:
    firsts = [v for r, v in play.first_prompt.items() if r in acting] or list(
        play.first_prompt.values()
    )
    into["first"] = max(into.get("first", 0.0), max(firsts, default=0.0))
    into["growth"] = max(into.get("growth", 0.0), play.growth or 0.0)
    into["idle_answer"] = max(into.get("idle_answer", 0.0), play.idle_answer)
    if play.answer_cap:
        into["answer_cap"] = max(into.get("answer_cap", 0.0), float(play.answer_cap))
    calls = max((t.calls for t in (play.idle or play.scripted).values()), default=1.0)
    into["turns"] = max(into.get("turns", 1.0), float(play.run_length or calls or 1))


def _share(roles: Mapping[str, Tokens], role: str) -> float:
    tokens = roles.get(role)
    return tokens.stable_share if tokens is not None else 0.0


@dataclass(frozen=True, slots=True)
class PricedRange:
    """A row's range over ``episodes`` episodes, priced: USD per end (None: a model
    without a price), and with each role's stable prefix at the cached price."""

    episodes: int
    tokens: Mapping[str, float]
    calls: Mapping[str, float]
    usd: Mapping[str, float | None]
    usd_cached: Mapping[str, float | None]
    models: Mapping[str, str]
    unpriced: tuple[str, ...] = ()


def price_range(
    span: EpisodeRange, episodes: int, models: Callable[[str], str], table: PriceTable
) -> PricedRange:
    """Scale each end to ``episodes`` and price each role with ``models(role)``'s price."""
    tokens, calls, usd, cached = {}, {}, {}, {}
    names: dict[str, str] = {}
    unpriced: list[str] = []
    for name in ENDS:
        total = span.total(name).scaled(episodes)
        tokens[name], calls[name] = total.prompt + total.completion, total.calls
        money: float | None = 0.0
        money_cached: float | None = 0.0
        for role, per in span.end(name).items():
            model = names[role] = models(role)
            price = table.find(model)
            if price is None:
                unpriced.append(model)
                money = money_cached = None
                continue
            t = per.scaled(episodes)
            if money is not None and money_cached is not None:
                money += price.cost(t.prompt, t.completion)
                money_cached += price.cost(t.prompt, t.completion, t.stable)
        usd[name], cached[name] = money, money_cached
    return PricedRange(episodes, tokens, calls, usd, cached, names, tuple(dict.fromkeys(unpriced)))
