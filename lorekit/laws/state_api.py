"""The state a reward predicate sees, and the words that describe it to a model.

A law-based reward decides, before an action runs, whether the action's
preconditions hold. Predicates are model-written code, so they get a small
plain-data view rather than crafter's live objects: nothing to mutate, nothing
to walk into, the same shape whether it comes from a running game
(:func:`state_from_core`) or from a stored record (:func:`state_from_record`),
so a predicate checked on records behaves the same in training.

The view follows the records: the inventory (vitals, tools, materials in one
mapping, as crafter keeps them), the faced cell (a creature's kind over the
material under it; ``"ripe plant"`` for a plant ready to eat) and the names in
the 3x3 area around the player (where crafter looks for a table or furnace).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from crafter import constants

from lorekit import yamlio
from lorekit.envs.crafter.core import CrafterCore
from lorekit.envs.crafter.textobs import faced, thing_name

INVENTORY_KEYS: tuple[str, ...] = tuple(constants.items)
MATERIAL_NAMES: tuple[str, ...] = tuple(constants.materials)
CREATURE_NAMES: tuple[str, ...] = ("cow", "zombie", "skeleton", "plant", "ripe plant", "arrow")
EDGE = "edge"


@dataclass(frozen=True, slots=True)
class LawState:
    """What a predicate may read; see the module docstring.

    ``nearby`` excludes the player's own cell; cells beyond the world's border
    are ``"edge"``. ``faced`` is ``"edge"`` there too.
    """

    inventory: Mapping[str, int]
    faced: str
    nearby: frozenset[str]
    sleeping: bool = False

    def describe(self) -> str:
        """One line for feedback to a model (inventory zeros left out)."""
        held = ", ".join(f"{k}={v}" for k, v in self.inventory.items() if v)
        near = ", ".join(sorted(self.nearby)) or "nothing"
        sleep = ", sleeping" if self.sleeping else ""
        return f"inventory {{{held}}}, faced {self.faced!r}, nearby [{near}]{sleep}"


def state_from_core(core: CrafterCore, index: int = 0) -> LawState:
    """The view of player ``index`` in a running game (about 20 µs)."""
    player = core.players[index]
    _, thing = faced(core, player)
    if thing == "the edge of the world":
        thing = EDGE
    px, py = int(player.pos[0]), int(player.pos[1])
    names = set()
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            if dx or dy:
                material, obj = core.world[(px + dx, py + dy)]
                if obj is not None:
                    names.add(thing_name(obj))
                else:
                    names.add(str(material) if material is not None else EDGE)
    inventory = {k: int(v) for k, v in player.inventory.items()}
    return LawState(inventory, thing, frozenset(names), bool(player.sleeping))


def state_from_record(state: Mapping[str, Any]) -> LawState:
    """The view of one stored state.

    Accepts the laws record format (``attributes``/``tools``/``materials``,
    ``face``, ``nearby`` as 3x3 rows) and
    :func:`lorekit.laws.transitions.structured_state`'s (``faced``,
    ``neighbourhood``); raises ``ValueError`` naming a missing key.
    """
    try:
        inventory = {k: 0 for k in INVENTORY_KEYS}
        for part in ("attributes", "tools", "materials"):
            inventory.update({str(k): int(v) for k, v in state[part].items()})
        face = state["face"] if "face" in state else state["faced"]
        rows = state["nearby"] if "nearby" in state else state["neighbourhood"]
    except KeyError as exc:
        raise ValueError(
            f"a record state lacks {exc.args[0]!r}; expected the laws record format"
        ) from None
    names = set()
    for i, row in enumerate(rows):
        for j, name in enumerate(row):
            if (i, j) != (len(rows) // 2, len(row) // 2):
                names.add(str(name))
    face = str(face)
    return LawState(
        inventory,
        EDGE if face == "the edge of the world" else face,
        frozenset(names),
        bool(state.get("sleeping", False)),
    )


@functools.cache
def _texts() -> dict[str, str]:
    text = resources.files("lorekit.laws").joinpath("prompts", "rewarder.yaml").read_text()
    data = yamlio.safe_load(text, source="lorekit/laws/prompts/rewarder.yaml")
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ValueError("lorekit/laws/prompts/rewarder.yaml must map names to strings")
    return data


def prompt_text(name: str) -> str:
    """One template of ``prompts/rewarder.yaml`` (the rewarder's words)."""
    try:
        return _texts()[name]
    except KeyError:
        raise KeyError(f"prompts/rewarder.yaml has no {name!r} template") from None


def describe_state_api() -> str:
    """The state API in words, for the model that writes predicates."""
    return (
        prompt_text("state_api")
        .format(
            inventory=", ".join(INVENTORY_KEYS),
            materials=", ".join(MATERIAL_NAMES),
            creatures=", ".join(CREATURE_NAMES),
            edge=EDGE,
        )
        .strip()
    )
