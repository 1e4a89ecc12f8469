"""Oracle solver for TextCraft: plans from any inventory, no LLM.

It expands the goal's cheapest recipe tree depth first, fetching base items and
crafting intermediates in exactly the batch counts each recipe needs. The
actions it emits name concrete items (never a category) and give exact counts,
so the same plan is valid in friendly and compat mode.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from lorekit.envs.textcraft.recipes import RecipeBook, display_name, is_category


class _Planner:
    def __init__(self, book: RecipeBook, inventory: Mapping[str, int]) -> None:
        self.book = book
        self.inv = dict(inventory)
        self.actions: list[str] = []

    def ensure(self, item: str, quantity: int) -> None:
        """Make the simulated inventory hold at least ``quantity`` of ``item``."""
        have = self.inv.get(item, 0)
        if have >= quantity:
            return
        missing = quantity - have
        name = display_name(item)
        recipe = self.book.best_recipe(item)
        if recipe is None:
            self.actions.append(f"get {missing} {name}")
            self.inv[item] = quantity
            return
        batches = math.ceil(missing / recipe.count)
        parts: list[str] = []
        for ingredient, count in recipe.ingredients:
            need = count * batches
            concrete = self.choose(ingredient, need)
            self.ensure(concrete, need)
            # Hold the ingredient back so sibling sub-crafts cannot count on it.
            self.inv[concrete] -= need
            parts.append(f"{need} {display_name(concrete)}")
        made = recipe.count * batches
        self.actions.append(f"craft {made} {name} using {', '.join(parts)}")
        self.inv[item] = self.inv.get(item, 0) + made

    def choose(self, ingredient: str, need: int) -> str:
        """Concrete item (or a held category pseudo-item) to use for an ingredient."""
        if not is_category(ingredient):
            return ingredient
        if self.inv.get(ingredient, 0) >= need:
            return ingredient
        for member in self.book.members(ingredient):
            if self.inv.get(member, 0) >= need:
                return member
        return self.book.preferred_member(ingredient)


def plan(book: RecipeBook, inventory: Mapping[str, int], goal: str) -> list[str]:
    """All actions that take ``inventory`` to one holding ``goal``."""
    planner = _Planner(book, inventory)
    planner.ensure(goal, 1)
    return planner.actions


def next_action(book: RecipeBook, inventory: Mapping[str, int], goal: str) -> str | None:
    """The first action of :func:`plan`, or None when the goal is already held."""
    actions = plan(book, inventory, goal)
    return actions[0] if actions else None
