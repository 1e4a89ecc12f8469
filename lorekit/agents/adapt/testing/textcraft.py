"""Scripted TextCraft models of controlled capability, for the ADaPT study and tests.

They read the prompt the way a model would (the task line, the state line,
the crafting commands, their own earlier turns, lessons in memory) and act
with limited competence. They are not told which method calls them; whatever
difference the methods show comes from how each method uses them.

- Executor of capability ``k``: knows Minecraft recipes (the recipe book), but
  can only keep ``k`` crafting levels in mind. Below that it assumes an item
  can be fetched, tries ``get`` on it, sees the error, and says ``failed``.
  So it finishes exactly the tasks whose remaining recipe depth, from what it
  holds now, is at most ``k``. A lesson naming an item ("X cannot be fetched;
  it must be crafted") lets it expand that item one level more.
  ``noise`` is the chance, per turn, that it declares ``completed`` too early:
  an over-confident executor, seeded by the prompt so runs repeat. A draw at
  temperature > 0 with another ``sample`` index (a resampled Try-Again
  trial) is another draw; wrap the model in :class:`SimulatedLLM` for that.
- Reflection (the same model asked to reflect): names the items it wrongly
  tried to fetch, or admits stopping too early.
- Planner: follows the contract its prompt states. Asked for a short
  one-level plan (ADaPT), it splits "obtain N X" into one step per missing
  ingredient (an OR of two kinds for a category such as planks) plus the
  final craft, joined by AND. Asked for a complete plan (Plan-and-Execute),
  it lists every craft the goal needs, ingredients first, one per step, so
  each step can be done without more planning. Either way it keeps to the
  "at most N steps" it is given.
"""

from __future__ import annotations

import math
import random
import re
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence

from lorekit.agents.adapt.bridge import parse_goal
from lorekit.envs.textcraft.recipes import RecipeBook, display_name, is_category
from lorekit.llm.base import DEFAULT_PARAMS, Completion, Message, MessageLike, RequestParams
from lorekit.llm.scripted import ScriptedLLM

ModelFn = Callable[..., str]
"""``fn(messages)`` or ``fn(messages, draw)``: an answer to the messages (for that draw)."""
_TASK = re.compile(r"^(?:Goal|Your task now|Task):\s*(.+)$", re.M)
_MOST = re.compile(r"at most (\d+) steps", re.I)
_COMPLETE = re.compile(r"\bcomplete plan\b", re.I)
_STATE = re.compile(r"^Current state:\s*Inventory:\s*(.*)$", re.M)
_LESSON = re.compile(r"([a-z][a-z ]*?) cannot be fetched; it must be crafted", re.I)
_NOT_BASE = re.compile(
    r"^(?:Observation:\s*)?(.+?) is not a base item, so it cannot be fetched", re.M
)
_OK = ("Got ", "Crafted ", "Inventory:")


def resolve(book: RecipeBook, name: str) -> str | None:
    """Item id for a name a model wrote, tolerating a plural ``s``."""
    ident = book.resolve(name)
    if ident is None and name.lower().endswith("s"):
        ident = book.resolve(name[:-1])
    return ident


def read_inventory(book: RecipeBook, text: str) -> dict[str, int]:
    """``"Current state: Inventory: 4 oak planks, 1 stick"`` -> ids and counts."""
    match = _STATE.search(text)
    held: dict[str, int] = {}
    if match is None or match.group(1).strip().lower() in ("", "empty"):
        return held
    for part in match.group(1).split(","):
        count, _, name = part.strip().partition(" ")
        ident = resolve(book, name)
        if count.isdigit() and ident is not None:
            held[ident] = held.get(ident, 0) + int(count)
    return held


def read_task(book: RecipeBook, text: str) -> tuple[int, str] | None:
    """(count, item id) of the (last) task line, or None when it names no known item."""
    found = _TASK.findall(text)
    goal = parse_goal(found[-1]) if found else None
    if goal is None:
        return None
    ident = resolve(book, goal[1])
    return (goal[0], ident) if ident is not None else None


