"""The TextCraft environment: fetch base items and craft your way to a goal.

Two rule sets share one engine. *Friendly* (default) explains every failure
and forgives stated ingredient counts; *compat* reproduces the original
TextCraft rules and wording so scores are comparable with published numbers.
See docs/textcraft.md for the exact differences.
"""

from __future__ import annotations

import difflib
import functools
import math
import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from lorekit.envs.base import Observation, Step, Task, TextEnv
from lorekit.envs.textcraft import solver
from lorekit.envs.textcraft.recipes import (
    Recipe,
    RecipeBook,
    display_name,
    is_category,
)
from lorekit.envs.textcraft.sources import get_source
from lorekit.envs.textcraft.tasks import SPLITS, build_task_sets, episode_commands

MESSAGES_FILE = Path(__file__).with_name("messages.yaml")
MAX_COUNT = 10_000
MAX_ACTION_CHARS = 300
_CACHE_LIMIT = 20_000

_NUMBER = re.compile(r"^[+-]?\d+$")
_NUMBERISH = re.compile(r"^[+-]?[\d.,/]+$")
_GET = re.compile(r"^get(?: (.*))?$")
_CRAFT = re.compile(r"^craft (.+?) using(?: (.*))?$")
_CRAFT_BARE = re.compile(r"^craft(?: (.*))?$")
_COUNTED = re.compile(r"^(\d+) (.+)$")
_SPACES = re.compile(r"\s+")
_NAMESPACE = re.compile(r"minecraft:")


@functools.cache
def messages() -> Mapping[str, Any]:
    """Observation templates, manual and action forms from ``messages.yaml``."""
    with MESSAGES_FILE.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.safe_load(fh)
    return data


class _Invalid(Exception):
    """An action that cannot be applied; its message is the observation."""


