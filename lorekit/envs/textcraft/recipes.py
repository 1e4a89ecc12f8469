"""The recipe book: crafting-table recipes, categories, base items and depths.

A book is built once per recipe source and then only read, so every table in it
is an immutable tuple or a read-only mapping: the original TextCraft appended to
a shared recipe list on every reset, and an immutable book makes that class of
bug impossible rather than merely untested.

Identifiers: items are Minecraft ids without the namespace (``oak_planks``);
categories (item tags, or unnamed "any of" lists) start with ``#`` (``#planks``)
so they never collide with an item. Display names replace ``_`` with a space.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

CATEGORY_PREFIX = "#"
_SPACES = re.compile(r"\s+")
_NAMESPACE = re.compile(r"minecraft:")
_UNREACHABLE = math.inf


@dataclass(frozen=True, order=True)
class Recipe:
    """One crafting-table recipe: ``count`` of ``output`` from ``ingredients``.

    ``ingredients`` is sorted by id so equal recipes compare equal regardless of
    the order the source listed them in; ``key`` (the source's recipe id) only
    breaks ties when sorting, so book order never depends on file order.
    """

    output: str
    count: int
    ingredients: tuple[tuple[str, int], ...]
    key: str = ""

    @property
    def units(self) -> int:
        """Total number of ingredient items one batch consumes."""
        return sum(count for _, count in self.ingredients)


class RecipeSource(Protocol):
    """Anything that can produce a recipe book (minecraft-data, a data pack)."""

    name: str

    def load(self) -> RecipeBook: ...


def normalize_name(text: str) -> str:
    """Canonical lookup form of a user-typed item name.

    Tolerates case, extra or odd whitespace, a trailing period, ``minecraft:``
    prefixes and underscores, which is what models actually type.
    """
    text = _NAMESPACE.sub("", text.lower()).replace("_", " ").strip().rstrip(".").strip()
    return _SPACES.sub(" ", text)


def display_name(ident: str) -> str:
    """Readable name of an item or category id (``#oak_logs`` -> ``oak logs``)."""
    return ident.lstrip(CATEGORY_PREFIX).replace("_", " ")


def is_category(ident: str) -> bool:
    return ident.startswith(CATEGORY_PREFIX)


class RecipeBook:
    """An immutable, queryable set of recipes with derived facts.

    Construction breaks recipe cycles (see :meth:`_break_cycles`), decides the
    base items (those with no recipe: the only ones ``get`` hands out), and
    computes every item's crafting depth and cheapest recipe.
    """

    def __init__(
        self,
        recipes: Iterable[Recipe],
        categories: Mapping[str, Sequence[str]],
        *,
        source: str,
    ) -> None:
        self.source = source
        self.categories: Mapping[str, tuple[str, ...]] = MappingProxyType(
            {cat: tuple(members) for cat, members in sorted(categories.items())}
        )
        kept, dropped = _break_cycles(sorted(set(recipes)))
        self.recipes: tuple[Recipe, ...] = tuple(kept)
        self.dropped: tuple[Recipe, ...] = tuple(dropped)
        by_output: dict[str, list[Recipe]] = {}
        for recipe in self.recipes:
            by_output.setdefault(recipe.output, []).append(recipe)
        self._by_output: Mapping[str, tuple[Recipe, ...]] = MappingProxyType(
            {item: tuple(rs) for item, rs in by_output.items()}
        )
        items: set[str] = set(by_output)
        for recipe in (*self.recipes, *self.dropped):
            items.add(recipe.output)
            items.update(i for i, _ in recipe.ingredients if not is_category(i))
        for members in self.categories.values():
            items.update(members)
        self.items: frozenset[str] = frozenset(items)
        self.base_items: frozenset[str] = frozenset(i for i in items if i not in by_output)
        self._depth = _depths(self.recipes, self.categories, self.base_items)
        self._best = MappingProxyType(
            {
                item: min(rs, key=lambda r: (self._recipe_depth(r), r.units, r.key))
                for item, rs in self._by_output.items()
            }
        )
        uses: dict[str, list[Recipe]] = {}
        for recipe in self.recipes:
            for ingredient, _ in recipe.ingredients:
                uses.setdefault(ingredient, []).append(recipe)
        self._uses = MappingProxyType({k: tuple(v) for k, v in uses.items()})
        names: dict[str, str] = {}
        for ident in sorted(self.items | set(self.categories)):
            names.setdefault(normalize_name(display_name(ident)), ident)
        self._names = MappingProxyType(names)
        self._commands = MappingProxyType({r: self._format_command(r) for r in self.recipes})

    # -- queries -----------------------------------------------------------

    def recipes_for(self, item: str) -> tuple[Recipe, ...]:
        return self._by_output.get(item, ())

    def is_craftable(self, item: str) -> bool:
        return item in self._by_output

    def is_base(self, item: str) -> bool:
        return item in self.base_items

    def depth(self, ident: str) -> float:
        """Crafting depth: 0 for base items, ``inf`` when it cannot be made."""
        return self._depth.get(ident, _UNREACHABLE)

    def best_recipe(self, item: str) -> Recipe | None:
        """The shallowest, then cheapest, recipe for ``item``."""
        return self._best.get(item)

    def uses(self, ingredient: str) -> tuple[Recipe, ...]:
        return self._uses.get(ingredient, ())

    def members(self, category: str) -> tuple[str, ...]:
        return self.categories.get(category, ())

    def preferred_member(self, category: str) -> str:
        """The member a solver should aim for: shallowest, then listed first."""
        members = self.categories[category]
        return min(members, key=lambda m: (self.depth(m), members.index(m)))

    def base_member(self, category: str) -> str | None:
        """First base member of a category, if any (what ``get`` can hand out)."""
        for member in self.categories.get(category, ()):
            if member in self.base_items:
                return member
        return None

    def matches(self, ingredient: str, given: str) -> bool:
        """Whether the item or category ``given`` satisfies ``ingredient``."""
        if given == ingredient:
            return True
        return is_category(ingredient) and given in self.categories.get(ingredient, ())

    def resolve(self, text: str) -> str | None:
        """Id of the item or category a user-typed name refers to, or None."""
        return self._names.get(normalize_name(text))

    def resolve_normalized(self, name: str) -> str | None:
        """Like :meth:`resolve` for a name already passed through normalize_name."""
        return self._names.get(name)

    def known_names(self) -> tuple[str, ...]:
        return tuple(self._names)

    def command(self, recipe: Recipe) -> str:
        """The ``craft ...`` line shown to the agent for ``recipe``."""
        cached = self._commands.get(recipe)
        return cached if cached is not None else self._format_command(recipe)

    def tree(self, goal: str) -> tuple[Recipe, ...]:
        """Recipes of the goal's cheapest recipe tree, goal first, no repeats."""
        seen: dict[Recipe, None] = {}
        stack = [goal]
        visited: set[str] = set()
        while stack:
            item = stack.pop()
            if item in visited:
                continue
            visited.add(item)
            if is_category(item):
                if self.base_member(item) is None:
                    stack.append(self.preferred_member(item))
                continue
            recipe = self._best.get(item)
            if recipe is None:
                continue
            seen[recipe] = None
            stack.extend(sorted((i for i, _ in recipe.ingredients), reverse=True))
        return tuple(seen)

    # -- internals ---------------------------------------------------------

    def _recipe_depth(self, recipe: Recipe) -> float:
        return 1 + max(self.depth(i) for i, _ in recipe.ingredients)

    def _format_command(self, recipe: Recipe) -> str:
        parts = sorted((display_name(i), n) for i, n in recipe.ingredients)
        using = ", ".join(f"{n} {name}" for name, n in parts)
        return f"craft {recipe.count} {display_name(recipe.output)} using {using}"


def _depths(
    recipes: Sequence[Recipe], categories: Mapping[str, tuple[str, ...]], base: frozenset[str]
) -> Mapping[str, float]:
    """Least fixed point of depth: base 0, recipe 1 + max, item/category min.

    Iterating to a fixed point (rather than recursing) copes with any leftover
    cycle through categories and leaves items that cannot be made at ``inf``.
    """
    depth: dict[str, float] = {item: 0 for item in base}
    changed = True
    while changed:
        changed = False
        for cat, members in categories.items():
            best = min((depth.get(m, _UNREACHABLE) for m in members), default=_UNREACHABLE)
            if best < depth.get(cat, _UNREACHABLE):
                depth[cat] = best
                changed = True
        for recipe in recipes:
            value = 1 + max(depth.get(i, _UNREACHABLE) for i, _ in recipe.ingredients)
            if value < depth.get(recipe.output, _UNREACHABLE):
                depth[recipe.output] = value
                changed = True
    return MappingProxyType(depth)


def _break_cycles(recipes: list[Recipe]) -> tuple[list[Recipe], list[Recipe]]:
    """Drop recipes that close a cycle, so every item is base or craftable.

    Minecraft packs and unpacks resources (9 iron nuggets <-> 1 iron ingot <->
    1/9 iron block). If all of those kept their recipes, none would be a base
    item and none could ever be obtained. Rule 1: in a cycle, drop the
    *unpacking* recipes (those yielding more than one item), which makes the
    smallest unit (nuggets, dust, balls) the base item. Rule 2, a fallback for
    cycles rule 1 leaves: drop the cycle's recipe that sorts last.
    """
    kept = list(recipes)
    dropped: list[Recipe] = []
    rule_one_done = False
    while True:
        component = _cycle_components(kept)
        on_cycle = [
            r
            for r in kept
            if r.output in component
            and any(component.get(i) == component[r.output] for i, _ in r.ingredients)
        ]
        if not on_cycle:
            return kept, dropped
        victims = [r for r in on_cycle if r.count > 1] if not rule_one_done else []
        rule_one_done = True
        if not victims:
            victims = [max(on_cycle)]
        dropped.extend(victims)
        victim_set = set(victims)
        kept = [r for r in kept if r not in victim_set]


def _cycle_components(recipes: Sequence[Recipe]) -> dict[str, int]:
    """Map each item on a recipe cycle to its strongly connected component number.

    Category edges are left out on purpose: a cycle through a category (quartz
    slab <- any quartz block <- chiseled quartz <- quartz slab) always has a way
    out through another member, and the depth fixed point handles it.
    """
    graph: dict[str, set[str]] = {}
    for recipe in recipes:
        graph.setdefault(recipe.output, set()).update(i for i, _ in recipe.ingredients)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: dict[str, int] = {}
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        # Iterative Tarjan: (node, iterator over successors).
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    for member in members:
                        result[member] = index[node]
    return result
