"""The recipe model of the original TextCraft, rebuilt for compat mode.

Compat mode must behave like the environment ADaPT published its numbers on,
step for step. That environment does not use Minecraft's tags: it reads the
recipe JSON files one by one and derives everything from what it has seen so
far, so several facts depend on the order the files are read in:

* an ingredient given as a list of alternatives is just its first entry;
* a single-ingredient recipe whose ingredient name ends in ``_block`` is
  ignored (no unpacking of storage blocks);
* a recipe is ignored when its output is already among the (transitively
  known) ingredients of one of its ingredients: this is how it breaks cycles,
  so which recipe of a cycle survives depends on file order;
* the category of an item is the recipe's ``group`` field (``planks``,
  ``wooden_door``, ``bed``); an ingredient tag none of whose group members can
  be crafted (``oak_logs``) becomes a plain fetchable item.

The published run read the folder in the order of Apple's APFS directory
hash (CRC-32C of the UTF-32 file name, low 22 bits); with that order the
model reproduces ADaPT's published sequence of 200 goals exactly, so
:func:`listing_order` sorts the files that way. Everything here is built once
per folder and then only read; per-episode state lives in :class:`Episode`.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from lorekit.envs.textcraft.datapack import missing_message

NS = "minecraft:"
_SHAPED = "minecraft:crafting_shaped"
_SHAPELESS = "minecraft:crafting_shapeless"
MIN_GOAL_DEPTH = 2
"""The original only draws goals of at least this depth."""
USES_SAMPLE = 10
"""How many uses of each ingredient the original samples as distractor candidates."""


def _crc32c_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        value = byte
        for _ in range(8):
            value = (value >> 1) ^ 0x82F63B78 if value & 1 else value >> 1
        table.append(value)
    return tuple(table)


_CRC_TABLE = _crc32c_table()


def _apfs_hash(name: str) -> int:
    crc = 0xFFFFFFFF
    for byte in name.encode("utf-32-le"):
        crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc & 0x3FFFFF


def listing_order(names: Iterable[str]) -> list[str]:
    """File names in the order the published run's machine listed them."""
    return sorted(names, key=lambda name: (_apfs_hash(name), name))


def shown(ident: str) -> str:
    """How the original prints an id: namespace dropped, ``_`` as spaces."""
    return ident.replace(NS, "").replace("_", " ")


@dataclass(frozen=True)
class Part:
    """One ingredient of an original recipe: an item id or a group tag."""

    name: str
    count: int
    is_tag: bool


@dataclass(frozen=True)
class OriginalRecipe:
    output: str
    count: int
    parts: tuple[Part, ...]
    group: str | None

    @property
    def line(self) -> str:
        using = ", ".join(f"{p.count} {shown(p.name)}" for p in self.parts)
        return f"craft {self.count} {shown(self.output)} using {using}"


