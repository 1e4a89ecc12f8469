"""What each Crafter action needs, one line per action, generated from crafter's own data.

SPRING's context (studied from the crafter paper) lists, for every action, the
conditions under which it works: "nearby table; wood and stone in inventory"
for a stone pickaxe. The ``paper`` context carries the same lines. They are
written here from crafter's installed ``data.yaml`` (through
:class:`~lorekit.envs.crafter.rules.CrafterRules` and ``crafter.constants``),
never typed by hand, so they match the game the agent plays. Like the paper's
table, they name materials but not amounts: the laws paper notes that the
crafter paper leaves the recipes' quantities out, and so do these lines.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from crafter import constants

from lorekit.envs.crafter.rules import CrafterRules, Rule
from lorekit.envs.crafter.textobs import canonical_actions

_DIRECTIONS = {"move_left": "west", "move_right": "east", "move_up": "north", "move_down": "south"}


def _names(items: Iterable[str]) -> str:
    """``a``, ``a and b``, ``a, b and c`` with underscores read as spaces."""
    words = [i.replace("_", " ") for i in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _line(rule: Rule) -> str:
    parts = []
    if rule.nearby:
        parts.append(f"a {_names(rule.nearby)} nearby")
    if rule.requires:
        parts.append(f"{_names(rule.requires)} in the inventory")
    return "; ".join(parts) or "nothing"


@functools.cache
def requirement_lines() -> tuple[str, ...]:
    """``name: what it needs`` for every action of the text env, in crafter's order."""
    rules = {r.action: r for r in CrafterRules().rules if r.action != "do"}
    walkable = _names(constants.walkable)
    full = int(constants.items["energy"]["max"])
    lines = []
    for readable, crafter_name in canonical_actions().items():
        if crafter_name == "noop":
            need = "nothing (it does nothing)"
        elif crafter_name in _DIRECTIONS:
            need = f"free ground ({walkable}) to the {_DIRECTIONS[crafter_name]}"
        elif crafter_name == "do":
            need = "facing a material or a creature; some materials need the right tool"
        elif crafter_name == "sleep":
            sleep = rules["sleep"]
            need = f"{_names(sleep.below)} below its maximum ({full})"
        else:
            need = _line(rules[crafter_name])
        lines.append(f"{readable}: {need}")
    return tuple(lines)
