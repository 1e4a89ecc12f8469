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
from lorekit.envs.episodes import StepRules
from lorekit.envs.steplimit import UNCAPPED, manual_with_limit
from lorekit.envs.textcraft import solver
from lorekit.envs.textcraft.compat import OriginalRules, distractor_pool, episode_for, plan_original
from lorekit.envs.textcraft.datapack import find_datapack
from lorekit.envs.textcraft.original import NS, Episode, load_original
from lorekit.envs.textcraft.published import published_lines
from lorekit.envs.textcraft.recipes import RecipeBook, display_name
from lorekit.envs.textcraft.rules import CACHE_LIMIT, MAX_COUNT, CraftRules, InvalidAction
from lorekit.envs.textcraft.sources import get_source
from lorekit.envs.textcraft.tasks import (
    SPLITS,
    build_original_task_sets,
    build_task_sets,
    episode_commands,
)

__all__ = [
    "AFTER_GOAL",
    "MAX_ACTION_CHARS",
    "MAX_COUNT",
    "MESSAGES_FILE",
    "UNCAPPED",
    "TextCraftEnv",
    "messages",
]

AFTER_GOAL = ("stop", "continue")
"""What a step after the goal was reached does: end (``stop``), or play on as the
original environment did (``continue``: ADaPT's code kept running its plan)."""

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


def _datapack_folder(source: object) -> Path:
    if isinstance(source, Path):
        return source
    if isinstance(source, str) and source not in ("datapack", "json") and Path(source).is_dir():
        return Path(source)
    return find_datapack()