class OriginalBook:
    """The original environment's recipe tables, from one recipe folder."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        by_item: dict[str, list[OriginalRecipe]] = {}
        by_tag: dict[str, list[OriginalRecipe]] = {}
        items: set[str] = set()
        tags: set[str] = set()
        group_of: dict[str, str] = {}
        closure: dict[str, set[str]] = {}
        names = [p.name for p in directory.iterdir() if p.suffix == ".json"]
        for file_name in listing_order(names):
            with (directory / file_name).open(encoding="utf-8") as fh:
                raw = json.load(fh)
            parts = _parts(raw, items, tags)
            if parts is None:
                continue
            result = raw["result"]
            output = result if isinstance(result, str) else result["item"]
            count = 1 if isinstance(result, str) else int(result.get("count") or 1)
            items.add(output)
            if len(parts) == 1 and parts[0].name.endswith("_block"):
                continue
            group = NS + raw["group"] if "group" in raw else None
            if group is not None and group != output:
                tags.add(group)
                group_of[output] = group
            recipe = OriginalRecipe(output, count, tuple(parts), group)
            known = closure.setdefault(output, set())
            if any(output in closure.get(p.name, ()) for p in parts):
                continue  # would close a cycle
            by_item.setdefault(output, []).append(recipe)
            for part in parts:
                known.add(part.name)
                known.update(closure.get(part.name, ()))
            if group is not None:
                by_tag.setdefault(group, []).append(recipe)
        by_item, by_tag = _fetchable_tags(by_item, by_tag, group_of, items, tags)
        self.items = frozenset(items)
        self.tags = frozenset(tags)
        self.group_of: Mapping[str, str] = MappingProxyType(group_of)
        self.by_item: Mapping[str, tuple[OriginalRecipe, ...]] = MappingProxyType(
            {k: tuple(v) for k, v in by_item.items()}
        )
        self.by_tag: Mapping[str, tuple[OriginalRecipe, ...]] = MappingProxyType(
            {k: tuple(v) for k, v in by_tag.items()}
        )
        self.depth: Mapping[str, int] = MappingProxyType(self._depths())
        ranked = [(i, d) for i in self.by_item if (d := self.depth[i]) >= MIN_GOAL_DEPTH]
        self.goal_order: tuple[str, ...] = tuple(
            i for i, _ in sorted(ranked, key=lambda pair: -pair[1])
        )
        uses: dict[str, list[OriginalRecipe]] = {}
        for table in (self.by_item, self.by_tag):
            for recipes in table.values():
                for recipe in recipes:
                    for part in recipe.parts:
                        uses.setdefault(part.name, []).append(recipe)
        self.uses: Mapping[str, tuple[OriginalRecipe, ...]] = MappingProxyType(
            {k: tuple(v) for k, v in uses.items()}
        )

    # -- queries -------------------------------------------------------------

    def recipes_of(self, name: str) -> tuple[OriginalRecipe, ...]:
        """What the original looks up for a name: item recipes, else group recipes."""
        return self.by_item.get(name) or self.by_tag.get(name) or ()

    def is_craftable(self, name: str) -> bool:
        return name in self.by_item or name in self.by_tag

    def fetchable(self, ident: str) -> bool:
        """Whether ``get`` hands out ``ident`` (a full ``minecraft:`` id)."""
        return ident in self.items and ident not in self.tags and not self.is_craftable(ident)

    def members(self, tag: str) -> list[str]:
        """Items whose group is ``tag`` (what satisfies a tag ingredient)."""
        return [item for item, group in self.group_of.items() if group == tag]

    def _depths(self) -> dict[str, int]:
        memo: dict[str, int] = {}

        def depth(name: str) -> int:
            if name not in memo:
                recipes = self.recipes_of(name)
                memo[name] = (
                    min(max(depth(p.name) + 1 for p in r.parts) for r in recipes) if recipes else 0
                )
            return memo[name]

        for item in self.by_item:
            depth(item)
        return memo


def _parts(raw: Mapping[str, Any], items: set[str], tags: set[str]) -> list[Part] | None:
    """A crafting recipe's ingredients as the original reads them, else None."""
    parts: list[Part] = []
    if raw.get("type") == _SHAPED:
        rows = raw["pattern"]
        for key, entry in raw["key"].items():
            entry = entry[0] if isinstance(entry, list) else entry
            count = sum(row.count(key) for row in rows)
            parts.append(_part(entry, count, items, tags))
        return parts
    if raw.get("type") == _SHAPELESS:
        index: dict[str, int] = {}
        for entry in raw["ingredients"]:
            entry = entry[0] if isinstance(entry, list) else entry
            part = _part(entry, 1, items, tags)
            if part.name in index:
                old = parts[index[part.name]]
                parts[index[part.name]] = Part(part.name, old.count + 1, part.is_tag)
            else:
                index[part.name] = len(parts)
                parts.append(part)
        return parts
    return None


