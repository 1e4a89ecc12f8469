"""Collect interaction records until every achievement has enough of them.

The laws-to-rewards recipe needs, per achievement (or per action), a number
of successful and of failed attempts. ``collect`` plays seeded episodes with
a policy (the scripted :class:`Explorer`, or uniform random), asks the
explorer for whatever is still short, and keeps a record only while its
bucket (achievement or action, success or failure) is below quota.

It is the plain collector, successes as they come; the paper's records, with
the failures that say what a law needs, come from
:func:`lorekit.laws.records.collect_records`, which plays the same explorer.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from lorekit.envs.crafter.core import ACHIEVEMENTS, ACTIONS, CrafterCore, world_seed
from lorekit.envs.crafter.data import data
from lorekit.laws.explorer import Explorer, random_policy
from lorekit.laws.transitions import Record, make_record, structured_state

Policy = Literal["explorer", "random"]


@dataclass
class Collection:
    """What a collection run gathered and what it cost."""

    records: list[Record] = field(default_factory=list)
    successes: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    steps: int = 0
    episodes: int = 0

    def complete(self, keys: Iterable[str], successes: int, failures: int) -> bool:
        return all(self.successes[k] >= successes and self.failures[k] >= failures for k in keys)


def _priority(name: str) -> int:
    return -int(data()["tiers"].get(name, 0))


def collect(
    *,
    successes: int = 10,
    failures: int = 0,
    by: Literal["achievement", "action"] = "achievement",
    policy: Policy = "explorer",
    seed: int = 0,
    max_steps: int = 200_000,
    episode_length: int = 3_000,
) -> Collection:
    """Play until each key has ``successes`` and ``failures`` records (or
    ``max_steps`` engine steps pass). Keys are the 22 achievements or the 17
    actions. Same arguments, same records."""
    keys = ACHIEVEMENTS if by == "achievement" else ACTIONS
    core = CrafterCore(length=episode_length)
    rng = random.Random(seed)
    explorer = Explorer(core, seed=seed)
    chooser: Callable[[Sequence[str]], str] = (
        explorer.act if policy == "explorer" else random_policy(rng)
    )
    result = Collection()
    while result.steps < max_steps and not result.complete(keys, successes, failures):
        core.reset(world_seed(seed, result.episodes + 1))
        explorer.reset()
        result.episodes += 1
        before = structured_state(core)
        while result.steps < max_steps:
            short = [k for k in keys if result.successes[k] < successes]
            wanted = sorted(short, key=lambda k: (result.successes[k], _priority(k), k))
            if by == "action":
                wanted = [a for a in ACHIEVEMENTS if result.successes[a] < successes] or wanted
            action = chooser(wanted)
            core.step([action])
            result.steps += 1
            after = structured_state(core)
            record = make_record(before, action, after, result.episodes)
            before = after
            _keep(result, record, by, successes, failures)
            if core.players[0].health <= 0 or core.over:
                break
            if result.complete(keys, successes, failures):
                break
    return result


def _keep(result: Collection, record: Record, by: str, successes: int, failures: int) -> None:
    if by == "action":
        buckets = [(record.action, record.success)]
    else:
        buckets = [(a, True) for a in record.unlocked]
        if record.achievement is not None and not record.success:
            buckets.append((record.achievement, False))
    kept = False
    for key, ok in buckets:
        counter, quota = (result.successes, successes) if ok else (result.failures, failures)
        if counter[key] < quota:
            counter[key] += 1
            kept = True
    if kept:
        result.records.append(record)