class _CappedPlanner:
    """The oracle's depth-first plan, with items below ``levels`` assumed fetchable."""

    def __init__(
        self, book: RecipeBook, held: Mapping[str, int], levels: int, known: Collection[str]
    ) -> None:
        self.book = book
        self.inv = dict(held)
        self.levels = levels
        self.known = known
        self.actions: list[str] = []

    def have(self, item: str) -> int:
        if is_category(item):
            return self.inv.get(item, 0) + sum(self.inv.get(m, 0) for m in self.book.members(item))
        return self.inv.get(item, 0)

    def ensure(self, item: str, quantity: int, level: int) -> None:
        have = self.inv.get(item, 0)
        if have >= quantity:
            return
        recipe = self.book.best_recipe(item)
        beyond = level >= self.levels and item not in self.known
        if recipe is None or beyond:
            self.actions.append(f"get {quantity - have} {display_name(item)}")
            self.inv[item] = quantity
            return
        batches = math.ceil((quantity - have) / recipe.count)
        parts = []
        for ingredient, count in recipe.ingredients:
            need = count * batches
            concrete = self.choose(ingredient, need)
            self.ensure(concrete, need, level + 1)
            self.inv[concrete] -= need
            parts.append(f"{need} {display_name(concrete)}")
        made = recipe.count * batches
        self.actions.append(f"craft {made} {display_name(item)} using {', '.join(parts)}")
        self.inv[item] = self.inv.get(item, 0) + made

    def choose(self, ingredient: str, need: int) -> str:
        if not is_category(ingredient):
            return ingredient
        for member in self.book.members(ingredient):
            if self.inv.get(member, 0) >= need:
                return member
        return self.book.preferred_member(ingredient)


def capped_plan(
    book: RecipeBook,
    held: Mapping[str, int],
    item: str,
    count: int,
    levels: int,
    known: Collection[str] = (),
) -> list[str]:
    """What an executor of capability ``levels`` would do to hold ``count`` ``item``."""
    planner = _CappedPlanner(book, held, levels, known)
    if is_category(item):
        if planner.have(item) >= count:
            return []
        item = planner.choose(item, count)
    planner.ensure(item, count, 0)
    return planner.actions


def _answer(thought: str, action: str) -> str:
    return f"Thought: {thought}\nAction: {action}"


def textcraft_executor(
    book: RecipeBook, *, capability: int, noise: float = 0.0, seed: int = 0
) -> ModelFn:
    """The executor model (it also answers reflection requests); see the module docstring."""
    if capability < 0 or not 0.0 <= noise <= 1.0:
        raise ValueError(f"need capability >= 0 and 0 <= noise <= 1, got {capability}, {noise}")

    def act(messages: tuple[Message, ...], draw: int = 0) -> str:
        if "Reflection:" in messages[0].content:
            return reflect(messages)
        first = messages[1].content
        goal = read_task(book, first)
        if goal is None:
            return _answer("I do not know what item this task asks for.", "failed")
        known = {i for n in _LESSON.findall(first) if (i := resolve(book, n)) is not None}
        plan = capped_plan(book, read_inventory(book, first), goal[1], goal[0], capability, known)
        taken = [m for m in messages[2:] if m.role == "assistant"]
        t = len(taken)
        last = messages[-1].content if t else ""
        if t and not last.removeprefix("Observation: ").startswith(_OK):
            return _answer("That did not work and I see no other way.", "failed")
        if t >= len(plan):
            return _answer("The task is done.", "completed")
        key = f"{seed}|{t}|{first}" if not draw else f"{seed}|{draw}|{t}|{first}"
        if t and random.Random(zlib.crc32(key.encode())).random() < noise:
            return _answer("That should be enough.", "completed")
        return _answer(f"Next I {plan[t].split(' using ')[0]}.", plan[t])

    def reflect(messages: tuple[Message, ...]) -> str:
        items = list(dict.fromkeys(_NOT_BASE.findall(messages[-1].content)))
        if items:
            lesson = " ".join(f"{i} cannot be fetched; it must be crafted first." for i in items)
            return f"Reflection: {lesson}"
        return "Reflection: I stopped too early; I must finish every craft before saying completed."

    return act


