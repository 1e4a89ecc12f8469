"""The rules of TextCraft actions: counts, names, fetching and crafting.

This is the part of :class:`~lorekit.envs.textcraft.env.TextCraftEnv` that
decides what an already-parsed ``get`` or ``craft`` does to the inventory and
how a failure is worded, in both rule sets (friendly and compat). It is a base
class rather than a helper object so the env's state stays in one place and
the rules read the inventory directly.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from typing import Any

from lorekit.envs.textcraft.recipes import Recipe, RecipeBook, display_name, is_category

MAX_COUNT = 10_000
CACHE_LIMIT = 20_000
"""Most entries kept in a per-env memo (normalised actions, unknown-name hints)."""

_NUMBER = re.compile(r"^[+-]?\d+$")
_NUMBERISH = re.compile(r"^[+-]?[\d.,/]+$")
_COUNTED = re.compile(r"^(\d+) (.+)$")


class InvalidAction(Exception):
    """An action that cannot be applied; its message is the observation."""


class CraftRules:
    """Fetch and craft rules over an inventory; the env sets the attributes below.

    ``compat`` selects the original TextCraft rules and wording, ``_msg`` the
    matching message templates and ``_forms_text`` the action forms quoted in
    malformed-action messages.
    """

    book: RecipeBook
    compat: bool
    _msg: Mapping[str, str]
    _forms_text: str
    _inventory: dict[str, int]
    _hint_cache: dict[str, str]

    # -- counts and names ------------------------------------------------------

    def _malformed(self, text: str) -> str:
        return self._fail("cannot_execute", "malformed", action=text)

    def _fail(self, compat_key: str, friendly_key: str, **values: Any) -> str:
        """Format the mode's message: compat and friendly name them differently."""
        key = compat_key if self.compat else friendly_key
        return self._msg[key].format(forms=self._forms_text, **values)

    def _count(self, token: str, action: str) -> int:
        if _NUMBER.match(token):
            value = int(token)
            if 1 <= value <= MAX_COUNT:
                return value
        raise InvalidAction(
            self._fail("cannot_execute", "bad_count", action=action, count=token, limit=MAX_COUNT)
        )

    def _split_count(self, text: str, action: str) -> tuple[int | None, str]:
        """``"4 oak planks"`` -> (4, "oak planks"); no leading count -> (None, text)."""
        head, _, rest = text.partition(" ")
        if rest and (_NUMBER.match(head) or _NUMBERISH.match(head)):
            return self._count(head, action), rest
        return None, text

    def _resolve(self, name: str) -> str | None:
        ident = self.book.resolve_normalized(name)
        if ident is None and not self.compat and name.endswith("s"):
            ident = self.book.resolve_normalized(name[:-1])
        return ident

    def _unknown(self, name: str) -> InvalidAction:
        if self.compat:
            return InvalidAction(self._msg["not_found"].format(item=name))
        hint = self._hint_cache.get(name)
        if hint is None:
            # difflib is slow (~100 us); agents repeat their mistakes, so cache.
            guesses = difflib.get_close_matches(name, self.book.known_names(), n=1, cutoff=0.75)
            hint = self._msg["did_you_mean"].format(guess=guesses[0]) if guesses else ""
            if len(self._hint_cache) < CACHE_LIMIT:
                self._hint_cache[name] = hint
        return InvalidAction(self._msg["unknown_item"].format(item=name, hint=hint))

    # -- actions ---------------------------------------------------------------

    def _show_inventory(self) -> str:
        if not self._inventory:
            return self._msg["inventory_empty"]
        part = self._msg["inventory_item"]
        # Compat keeps the original's trailing space after every entry.
        joiner = "" if self.compat else " "
        items = joiner.join(
            part.format(item=display_name(i), count=n) for i, n in self._inventory.items()
        )
        return self._msg["inventory"].format(items=items)

    def _add(self, item: str, count: int) -> None:
        self._inventory[item] = self._inventory.get(item, 0) + count

    def _remove(self, item: str, count: int) -> None:
        left = self._inventory[item] - count
        if left:
            self._inventory[item] = left
        else:
            del self._inventory[item]

    def _get(self, rest: str, action: str) -> str:
        count, name = self._split_count(rest, action)
        if count is None or not name:
            if self.compat or not rest:
                raise InvalidAction(self._malformed(action))
            raise InvalidAction(self._msg["missing_count"].format(action=action, item=rest))
        ident = self._resolve(name)
        if ident is None:
            raise self._unknown(name)
        if is_category(ident):
            member = self.book.base_member(ident)
            if member is None:
                members = ", ".join(display_name(m) for m in self.book.members(ident))
                raise InvalidAction(
                    self._fail("not_found", "category_not_base", item=name, members=members)
                )
            if self.compat:
                self._add(ident, count)
                return self._msg["got"].format(count=count, item=display_name(ident))
            self._add(member, count)
            return self._msg["got_member"].format(
                count=count, item=display_name(member), category=display_name(ident)
            )
        if not self.book.is_base(ident):
            raise InvalidAction(self._fail("not_found", "not_base", item=display_name(ident)))
        self._add(ident, count)
        return self._msg["got"].format(count=count, item=display_name(ident))

    def _craft(self, head: str, using: str, action: str) -> str:
        count, target_name = self._split_count(head, action)
        count = 1 if count is None else count
        parts = [p.strip() for p in using.split(",")]
        if self.compat:
            return self._craft_compat(count, target_name, parts, action)
        parts = [p for p in parts if p]
        if not parts:
            raise InvalidAction(self._msg["no_ingredients"])
        target = self._resolve(target_name)
        if target is None:
            raise self._unknown(target_name)
        shown = display_name(target)
        if is_category(target):
            example = display_name(self.book.members(target)[0])
            raise InvalidAction(self._msg["craft_category"].format(item=shown, example=example))
        recipes = self.book.recipes_for(target)
        if not recipes:
            raise InvalidAction(self._msg["craft_base"].format(item=shown))
        given: list[str] = []
        for part in parts:
            _, name = self._split_count(part, action)
            ident = self._resolve(name)
            if ident is None:
                raise self._unknown(name)
            if ident in given:
                raise InvalidAction(
                    self._msg["duplicate_ingredient"].format(item=display_name(ident))
                )
            given.append(ident)
        matched = [(r, m) for r in recipes if (m := self._assign(r, given)) is not None]
        if not matched:
            known = "; ".join(self.book.command(r) for r in recipes)
            names = ", ".join(display_name(g) for g in given)
            raise InvalidAction(
                self._msg["no_recipe"].format(item=shown, given=names, recipes=known)
            )
        first_missing: list[str] | None = None
        for recipe, assignment in matched:
            batches = math.ceil(count / recipe.count)
            missing = self._missing(assignment, batches)
            if not missing:
                for ident, needed in assignment:
                    self._consume(ident, needed * batches)
                made = recipe.count * batches
                self._add(target, made)
                return self._msg["crafted"].format(count=made, item=shown)
            first_missing = first_missing or missing
        raise InvalidAction(
            self._msg["missing"].format(
                count=count, item=shown, missing=", ".join(first_missing or [])
            )
        )

    def _assign(self, recipe: Recipe, given: list[str]) -> list[tuple[str, int]] | None:
        """Pair each given ingredient with a distinct recipe slot, or None."""
        if len(given) != len(recipe.ingredients):
            return None
        slots = list(recipe.ingredients)
        result: list[tuple[str, int]] = []
        for ident in sorted(given, key=is_category):
            for index, (slot, needed) in enumerate(slots):
                if self.book.matches(slot, ident):
                    result.append((ident, needed))
                    del slots[index]
                    break
            else:
                return None
        return result

    def _available(self, ident: str) -> int:
        if is_category(ident):
            return sum(self._inventory.get(m, 0) for m in self.book.members(ident))
        return self._inventory.get(ident, 0)

    def _missing(self, assignment: list[tuple[str, int]], batches: int) -> list[str]:
        part = self._msg["missing_part"]
        out = []
        for ident, needed in assignment:
            have = self._available(ident)
            if have < needed * batches:
                out.append(part.format(need=needed * batches, item=display_name(ident), have=have))
        return out

    def _consume(self, ident: str, amount: int) -> None:
        if not is_category(ident):
            self._remove(ident, amount)
            return
        for member in self.book.members(ident):
            take = min(amount, self._inventory.get(member, 0))
            if take:
                self._remove(member, take)
                amount -= take
            if not amount:
                return

    def _craft_compat(self, count: int, target_name: str, parts: list[str], action: str) -> str:
        """Original rules: exact counts, concrete (or fetched category) items only."""
        target = self.book.resolve_normalized(target_name)
        target_id = target if target is not None else target_name.replace(" ", "_")
        given: list[tuple[str | None, int]] = []
        for part in parts:
            match = _COUNTED.match(part)
            if not match:
                raise InvalidAction(self._msg["wrong_format"].format(part=part))
            given.append((self.book.resolve_normalized(match.group(2)), int(match.group(1))))
        for ident, n in given:
            if ident is None or self._inventory.get(ident, 0) < n:
                raise InvalidAction(self._msg["not_enough"].format(item_id=target_id.lstrip("#")))
        recipes = self.book.recipes_for(target) if target is not None else ()
        for recipe in recipes:
            batches = math.ceil(count / recipe.count)
            if self._exact(recipe, given, batches):
                for ident, n in given:
                    if ident is not None:
                        self._remove(ident, n)
                made = recipe.count * batches
                self._add(recipe.output, made)
                return self._msg["crafted"].format(count=made, item_id=recipe.output)
        raise InvalidAction(self._msg["no_recipe"].format(item_id=target_id.lstrip("#")))

    def _exact(self, recipe: Recipe, given: list[tuple[str | None, int]], batches: int) -> bool:
        if len(given) != len(recipe.ingredients):
            return False
        slots = list(recipe.ingredients)
        for ident, n in given:
            for index, (slot, needed) in enumerate(slots):
                if ident is not None and needed * batches == n and self.book.matches(slot, ident):
                    del slots[index]
                    break
            else:
                return False
        return True
