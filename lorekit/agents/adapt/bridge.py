"""What ADaPT needs from an environment beyond the :class:`TextEnv` contract.

Three things, all optional for an environment:

- ``describe_state``: a short text of the state that carries over from one
  sub-task to the next (TextCraft: the inventory). Sub-tasks run in the same
  episode, so the next executor must know what the last one left behind.
- ``check_subtask``: whether a sub-task is done, judged from the
  environment's state, not from the executor's say-so (TextCraft: is the item
  in the inventory, in the asked quantity?). ``None`` means "cannot tell", and
  the controller falls back to the executor's self-report.
- ``describe_setting``: the episode's opening text without its goal, so a
  sub-task's prompt can show the world (TextCraft: the crafting commands)
  with the sub-task as its goal, not the root goal. The default drops the
  lines that state the goal.

A bridge may also offer ``adapt_examples(env, examples)``, run once per
episode where the env lives, to rewrite the worked examples into that env
instance's text options (ALFWorld: its place syntax, ids, arrival lines).

Bridges are looked up by ``env.name`` (TextCraft's, ALFWorld's and WebShop's
are built in), so another environment plugs in with :func:`register_bridge` and the
controller does not change. An environment without a bridge gets
:class:`NullBridge`: no state text, no checks.

``describe_state`` and ``check_subtask`` take the plain ``TextEnv`` and run where the env lives
(``AsyncEnv.call``): on its thread, or in its process, so a bridge must be
picklable (a module-level class with picklable state) for process envs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from lorekit.agents.adapt.bridge_alfworld import AlfworldBridge
from lorekit.agents.adapt.bridge_webshop import WebShopBridge
from lorekit.envs.base import TextEnv
from lorekit.envs.textcraft.env import TextCraftEnv
from lorekit.envs.textcraft.recipes import display_name, is_category

# Matched against a stripped line without its final period. Possessive
# quantifiers, and the "using ..." tail tried only where a run of spaces
# starts (the lookbehind): linear in the line, where the lazy item followed by
# ``\s*\.?\s*$`` was cubic in a run of spaces.
_GOAL = re.compile(
    r"^(?:step\s*+\d++\s*+[:.)]\s*+)?+(?:craft|get|fetch|obtain|make|collect|gather)\s++"
    r"(?:(?P<count>\d++)\s++)?(?P<item>.+?)(?:(?<!\s)\s++(?:using|from|with)\b.*)?$",
    re.IGNORECASE,
)


@runtime_checkable
class EnvBridge(Protocol):
    """Environment-specific knowledge the ADaPT controller asks for."""

    def describe_state(self, env: TextEnv) -> str:
        """State to hand to the next sub-task; empty when there is none to tell."""
        ...

    def check_subtask(self, env: TextEnv, subtask: str) -> bool | None:
        """Done according to the environment's state; None when it cannot tell."""
        ...

    def describe_setting(self, opening: str, goal: str) -> str:
        """The opening observation without the episode's goal (text only, no env call)."""
        ...


def without_goal(opening: str, goal: str = "") -> str:
    """``opening`` minus its lines that start with ``Goal:`` or mention ``goal``.

    Sub-tasks get their own goal line; keeping the root goal next to it would
    tell the model to do two things at once.
    """
    wanted = _normalize(goal)
    kept = [
        line
        for line in opening.splitlines()
        if not line.strip().lower().startswith("goal:")
        and not (wanted and wanted in _normalize(line))
    ]
    return "\n".join(kept).strip()


def _normalize(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split())


class NullBridge:
    """For environments ADaPT knows nothing about: self-reports decide."""

    def describe_state(self, env: TextEnv) -> str:
        return ""

    def check_subtask(self, env: TextEnv, subtask: str) -> bool | None:
        return None

    def describe_setting(self, opening: str, goal: str) -> str:
        return without_goal(opening, goal)


def parse_goal(text: str) -> tuple[int, str] | None:
    """``"craft 4 oak planks using ..."`` -> ``(4, "oak planks")``; count defaults to 1."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    line = line[:-1].rstrip() if line.endswith(".") else line
    match = _GOAL.match(line)
    if match is None or len(match.group("count") or "") > 6:
        return None
    count = int(match.group("count")) if match.group("count") else 1
    return count, match.group("item").strip()


class TextCraftBridge:
    """Inventory as the carried state; "is the item held" as the sub-task check;
    the crafting commands (the opening without its ``Goal:`` line) as the setting."""

    def describe_setting(self, opening: str, goal: str) -> str:
        # Only the "Goal:" line goes: a crafting command may name the goal item.
        return without_goal(opening)

    def describe_state(self, env: TextEnv) -> str:
        if not isinstance(env, TextCraftEnv):
            return ""
        held = env.inventory
        if not held:
            return "Inventory: empty"
        return "Inventory: " + ", ".join(f"{n} {display_name(i)}" for i, n in held.items())

    def check_subtask(self, env: TextEnv, subtask: str) -> bool | None:
        if not isinstance(env, TextCraftEnv):
            return None
        goal = parse_goal(subtask)
        if goal is None:
            return None
        count, name = goal
        book = env.book
        ident = book.resolve(name)
        if ident is None and name.lower().endswith("s"):
            ident = book.resolve(name[:-1])
        if ident is None:
            return None
        held = env.inventory
        counted = {ident, *book.members(ident)} if is_category(ident) else {ident}
        # Compat mode keeps items as the player named them (the original's
        # pseudo-items, e.g. "oak_logs" from "get 2 oak logs"): count those too.
        counted.add("_".join(name.lower().split()))
        return sum(held.get(item, 0) for item in counted) >= count


BridgeFactory = Callable[[], EnvBridge]
_BRIDGES: dict[str, BridgeFactory] = {
    "textcraft": TextCraftBridge,
    "alfworld": AlfworldBridge,
    "webshop": WebShopBridge,
}


def register_bridge(env_name: str, factory: BridgeFactory) -> None:
    """Teach ADaPT about another environment (by its ``name``)."""
    _BRIDGES[env_name] = factory


def bridge_for(env_name: str) -> EnvBridge:
    """The registered bridge for the env named ``env_name``, or :class:`NullBridge`."""
    factory = _BRIDGES.get(env_name)
    return factory() if factory is not None else NullBridge()
