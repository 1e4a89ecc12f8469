"""The TextCraft environment: fetch base items and craft your way to a goal.

Two rule sets share one engine. *Friendly* (default) explains every failure
and forgives stated ingredient counts; *compat* reproduces the original
TextCraft rules and wording so scores are comparable with published numbers.
See docs/textcraft.md for the exact differences. This module holds the
catalogue, the episode loop and action parsing; what a parsed action does is
in :mod:`lorekit.envs.textcraft.rules`.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.envs.base import Observation, Step, Task, TextEnv
from lorekit.envs.textcraft import solver
from lorekit.envs.textcraft.recipes import RecipeBook, display_name
from lorekit.envs.textcraft.rules import CACHE_LIMIT, MAX_COUNT, CraftRules, InvalidAction
from lorekit.envs.textcraft.sources import get_source
from lorekit.envs.textcraft.tasks import SPLITS, build_task_sets, episode_commands

__all__ = ["MAX_ACTION_CHARS", "MAX_COUNT", "MESSAGES_FILE", "TextCraftEnv", "messages"]

MESSAGES_FILE = Path(__file__).with_name("messages.yaml")
MAX_ACTION_CHARS = 300

_GET = re.compile(r"^get(?: (.*))?$")
_CRAFT = re.compile(r"^craft (.+?) using(?: (.*))?$")
_CRAFT_BARE = re.compile(r"^craft(?: (.*))?$")
_SPACES = re.compile(r"\s+")
_NAMESPACE = re.compile(r"minecraft:")


@functools.cache
def messages() -> Mapping[str, Any]:
    """Observation templates, manual and action forms from ``messages.yaml``."""
    with MESSAGES_FILE.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yamlio.safe_load(fh)
    return data


class TextCraftEnv(CraftRules, TextEnv):
    """Minecraft crafting as text: see the module docstring and the manual."""

    name = "textcraft"
    execution = "inline"  # pure-Python table lookups: microseconds per call

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
        except InvalidAction as failure:
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
        if len(self._action_cache) < CACHE_LIMIT:
            self._action_cache[action] = text
        return text

    def _apply(self, action: str) -> str:
        raw = action if isinstance(action, str) else str(action)
        if len(raw) > MAX_ACTION_CHARS:
            raise InvalidAction(self._malformed(raw[:40] + "..."))
        text = self._normalize(raw)
        if not text:
            raise InvalidAction(self._fail("cannot_execute", "empty", action=raw))
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
            raise InvalidAction(self._msg["no_ingredients"])
        raise InvalidAction(self._malformed(text))