def _part(entry: Mapping[str, str], count: int, items: set[str], tags: set[str]) -> Part:
    if "item" in entry:
        items.add(entry["item"])
        return Part(entry["item"], count, False)
    tags.add(entry["tag"])
    return Part(entry["tag"], count, True)


def _fetchable_tags(
    by_item: dict[str, list[OriginalRecipe]],
    by_tag: dict[str, list[OriginalRecipe]],
    group_of: Mapping[str, str],
    items: set[str],
    tags: set[str],
) -> tuple[dict[str, list[OriginalRecipe]], dict[str, list[OriginalRecipe]]]:
    """Turn tag ingredients no craftable group member can satisfy into items."""
    converted: set[str] = set()
    for recipes in by_item.values():
        for recipe in recipes:
            for part in recipe.parts:
                if part.is_tag and not any(
                    m in by_item for m, g in group_of.items() if g == part.name
                ):
                    converted.add(part.name)
    for tag in converted:
        items.add(tag)
        tags.discard(tag)

    def fix(recipe: OriginalRecipe) -> OriginalRecipe:
        if not any(p.is_tag and p.name in converted for p in recipe.parts):
            return recipe
        parts = tuple(
            Part(p.name, p.count, p.is_tag and p.name not in converted) for p in recipe.parts
        )
        return OriginalRecipe(recipe.output, recipe.count, parts, recipe.group)

    fixed = {id(r): fix(r) for rs in by_item.values() for r in rs}
    return (
        {k: [fixed[id(r)] for r in rs] for k, rs in by_item.items()},
        {k: [fixed[id(r)] for r in rs] for k, rs in by_tag.items()},
    )


@functools.cache
def load_original(directory: Path) -> OriginalBook:
    if not directory.is_dir():
        raise FileNotFoundError(missing_message(directory))
    return OriginalBook(directory)


class Episode:
    """One episode's view of the recipe lists after the original's reset.

    The original's tree walk extends the recipe list of every item it visits
    with the recipes found below it, in place. Within that episode, crafting
    an item therefore also accepts the exact ingredients of any recipe in its
    subtree (and yields that recipe's output). A fresh original env shows this
    after its first reset; we rebuild it per episode, so episodes never leak
    into each other (the original's lists kept growing across resets).
    """

    def __init__(self, book: OriginalBook, goal: str) -> None:
        self.book = book
        self.goal = goal
        self.lists: dict[str, list[OriginalRecipe]] = {}
        self.walked = self._walk(goal, frozenset())

    def _list(self, name: str) -> list[OriginalRecipe]:
        found = self.lists.get(name)
        if found is None:
            source = self.book.recipes_of(name)
            if not source:
                return []
            found = self.lists[name] = list(source)
        return found

    def _walk(self, name: str, seen: frozenset[str]) -> list[OriginalRecipe]:
        if name in seen:
            return []
        recipes = self._list(name)
        below = seen | {name}
        index = 0
        while index < len(recipes):  # the list grows while it is walked
            for part in recipes[index].parts:
                recipes.extend(self._walk(part.name, below))
            index += 1
        return recipes

    def craft_candidates(self, output: str) -> list[OriginalRecipe]:
        """The recipes ``craft`` tries for ``output``, in order (none if not craftable)."""
        if output not in self.book.by_item:
            return []
        return self.lists.get(output) or list(self.book.by_item[output])

    def tree_lines(self) -> list[str]:
        return sorted({r.line for r in self.walked})

    def distractor_pool(self, seed: int) -> list[str]:
        """Candidate distractor lines, drawn with the original's random calls."""
        rng = random.Random(seed)
        tree = {r.line for r in self.walked}
        pool: set[str] = set()
        for recipe in self.walked:
            for part in recipe.parts:
                uses = self.book.uses.get(part.name)
                if uses:
                    picked = rng.sample(uses, min(len(uses), USES_SAMPLE))
                    pool.update(r.line for r in picked)
        return sorted(pool - tree)
