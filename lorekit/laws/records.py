"""The paper's interaction records, and a collector that also gathers failures.

A law can only be read off records that show both sides: successes say what
an action needs at most (everything present in every success) and what it
changes; failures say which of those things were really needed. The scripted
:class:`~lorekit.laws.explorer.Explorer` only tries an action once it
can succeed, so on its own it yields almost no failures. This collector lets
it play, and now and then *probes*: it tries an achievement's action in the
current state (the action named by the 27-action space, so ``collect_stone``
while facing grass is a try that does nothing), and it tries the ``do``
action on whatever it faces. Same arguments, same records.

One record per line: ``{"achievement", "action", "success", "before",
"after"}`` where a state is ``{"attributes", "tools", "materials", "face",
"nearby", "sleeping"}`` (``nearby`` is the 3x3 area around the player, player in the
middle, the area where crafter looks for tables and furnaces). Things keep
crafter's names, so a ``ripe plant`` is told apart from a ``plant``.

The format itself (:class:`LawRecord`, reading and writing) lives in
:mod:`lorekit.laws.record_format`; this module re-exports it.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lorekit.envs.crafter.core import ACHIEVEMENTS, CrafterCore, world_seed
from lorekit.envs.crafter.data import data
from lorekit.envs.crafter.expanded import DO_TARGETS, faced_kind, to_standard
from lorekit.laws.candidates import diverse, informative
from lorekit.laws.experience import ACHIEVEMENT_OF_ACTION, LAW_ACTIONS
from lorekit.laws.explorer import Explorer
from lorekit.laws.record_format import (
    STATE_KEYS,
    LawRecord,
    RecordError,
    iter_attempts,
    kind,
    paper_state,
    read_records,
    write_records,
)
from lorekit.laws.transitions import structured_state

__all__ = [
    "STATE_KEYS",
    "LawCollection",
    "LawRecord",
    "RecordError",
    "collect_records",
    "iter_attempts",
    "kind",
    "paper_state",
    "read_records",
    "write_records",
]

_ACTION_OF_TARGET = {target: action for action, target in DO_TARGETS.items()}


@dataclass
class LawCollection:
    """What a collection run kept, and what it cost in engine steps.

    Records wait in reservoirs, each a uniform sample of the whole run (late
    states count as much as early ones): successes (``win_pool`` per
    achievement), and failures (``fail_pool`` each for tries at the action's
    own target and for the rest). :meth:`finish` then keeps the most
    varied successes and the most telling failures.
    """

    records: list[LawRecord] = field(default_factory=list)
    successes: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    steps: int = 0
    episodes: int = 0
    win_pool: int = 10
    fail_pool: int = 10
    seed: int = 0
    won: dict[str, list[tuple[int, LawRecord]]] = field(default_factory=dict)
    pool: dict[tuple[str, bool], list[tuple[int, LawRecord]]] = field(default_factory=dict)
    _counts: Counter[Any] = field(default_factory=Counter)
    _seq: int = 0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def short(self, successes: int, failures: int) -> list[str]:
        return [
            a for a in ACHIEVEMENTS if self.successes[a] < successes or self.failures[a] < failures
        ]

    def keep(self, record: LawRecord) -> None:
        """Offer a record to its reservoir."""
        name = record.achievement
        self._seq += 1
        if record.success:
            bucket = self.won.setdefault(name, [])
            self._offer(bucket, ("won", name), self.win_pool, record)
            self.successes[name] = len(bucket)
            return
        target = DO_TARGETS.get(record.action)
        key = (name, target is not None and kind(str(record.before["face"])) == target)
        self._offer(self.pool.setdefault(key, []), key, self.fail_pool, record)
        self.failures[name] = sum(len(self.pool.get((name, t), [])) for t in (True, False))

    def _offer(
        self, bucket: list[tuple[int, LawRecord]], key: Any, size: int, record: LawRecord
    ) -> None:
        """Reservoir sampling: each record seen under ``key`` is in with equal odds."""
        self._counts[key] += 1
        if len(bucket) < size:
            bucket.append((self._seq, record))
            return
        slot = self._rng.randrange(self._counts[key])
        if slot < size:
            bucket[slot] = (self._seq, record)

    def thinning(self, action: str, at_target: bool) -> float:
        """How often to try ``action`` now: 1 until its reservoir is full, then
        the reservoir's size over the failures seen."""
        seen = self._counts[(ACHIEVEMENT_OF_ACTION[action], at_target)]
        return min(1.0, self.fail_pool / seen) if seen else 1.0

    def finish(self, successes: int, failures: int) -> None:
        """Keep ``successes`` and ``failures`` per achievement, in collection order."""
        chosen: list[tuple[int, LawRecord]] = []
        for name in ACHIEVEMENTS:
            won = self.won.get(name, [])
            keep = {id(r) for r in diverse([r for _, r in won], successes)}
            chosen += [(seq, r) for seq, r in won if id(r) in keep]
            wins = [r for _, r in won if id(r) in keep]
            pooled = self.pool.get((name, True), []) + self.pool.get((name, False), [])
            picked = {id(r) for r in informative(wins, [r for _, r in pooled], failures)}
            chosen += [(seq, r) for seq, r in pooled if id(r) in picked]
            self.successes[name], self.failures[name] = len(keep), len(picked)
        self.records = [r for _, r in sorted(chosen, key=lambda pair: pair[0])]