class TextCraftEnv(CraftRules, TextEnv):
    """Minecraft crafting as text: see the module docstring and the manual."""

    name = "textcraft"
    execution = "inline"  # pure-Python table lookups: microseconds per call

    def __init__(
        self,
        source: str | Path | RecipeBook | Any = "minecraft-data",
        *,
        compat: bool = False,
        max_steps: int | None = 40,
        seed: int = 0,
        distractors: int = 10,
        test_size: int = 200,
        dev_size: int = 100,
        after_goal: str = "stop",
        opening_from: str | Path | None = None,
    ) -> None:
        self.stepping = StepRules(max_steps)  # the cap and the end: the core's rules
        if after_goal not in AFTER_GOAL:
            raise ValueError(
                f"after_goal: expected one of {', '.join(AFTER_GOAL)}, got {after_goal!r}"
            )
        if opening_from is not None and not compat:
            raise ValueError("opening_from: published openings need compat=true")
        self.after_goal = after_goal
        self.opening_from = Path(opening_from) if opening_from is not None else None
        if compat:
            # Compat mode always plays the original's model of the data pack:
            # the folder given as source, else the default data pack folder.
            self.original = load_original(_datapack_folder(source).resolve())
        self.book = get_source(source)
        self.compat = compat
        self.step_limit = self.stepping.step_limit
        self.max_steps = self.stepping.max_steps  # the contract's int; uncapped is UNCAPPED
        self.distractors = distractors
        data = messages()
        self._msg: Mapping[str, str] = data["compat" if compat else "friendly"]
        if compat:
            self._rules = OriginalRules(self.original, self._msg)
            self._sets = build_original_task_sets(self.original, seed, test_size, dev_size)
        else:
            self._sets = build_task_sets(self.book, seed, test_size, dev_size)
        self._by_id = {task.id: task for task in self._sets["all"]}
        self._episode: Episode | None = None
        self._forms: list[str] = list(data["action_forms"])
        self._forms_text = "; ".join(self._forms)
        self._action_cache: dict[str, str] = {}
        self._hint_cache: dict[str, str] = {}
        self._inventory: dict[str, int] = {}
        self._candidates: list[str] = []
        self._goal: str | None = None
        self._reached = False

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
        if self.compat:
            return str(messages()["manual_compat"])
        return manual_with_limit(messages(), self.step_limit)

    @property
    def inventory(self) -> Mapping[str, int]:
        """A copy of the current inventory (item or category id -> count)."""
        return dict(self._inventory)

    # -- episode ---------------------------------------------------------------

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        chosen = self._pick(task, seed)
        goal = str(chosen.data.get("item", chosen.id))
        episode_seed = seed if seed is not None else int(chosen.data.get("seed", 0))
        if self.compat:
            # A published opening belongs to the goal's place in the published run.
            place = int(chosen.data.get("seed", episode_seed))
            commands = self._original_commands(goal, episode_seed, place)
        else:
            if not self.book.is_craftable(goal):
                raise ValueError(f"task {chosen.id!r}: {goal!r} has no recipe in this book")
            commands = episode_commands(self.book, goal, episode_seed, self.distractors)
        self._inventory = {}
        self._candidates = self._list_candidates(commands)
        self._goal = goal
        self._reached = False
        self.stepping.begin()
        text = messages()["reset"].format(commands="\n".join(commands), goal=display_name(goal))
        info = {"task_id": chosen.id, "goal": goal, "seed": episode_seed, "commands": commands}
        return Observation(text, info)

    def _original_commands(self, goal: str, seed: int, place: int) -> tuple[str, ...]:
        """The original's recipe tree for ``goal`` plus distractors from its candidates.

        Which distractors the original shows, and in what order, depended on
        Python's per-process string hashing, so no run can reproduce them;
        we pick from the same candidates with ``seed``.
        """
        full = NS + goal
        if full not in self.original.by_item:
            raise ValueError(f"goal {goal!r} has no recipe in the original's recipe model")
        self._episode = episode_for(self.original, full)
        if self.opening_from is not None:
            return published_lines(self.opening_from, place, self.original, self._episode)
        pool = distractor_pool(self.original, full, seed)
        rng = random.Random(seed)
        lines = self._episode.tree_lines()
        lines += rng.sample(pool, min(len(pool), self.distractors)) if self.distractors > 0 else []
        rng.shuffle(lines)
        return tuple(lines)

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
            found = self._by_id.get(task.removeprefix(NS).replace(" ", "_"))
        if found is None:
            raise KeyError(f"unknown TextCraft task {task!r}; task ids are item ids like 'stick'")
        return found

    def step(self, action: str) -> Step:
        refused = self.stepping.refuse()
        if refused is not None:
            return refused
        assert self._goal is not None
        crafted_goal = False
        before = self._inventory.get(self._goal, 0)
        try:
            if self.compat:
                assert self._episode is not None
                raw = action if isinstance(action, str) else str(action)
                text, crafted_goal = self._rules.apply(
                    raw, self._inventory, self._episode, NS + self._goal
                )
            else:
                text = self._apply(action)
            valid = True
        except InvalidAction as failure:
            text, valid = str(failure), False
        # The original rewards the craft that outputs the goal; friendly mode
        # rewards holding it (the same thing there: a goal cannot be fetched).
        if not self.compat:
            crafted_goal = self._inventory.get(self._goal, 0) > before
        hit = crafted_goal if self.compat else self._goal in self._inventory
        first = hit and not self._reached
        self._reached = self._reached or hit
        info = {"valid": valid, "success": self._reached, "crafted_goal": crafted_goal}
        if self._reached and self.after_goal == "continue":
            # Once reached, every step reports the episode's end (the goal was
            # crafted) and says that more actions are still played.
            info["accepts_more"] = True
            self.stepping.play_on = True
        return self.stepping.settle(Step(text, 1.0 if first else 0.0, self._reached, info))

    def inventory_text(self) -> str:
        """What an ``inventory`` action would show now, without taking a step."""
        if self.compat:
            return self._rules.show_inventory(self._inventory)
        return self._show_inventory()

    def expert_action(self) -> str | None:
        if self._goal is None or self.stepping.over:
            return None
        if self.compat:
            actions = plan_original(self.original, self._inventory, self._goal)
            return actions[0] if actions else None
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
                if self.compat:
                    if self.original.fetchable(NS + name.replace(" ", "_")):
                        out[f"get {count} {name}"] = None
                    continue
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
