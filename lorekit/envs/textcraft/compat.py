"""Compat mode's action rules and oracle: the original TextCraft, step for step.

The rules below restate what the original environment does with an action
string, so that a transcript from compat mode reads exactly like one from the
original (tests compare against golden traces recorded from it):

* actions are matched case-sensitively, as typed: no trimming, no lower-casing
  (``Get 1 oak log`` and ``> get 1 oak log`` cannot be executed);
* ``get N name`` fetches any known item without a recipe, echoing the typed
  name; ``N`` may be 0 (the inventory then lists the item with count 0);
* ``craft ... using N a, M b`` first checks that the inventory holds each
  listed item at its listed count, then looks for a recipe of the output whose
  ingredients pair one-to-one with the list at exactly those counts (a group
  ingredient such as ``planks`` is met by an item of that group), and makes
  one batch of it: the requested output count is ignored;
* the reward is 1 and the episode ends when a craft outputs the goal.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence

from lorekit.envs.textcraft.original import NS, Episode, OriginalBook, OriginalRecipe, Part, shown
from lorekit.envs.textcraft.rules import InvalidAction

_CRAFT = re.compile(r"craft (.*) using (.*)")
_GET = re.compile(r"get ([0-9]+) (.*)")
_COUNTED = re.compile(r"([0-9]+) (.*)")
_HUGE_NUMBER = re.compile(r"[0-9]{1001}")
"""Python refuses to convert numbers this long (the original's Python did not)."""

Given = tuple[str, bool, int]
"""A typed ingredient: full id, whether that id is a group tag, count."""


@functools.lru_cache(maxsize=4096)
def episode_for(book: OriginalBook, goal: str) -> Episode:
    """Episodes are read-only once built and depend only on the goal: reuse them."""
    return Episode(book, goal)


@functools.lru_cache(maxsize=4096)
def distractor_pool(book: OriginalBook, goal: str, seed: int) -> tuple[str, ...]:
    return tuple(episode_for(book, goal).distractor_pool(seed))


class OriginalRules:
    """Applies actions to an inventory keyed by item id (no namespace)."""

    def __init__(self, book: OriginalBook, messages: Mapping[str, str]) -> None:
        self.book = book
        self._msg = messages

    def apply(
        self, action: str, inventory: dict[str, int], episode: Episode, goal: str
    ) -> tuple[str, bool]:
        """(observation, whether this action crafted the goal); raises InvalidAction."""
        if _HUGE_NUMBER.search(action):
            raise InvalidAction(self._msg["cannot_execute"].format(action=action))
        match = _CRAFT.match(action)
        if match:
            return self._craft(match.group(1), match.group(2), inventory, episode, goal)
        match = _GET.match(action)
        if match:
            return self._get(int(match.group(1)), match.group(2), inventory), False
        if action.startswith("inventory"):
            return self._inventory(inventory), False
        raise InvalidAction(self._msg["cannot_execute"].format(action=action))

    def _typed(self, name: str) -> tuple[str, bool]:
        full = NS + name.replace(" ", "_")
        return full, full in self.book.tags

    def show_inventory(self, inventory: Mapping[str, int]) -> str:
        """The original's inventory line for ``inventory``."""
        return self._inventory(inventory)

    def _inventory(self, inventory: Mapping[str, int]) -> str:
        if not inventory:
            return self._msg["inventory_empty"]
        part = self._msg["inventory_item"]
        items = "".join(part.format(item=shown(k), count=n) for k, n in inventory.items())
        return self._msg["inventory"].format(items=items)

    def _get(self, count: int, name: str, inventory: dict[str, int]) -> str:
        full, is_tag = self._typed(name)
        if is_tag or not self.book.fetchable(full):
            raise InvalidAction(self._msg["not_found"].format(item=name))
        key = full[len(NS) :]
        inventory[key] = inventory.get(key, 0) + count
        return self._msg["got"].format(count=count, item=name)

    def _craft(
        self, head: str, using: str, inventory: dict[str, int], episode: Episode, goal: str
    ) -> tuple[str, bool]:
        counted = _COUNTED.match(head)
        count, name = (int(counted.group(1)), counted.group(2)) if counted else (1, head)
        output, output_is_tag = self._typed(name)
        given: list[Given] = []
        for chunk in using.split(","):
            part = chunk.strip()
            counted = _COUNTED.match(part)
            if not counted:
                raise InvalidAction(self._msg["wrong_format"].format(part=part))
            given.append((*self._typed(counted.group(2)), int(counted.group(1))))
        for full, is_tag, n in given:
            key = full[len(NS) :]
            if is_tag or key not in inventory or inventory[key] < n:
                shown_id = "None" if output_is_tag else output
                raise InvalidAction(self._msg["not_enough"].format(item=shown_id))
        candidates = [] if output_is_tag else episode.craft_candidates(output)
        made = next((r for r in candidates if self._pairs(r, given)), None)
        if made is None:
            tag, item = (output, None) if output_is_tag else (None, output)
            # The original printed the Python repr of the requested output.
            described = self._msg["output_repr"].format(tag=repr(tag), item=repr(item), count=count)
            raise InvalidAction(self._msg["no_recipe"].format(item=described))
        for full, _, n in given:
            key = full[len(NS) :]
            inventory[key] -= n
            if inventory[key] == 0:
                del inventory[key]
        key = made.output[len(NS) :]
        inventory[key] = inventory.get(key, 0) + made.count
        text = self._msg["crafted"].format(count=made.count, item=made.output)
        return text, made.output == goal

    def _pairs(self, recipe: OriginalRecipe, given: list[Given]) -> bool:
        """Each recipe ingredient takes the first listed item it accepts, at its exact count."""
        left = list(given)
        for part in recipe.parts:
            index = next((i for i, g in enumerate(left) if self._accepts(part, g[0])), None)
            if index is None or left[index][2] != part.count:
                return False
            del left[index]
        return not left

    def _accepts(self, part: Part, full: str) -> bool:
        if part.is_tag:
            return self.book.group_of.get(full) == part.name
        return full == part.name


def plan_original(book: OriginalBook, inventory: Mapping[str, int], goal: str) -> list[str]:
    """Actions valid under the original's rules that take ``inventory`` to the goal.

    Each craft makes one batch, so an item needed in more than one batch is
    crafted by repeating the same command. Group ingredients are met with a
    held member if there is one, else with the shallowest member.
    """
    return plan_items(book, inventory, [(goal, 1)])


def plan_items(
    book: OriginalBook,
    inventory: Mapping[str, int],
    wants: Sequence[tuple[str, int]],
    keep: Mapping[str, int] | None = None,
) -> list[str]:
    """Actions that make ``inventory`` hold at least each wanted ``(item id, count)``,
    in the order given (ids without the namespace), under the original's rules.

    ``keep`` names amounts that crafting must not dip below: an ingredient that is
    also kept is fetched or made on top of them (so it never runs out and loses
    its place in the inventory's order)."""
    reserve = {NS + k: v for k, v in (keep or {}).items()}
    held = {NS + k: max(v, 0) for k, v in inventory.items()}
    actions: list[str] = []

    def depth(name: str) -> int:
        return book.depth.get(name, 0)

    def recipe_depth(recipe: OriginalRecipe) -> int:
        return max(depth(p.name) + 1 for p in recipe.parts)

    def choose(part: Part, need: int) -> str:
        if not part.is_tag:
            return part.name
        members = [m for m in book.members(part.name) if m in book.by_item or book.fetchable(m)]
        for member in members:
            if held.get(member, 0) >= need:
                return member
        return min(members, key=lambda m: (depth(m) if m in book.by_item else 0, members.index(m)))

    def ensure(item: str, quantity: int) -> None:
        have = held.get(item, 0)
        if have >= quantity:
            return
        recipes = book.by_item.get(item)
        if not recipes:
            actions.append(f"get {quantity - have} {shown(item)}")
            held[item] = quantity
            return
        recipe = min(recipes, key=lambda r: (recipe_depth(r), recipes.index(r)))
        batches = math.ceil((quantity - have) / recipe.count)
        using: list[str] = []
        for part in recipe.parts:
            concrete = choose(part, part.count * batches)
            ensure(concrete, part.count * batches + reserve.get(concrete, 0))
            held[concrete] -= part.count * batches
            using.append(f"{part.count} {shown(concrete)}")
        line = f"craft {recipe.count} {shown(item)} using {', '.join(using)}"
        actions.extend([line] * batches)
        held[item] = held.get(item, 0) + recipe.count * batches

    for item, count in wants:
        ensure(NS + item, count)
    return actions