def _priority(name: str) -> int:
    return -int(data()["tiers"].get(name, 0))


def _law_action(core: CrafterCore, crafter_action: str) -> str | None:
    """The 27-action name of what the explorer did (None: moves, noop, useless ``do``)."""
    if crafter_action == "do":
        return _ACTION_OF_TARGET.get(faced_kind(core))
    if crafter_action in ACHIEVEMENT_OF_ACTION:
        return crafter_action
    return None


def collect_records(
    *,
    successes: int = 10,
    failures: int = 10,
    seed: int = 0,
    probe: float = 0.2,
    pool: int = 10,
    max_steps: int = 200_000,
    episode_length: int = 3_000,
    progress: Callable[[int, int], None] | None = None,
) -> LawCollection:
    """Play seeded episodes until every achievement has ``successes`` and
    ``failures`` records (or ``max_steps`` engine steps pass).

    Each awake step: if the faced thing is a ``do`` target, try it (half the
    time); else with probability ``probe`` try the action of a random
    achievement; else let the explorer pursue what is still short. Steps taken
    asleep are not attempts (crafter ignores the action below full energy; at
    full energy it wakes the player and acts, and what that unlocks is still
    recorded as a success). Waking up makes no record: a ``wake_up`` success
    is the sleep that took.

    Records are sampled over the whole run: ``pool`` times ``successes``
    successes and twice ``pool`` times ``failures`` failures per achievement
    (at the target and elsewhere). Kept are the most varied successes
    (:func:`lorekit.laws.candidates.diverse`) and the most telling failures
    (:func:`lorekit.laws.candidates.informative`), each missing something
    different. ``pool=1`` keeps uniform samples instead.

    ``progress(steps, max_steps)`` is called every few hundred engine steps
    (collection usually ends sooner, when every quota is met).
    """
    core = CrafterCore(length=episode_length)
    rng = random.Random(seed)
    explorer = Explorer(core, seed=seed)
    result = LawCollection(
        win_pool=max(1, pool) * successes, fail_pool=max(1, pool) * failures, seed=seed
    )
    while result.steps < max_steps and result.short(successes, failures):
        core.reset(world_seed(seed, result.episodes + 1))
        explorer.reset()
        result.episodes += 1
        before = structured_state(core)
        while result.steps < max_steps:
            short = result.short(successes, failures)
            if not short:
                break
            law, crafter_action = _choose(core, explorer, rng, result, short, probe, successes)
            # Crafter wakes a sleeper whose health fell since its last update
            # (``_last_health``), which a hit between two updates also does.
            mark = core.players[0]._last_health
            core.step([crafter_action])
            hurt = core.players[0]._last_health < mark
            result.steps += 1
            if progress is not None and result.steps % 250 == 0:
                progress(result.steps, max_steps)
            after = structured_state(core)
            _judge(result, before, after, law, hurt)
            before = after
            if core.players[0].health <= 0 or core.over:
                break
    if progress is not None:
        progress(result.steps, result.steps)
    result.finish(successes, failures)
    return result


def _choose(
    core: CrafterCore,
    explorer: Explorer,
    rng: random.Random,
    result: LawCollection,
    short: list[str],
    probe: float,
    successes: int,
) -> tuple[str | None, str]:
    """(the 27-action name attempted or None, the crafter action to step)."""
    player = core.players[0]
    if not player.sleeping:
        # Tries thin out as a reservoir fills (its own pool size over the
        # failures it has seen), so sampling goes on all run long while the
        # explorer keeps the iron and the steps it needs for the late goals.
        action = _ACTION_OF_TARGET.get(faced_kind(core))
        if action is not None and rng.random() < 0.5 * result.thinning(action, True):
            return action, "do"
        action = LAW_ACTIONS[rng.choice(ACHIEVEMENTS)]
        if rng.random() < probe * result.thinning(action, False):
            return action, to_standard(core, action)
    pursue = [a for a in short if result.successes[a] < successes] or short
    wanted = sorted(pursue, key=lambda a: (result.successes[a], _priority(a), a))
    crafter_action = explorer.act(wanted)
    law = None if player.sleeping else _law_action(core, crafter_action)
    return law, crafter_action


def _judge(
    result: LawCollection,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    law: str | None,
    hurt: bool = False,
) -> None:
    unlocked = [a for a in ACHIEVEMENTS if after["achievements"][a] > before["achievements"][a]]
    states = paper_state(before), paper_state(after)
    target = ACHIEVEMENT_OF_ACTION[law] if law is not None else None
    if target is not None:
        won = target in unlocked
        if law == "sleep":
            if hurt and not after.get("sleeping"):
                return  # a hit wakes the player at once: the record cannot show the outcome
            won = bool(after.get("sleeping")) and not before.get("sleeping")
        result.keep(LawRecord(target, str(law), won, *states))
    for name in unlocked:
        # ``wake_up`` comes once rested, long after the sleep that earned it.
        if name != target and name != "wake_up":
            result.keep(LawRecord(name, LAW_ACTIONS[name], True, *states))