class SimulatedLLM(ScriptedLLM):
    """A scripted model whose answer function also sees which draw is asked for.

    At temperature 0 every call is draw 0 (the same prompt, the same answer);
    at temperature > 0 the call's ``sample`` index is the draw, so resampling
    (Try-Again's later trials) gives another answer, as a real model would.
    The draw is read synchronously before the answer function runs, so one
    instance can serve concurrent episodes.
    """

    def __init__(self, fn: ModelFn, *, model: str = "simulated") -> None:
        self._draw = 0
        super().__init__(fn=lambda messages: fn(messages, self._draw), model=model)

    async def complete(
        self, messages: Sequence[MessageLike] | str, params: RequestParams | None = None
    ) -> Completion:
        params = params if params is not None else DEFAULT_PARAMS
        self._draw = params.sample if params.temperature > 0 else 0
        return await super().complete(messages, params=params)


def textcraft_planner(book: RecipeBook) -> ModelFn:
    """The planner model; see the module docstring."""

    def plan(messages: tuple[Message, ...], draw: int = 0) -> str:
        prompt = messages[1].content
        goal = read_task(book, prompt)
        if goal is None:
            return "I cannot tell what this task asks for."
        count, item = goal
        held = read_inventory(book, prompt)
        most = _MOST.search(prompt)
        limit = int(most.group(1)) if most else None
        if is_category(item):
            item = book.preferred_member(item)
        if book.best_recipe(item) is None:
            return f"Step 1: get {count} {display_name(item)}\nExecution order: Step 1"
        if _COMPLETE.search(prompt):
            return _complete_plan(book, held, item, count, limit)
        return _one_level_plan(book, held, item, count, limit)

    return plan


def _render(groups: list[list[str]]) -> str:
    """Steps from groups of alternatives: a group of two is an OR; groups are ANDed."""
    lines: list[str] = []
    order: list[str] = []
    for group in groups:
        refs = []
        for step in group:
            lines.append(f"Step {len(lines) + 1}: {step}")
            refs.append(f"Step {len(lines)}")
        order.append(refs[0] if len(refs) == 1 else "(" + " OR ".join(refs) + ")")
    return "\n".join([*lines, f"Execution order: {' AND '.join(order)}"])


def _one_level_plan(
    book: RecipeBook, held: Mapping[str, int], item: str, count: int, limit: int | None
) -> str:
    """ADaPT's contract: the missing ingredients of one recipe, then that recipe."""
    recipe = book.best_recipe(item)
    assert recipe is not None
    batches = math.ceil(max(1, count - held.get(item, 0)) / recipe.count)
    groups: list[list[str]] = []
    using = []
    for ingredient, per in recipe.ingredients:
        need = per * batches
        using.append(f"{need} {display_name(ingredient)}")
        kinds = _kinds(book, ingredient)
        if sum(held.get(k, 0) for k in kinds) >= need:
            continue
        groups.append(
            [
                f"{'craft' if book.is_craftable(k) else 'get'} {need} {display_name(k)}"
                for k in kinds[:2]
            ]
        )
    groups.append([f"craft {recipe.count * batches} {display_name(item)} using {', '.join(using)}"])
    while limit is not None and sum(map(len, groups)) > limit:
        wide = [g for g in groups if len(g) > 1]
        if wide:
            wide[-1].pop()  # first drop alternatives,
        else:
            groups.pop(0)  # then leave ingredients to the final craft's own step
    return _render(groups)


def _complete_plan(
    book: RecipeBook, held: Mapping[str, int], item: str, count: int, limit: int | None
) -> str:
    """Plan-and-Execute's contract: every craft the goal needs, ingredients first.

    Base ingredients are fetched inside the step that uses them. Past the
    step limit, the deepest crafts are left to the steps that need them.
    """
    everything = capped_plan(book, held, item, count, levels=len(book.items) + 1)
    crafts = [a for a in everything if a.startswith("craft ")]
    if limit is not None and len(crafts) > limit:
        crafts = crafts[-limit:]
    return _render([[c] for c in crafts])


def _kinds(book: RecipeBook, ingredient: str) -> list[str]:
    """Concrete items that satisfy an ingredient, easiest first."""
    if not is_category(ingredient):
        return [ingredient]
    base = book.base_member(ingredient)
    if base is not None:
        return [base]
    members = book.members(ingredient)
    return sorted(members, key=lambda m: (book.depth(m), members.index(m)))