class TextCraftEnv(TextEnv):
    """Minecraft crafting as text: see the module docstring and the manual."""

    name = "textcraft"

    def __init__(
        self,
        source: str | Path | RecipeBook | Any = "minecraft-data",
        *,
        compat: bool = False,
        max_steps: int = 40,
        seed: int = 0,
        distractors: int = 10,
        test_size: int = 200,
        dev_size: int = 100,
    ) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.book = get_source(source)
        self.compat = compat
        self.max_steps = max_steps
        self.distractors = distractors
        self._sets = build_task_sets(self.book, seed, test_size, dev_size)
        self._by_id = {task.id: task for task in self._sets["all"]}
        data = messages()
        self._msg: Mapping[str, str] = data["compat" if compat else "friendly"]
        self._forms: list[str] = list(data["action_forms"])
        self._forms_text = "; ".join(self._forms)
        self._action_cache: dict[str, str] = {}
        self._hint_cache: dict[str, str] = {}
        self._inventory: dict[str, int] = {}
        self._candidates: list[str] = []
        self._goal: str | None = None
        self._steps = 0
        self._done = False
        self._success = False

    # -- catalogue -------------------------------------------------------------

    def tasks(self, split: str = "test") -> list[Task]:
        if split not in self._sets:
            raise ValueError(f"unknown split {split!r}; known splits: {', '.join(SPLITS)}")
        return list(self._sets[split])

    def splits(self) -> tuple[str, ...]:
        return SPLITS

    def action_forms(self) -> list[str]:
        return list(self._forms)

    def manual(self) -> str:
        return str(messages()["manual"])

    @property
    def inventory(self) -> Mapping[str, int]:
        """A copy of the current inventory (item or category id -> count)."""
        return dict(self._inventory)

    # -- episode ---------------------------------------------------------------

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        chosen = self._pick(task, seed)
        goal = str(chosen.data.get("item", chosen.id))
        if not self.book.is_craftable(goal):
            raise ValueError(f"task {chosen.id!r}: {goal!r} has no recipe in this book")
        episode_seed = seed if seed is not None else int(chosen.data.get("seed", 0))
        commands = episode_commands(self.book, goal, episode_seed, self.distractors)
        self._inventory = {}
        self._candidates = self._list_candidates(commands)
        self._goal = goal
        self._steps = 0
        self._done = False
        self._success = False
        text = messages()["reset"].format(commands="\n".join(commands), goal=display_name(goal))
        info = {"task_id": chosen.id, "goal": goal, "seed": episode_seed, "commands": commands}
        return Observation(text, info)

    def _pick(self, task: Task | str | None, seed: int | None) -> Task:
        if isinstance(task, Task):
            return task
        if task is None:
            pool = self._sets["test"]
            return pool[random.Random(seed if seed is not None else 0).randrange(len(pool))]
        found = self._by_id.get(task)
        if found is None:
            ident = self.book.resolve(task)
            found = self._by_id.get(ident) if ident is not None else None
        if found is None:
            raise KeyError(f"unknown TextCraft task {task!r}; task ids are item ids like 'stick'")
        return found

    def step(self, action: str) -> Step:
        if self._goal is None:
            return Step(self._msg["not_started"], 0.0, True, {"valid": False, "success": False})
        if self._done:
            info = {"valid": False, "success": self._success, "steps": self._steps}
            return Step(self._msg["finished"], 0.0, True, info)
        self._steps += 1
        try:
            text, valid = self._apply(action), True
        except _Invalid as failure:
            text, valid = str(failure), False
        success = self._goal in self._inventory
        truncated = not success and self._steps >= self.max_steps
        if truncated:
            text += self._msg["step_limit"].format(limit=self.max_steps)
        self._done = success or truncated
        self._success = success
        info = {"valid": valid, "success": success, "steps": self._steps, "truncated": truncated}
        return Step(text, 1.0 if success else 0.0, self._done, info)

    def expert_action(self) -> str | None:
        if self._goal is None or self._done:
            return None
        return solver.next_action(self.book, self._inventory, self._goal)

    def candidate_actions(self) -> list[str]:
        """The shown craft commands, a ``get`` for each of their fetchable
        ingredients, and ``inventory``: what a random baseline samples from."""
        return list(self._candidates)

    def _list_candidates(self, commands: Sequence[str]) -> list[str]:
        out: dict[str, None] = {}
        for line in commands:
            out[line] = None
            _, _, using = line.partition(" using ")
            for part in using.split(", "):
                count, _, name = part.strip().partition(" ")
                ident = self.book.resolve(name)
                if ident is not None and not self.book.is_craftable(ident):
                    out[f"get {count} {name}"] = None
        out["inventory"] = None
        return list(out)

    # -- parsing ---------------------------------------------------------------

    def _normalize(self, action: str) -> str:
        cached = self._action_cache.get(action)
        if cached is not None:
            return cached
        text = _NAMESPACE.sub("", action.lower()).replace("_", " ")
        text = _SPACES.sub(" ", text).strip().lstrip(">").strip().rstrip(".").strip()
        if len(self._action_cache) < _CACHE_LIMIT:
            self._action_cache[action] = text
        return text

    def _apply(self, action: str) -> str:
        raw = action if isinstance(action, str) else str(action)
        if len(raw) > MAX_ACTION_CHARS:
            raise _Invalid(self._malformed(raw[:40] + "..."))
        text = self._normalize(raw)
        if not text:
            raise _Invalid(self._fail("cannot_execute", "empty", action=raw))
        if text == "inventory":
            return self._show_inventory()
        match = _CRAFT.match(text)
        if match:
            return self._craft(match.group(1), match.group(2) or "", text)
        match = _GET.match(text)
        if match:
            return self._get(match.group(1) or "", text)
        match = _CRAFT_BARE.match(text)
        if match and not self.compat:
            raise _Invalid(self._msg["no_ingredients"])
        raise _Invalid(self._malformed(text))

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
        raise _Invalid(
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

    def _unknown(self, name: str) -> _Invalid:
        if self.compat:
            return _Invalid(self._msg["not_found"].format(item=name))
        hint = self._hint_cache.get(name)
        if hint is None:
            # difflib is slow (~100 us); agents repeat their mistakes, so cache.
            guesses = difflib.get_close_matches(name, self.book.known_names(), n=1, cutoff=0.75)
            hint = self._msg["did_you_mean"].format(guess=guesses[0]) if guesses else ""
            if len(self._hint_cache) < _CACHE_LIMIT:
                self._hint_cache[name] = hint
        return _Invalid(self._msg["unknown_item"].format(item=name, hint=hint))

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
                raise _Invalid(self._malformed(action))
            raise _Invalid(self._msg["missing_count"].format(action=action, item=rest))
        ident = self._resolve(name)
        if ident is None:
            raise self._unknown(name)
        if is_category(ident):
            member = self.book.base_member(ident)
            if member is None:
                members = ", ".join(display_name(m) for m in self.book.members(ident))
                raise _Invalid(
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
            raise _Invalid(self._fail("not_found", "not_base", item=display_name(ident)))
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
            raise _Invalid(self._msg["no_ingredients"])
        target = self._resolve(target_name)
        if target is None:
            raise self._unknown(target_name)
        shown = display_name(target)
        if is_category(target):
            example = display_name(self.book.members(target)[0])
            raise _Invalid(self._msg["craft_category"].format(item=shown, example=example))
        recipes = self.book.recipes_for(target)
        if not recipes:
            raise _Invalid(self._msg["craft_base"].format(item=shown))
        given: list[str] = []
        for part in parts:
            _, name = self._split_count(part, action)
            ident = self._resolve(name)
            if ident is None:
                raise self._unknown(name)
            if ident in given:
                raise _Invalid(self._msg["duplicate_ingredient"].format(item=display_name(ident)))
            given.append(ident)
        matched = [(r, m) for r in recipes if (m := self._assign(r, given)) is not None]
        if not matched:
            known = "; ".join(self.book.command(r) for r in recipes)
            names = ", ".join(display_name(g) for g in given)
            raise _Invalid(self._msg["no_recipe"].format(item=shown, given=names, recipes=known))
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
        raise _Invalid(
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
                raise _Invalid(self._msg["wrong_format"].format(part=part))
            given.append((self.book.resolve_normalized(match.group(2)), int(match.group(1))))
        for ident, n in given:
            if ident is None or self._inventory.get(ident, 0) < n:
                raise _Invalid(self._msg["not_enough"].format(item_id=target_id.lstrip("#")))
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
        raise _Invalid(self._msg["no_recipe"].format(item_id=target_id.lstrip("#")))

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
