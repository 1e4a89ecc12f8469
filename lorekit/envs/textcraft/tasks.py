"""Task sets and per-episode crafting-command lists for TextCraft.

Everything here is a function of the recipe book and an integer seed only:
inputs are sorted before any random choice and randomness comes from a private
``random.Random(seed)``, so task sets do not change with file order, set order
or ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import functools
import random
import zlib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from lorekit import yamlio
from lorekit.envs.base import Task
from lorekit.envs.textcraft.original import NS, OriginalBook
from lorekit.envs.textcraft.recipes import Recipe, RecipeBook, display_name

ADAPT_SPLIT = "adapt-200"
ADAPT_GOALS_FILE = Path(__file__).with_name("adapt200.yaml")
SPLITS: tuple[str, ...] = ("test", "dev", "all", ADAPT_SPLIT)
TEST_SIZE = 200
DEV_SIZE = 100
MIN_TEST_DEPTH = 2


@functools.cache
def adapt_goals() -> tuple[str, ...]:
    """ADaPT's published 200 test goals, in order (item ids)."""
    data = yamlio.safe_load(
        ADAPT_GOALS_FILE.read_text(encoding="utf-8"), source=ADAPT_GOALS_FILE.name
    )
    return tuple(str(goal) for goal in data["goals"])


def goals_by_depth(book: RecipeBook) -> dict[int, list[str]]:
    """Every craftable item, grouped by crafting depth, each group sorted."""
    groups: dict[int, list[str]] = {}
    for item in sorted(book.items):
        if book.is_craftable(item):
            depth = book.depth(item)
            if depth != float("inf"):
                groups.setdefault(int(depth), []).append(item)
    return groups


_SETS_CACHE: dict[tuple[int, int, int, int], tuple[RecipeBook, Mapping[str, tuple[Task, ...]]]] = {}


def build_task_sets(
    book: RecipeBook, seed: int = 0, test_size: int = TEST_SIZE, dev_size: int = DEV_SIZE
) -> Mapping[str, tuple[Task, ...]]:
    """The task sets, memoised: they are immutable and an evaluation creates
    one environment per concurrent episode, each of which asks for them."""
    key = (id(book), seed, test_size, dev_size)
    hit = _SETS_CACHE.get(key)
    if hit is not None and hit[0] is book:
        return hit[1]
    sets = _build_task_sets(book, seed, test_size, dev_size)
    _SETS_CACHE[key] = (book, sets)  # holding the book keeps its id from being reused
    return sets


def _build_task_sets(
    book: RecipeBook, seed: int, test_size: int, dev_size: int
) -> Mapping[str, tuple[Task, ...]]:
    """The ``test``, ``dev`` and ``all`` splits.

    ``test`` follows ADaPT: take every goal of the deepest depth, then the next
    depth down, and so on (not below depth 2) until ``test_size`` goals; the
    last depth used is sampled. ``dev`` samples ``dev_size`` goals of any depth
    from the rest, so it never overlaps ``test``.
    """
    rng = random.Random(seed)
    groups = goals_by_depth(book)
    test: list[str] = []
    for depth in sorted((d for d in groups if d >= MIN_TEST_DEPTH), reverse=True):
        room = test_size - len(test)
        if room <= 0:
            break
        pool = groups[depth]
        test.extend(pool if len(pool) <= room else sorted(rng.sample(pool, room)))
    chosen = set(test)
    rest = [item for depth in sorted(groups) for item in groups[depth] if item not in chosen]
    dev = sorted(rng.sample(rest, min(dev_size, len(rest))))
    everything = [item for depth in sorted(groups) for item in groups[depth]]

    def make(items: list[str]) -> tuple[Task, ...]:
        ordered = sorted(items, key=lambda i: (-book.depth(i), i))
        return tuple(_task(book, item, seed) for item in ordered)

    adapt = tuple(_task(book, item, seed) for item in adapt_goals() if book.is_craftable(item))
    return MappingProxyType(
        {"test": make(test), "dev": make(dev), "all": make(everything), ADAPT_SPLIT: adapt}
    )


@functools.lru_cache(maxsize=16)
def build_original_task_sets(
    book: OriginalBook, seed: int = 0, test_size: int = TEST_SIZE, dev_size: int = DEV_SIZE
) -> Mapping[str, tuple[Task, ...]]:
    """Compat mode's splits, from the original's own goal order.

    The original plays goal ``i`` of its depth-sorted list with random seed
    ``i``, so each task keeps that index as its episode seed: compat mode then
    draws distractor candidates exactly as the original did for that goal.
    ``test`` is the first ``test_size`` goals (the default 200 are ADaPT's),
    ``dev`` a sample of the remaining goals, ``all`` every craftable item.
    """
    adapt = [NS + goal for goal in adapt_goals() if NS + goal in book.by_item]
    # The published run placed red_bed two goals earlier than our model of its
    # file order does; its published positions (and seeds) win.
    ranked = adapt + [g for g in book.goal_order if g not in set(adapt)]
    order = {item: index for index, item in enumerate(ranked)}

    def task(full: str) -> Task:
        item = full[len(NS) :]
        depth = book.depth[full]
        index = order.get(full)
        episode_seed = index if index is not None else zlib.crc32(f"{seed}:{item}".encode())
        return Task(
            id=item,
            goal=f"craft {display_name(item)}",
            group=f"depth-{depth}",
            data=MappingProxyType({"item": item, "depth": depth, "seed": episode_seed}),
        )

    test = ranked[:test_size]
    rest = sorted(ranked[test_size:])
    dev = sorted(random.Random(seed).sample(rest, min(dev_size, len(rest))), key=order.__getitem__)
    everything = sorted(book.by_item, key=lambda i: (-book.depth[i], order.get(i, len(order)), i))
    return MappingProxyType(
        {
            "test": tuple(map(task, test)),
            "dev": tuple(map(task, dev)),
            "all": tuple(map(task, everything)),
            ADAPT_SPLIT: tuple(map(task, adapt)),
        }
    )


def _task(book: RecipeBook, item: str, seed: int) -> Task:
    depth = int(book.depth(item))
    episode_seed = zlib.crc32(f"{seed}:{item}".encode())
    return Task(
        id=item,
        goal=f"craft {display_name(item)}",
        group=f"depth-{depth}",
        data=MappingProxyType({"item": item, "depth": depth, "seed": episode_seed}),
    )


def episode_commands(
    book: RecipeBook, goal: str, seed: int, distractors: int = 10
) -> tuple[str, ...]:
    """The goal's recipe-tree commands plus up to ``distractors`` others, shuffled.

    Distractors are recipes that use one of the tree's ingredients but are not
    part of the tree, so they look relevant, as in the original benchmark.
    """
    rng = random.Random(seed)
    tree = book.tree(goal)
    in_tree = set(tree)
    lines = [book.command(r) for r in tree]
    shown = set(lines)
    candidates: dict[Recipe, None] = {}
    for recipe in tree:
        for ingredient, _ in recipe.ingredients:
            for use in book.uses(ingredient):
                if use not in in_tree and book.command(use) not in shown:
                    candidates[use] = None
    pool = sorted(candidates)
    picked = rng.sample(pool, min(distractors, len(pool))) if distractors > 0 else []
    lines.extend(dict.fromkeys(book.command(r) for r in picked))
    rng.shuffle(lines)
    return tuple(lines)
