"""Structured interaction records: ``(state, action, next_state, success)``.

Law extraction learns from what an action did in what situation, so a state
here is the part of crafter that rules mention: vitals (attributes), tools,
materials, what is faced, the 3x3 neighbourhood (where crafter looks for
tables and furnaces) and whether the player sleeps. Everything is copied into
plain JSON types, so records never alias crafter's mutable arrays.

:func:`structured_state` is what every law record is cut from (the paper's
format in :mod:`lorekit.laws.record_format` keeps part of it); :class:`Record`
is the plain step record of :func:`lorekit.laws.collector.collect`. Only the
laws read states this way, so they live with the laws, not with the env.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from lorekit.envs.crafter.core import ACHIEVEMENTS, CrafterCore
from lorekit.envs.crafter.expanded import DO_TARGETS
from lorekit.envs.crafter.textobs import faced, thing_name

ATTRIBUTES = ("health", "food", "drink", "energy")
TOOLS = ("wood_pickaxe", "stone_pickaxe", "iron_pickaxe", "wood_sword", "stone_sword", "iron_sword")
MATERIALS = ("sapling", "wood", "stone", "coal", "iron", "diamond")
_ACHIEVEMENT_OF_TARGET = {target: name for name, target in DO_TARGETS.items()}


def structured_state(core: CrafterCore, index: int = 0) -> dict[str, Any]:
    """A JSON-ready snapshot of player ``index``'s situation."""
    player = core.players[index]
    inv = player.inventory
    direction, thing = faced(core, player)
    px, py = int(player.pos[0]), int(player.pos[1])
    rows = []
    for dy in (-1, 0, 1):
        row = []
        for dx in (-1, 0, 1):
            material, obj = core.world[(px + dx, py + dy)]
            if dx == 0 and dy == 0:
                row.append("player")
            elif obj is not None:
                row.append(thing_name(obj))
            else:
                row.append(str(material) if material is not None else "edge")
        rows.append(row)
    return {
        "step": core.step_count,
        "position": [px, py],
        "attributes": {k: int(inv[k]) for k in ATTRIBUTES},
        "tools": {k: int(inv[k]) for k in TOOLS},
        "materials": {k: int(inv[k]) for k in MATERIALS},
        "facing": direction,
        "faced": thing,
        "neighbourhood": rows,
        "sleeping": bool(player.sleeping),
        "achievements": {k: int(player.achievements[k]) for k in ACHIEVEMENTS},
    }


def targeted_achievement(action: str, state: Mapping[str, Any]) -> str | None:
    """The achievement an action attempts in ``state`` (None: moves, noop)."""
    if action == "do":
        faced_thing = str(state["faced"])
        return _ACHIEVEMENT_OF_TARGET.get("plant" if faced_thing == "ripe plant" else faced_thing)
    if action.startswith(("place_", "make_")):
        return action
    if action == "sleep":
        return "wake_up"
    return None


@dataclass(frozen=True)
class Record:
    """One step: what was tried, in what state, and whether it worked.

    ``success`` is true when the targeted achievement's counter went up (for
    moves: when the position changed; for noop: always). ``unlocked`` lists
    every achievement whose counter went up in this step, targeted or not.
    """

    state: Mapping[str, Any]
    action: str
    next_state: Mapping[str, Any]
    success: bool
    achievement: str | None
    unlocked: tuple[str, ...] = ()
    episode: int = 0
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "action": self.action,
            "next_state": self.next_state,
            "success": self.success,
            "achievement": self.achievement,
            "unlocked": list(self.unlocked),
            "episode": self.episode,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Record:
        return cls(
            state=raw["state"],
            action=str(raw["action"]),
            next_state=raw["next_state"],
            success=bool(raw["success"]),
            achievement=raw.get("achievement"),
            unlocked=tuple(raw.get("unlocked", ())),
            episode=int(raw.get("episode", 0)),
            meta=raw.get("meta", {}),
        )


def make_record(
    state: Mapping[str, Any], action: str, next_state: Mapping[str, Any], episode: int = 0
) -> Record:
    """Judge one transition by crafter's achievement counters."""
    before, after = state["achievements"], next_state["achievements"]
    unlocked = tuple(a for a in ACHIEVEMENTS if after[a] > before[a])
    target = targeted_achievement(action, state)
    if target is not None:
        success = target in unlocked
    elif action.startswith("move_"):
        success = state["position"] != next_state["position"]
    else:
        success = True
    return Record(state, action, next_state, success, target, unlocked, episode)


class JsonRecord(Protocol):
    """Anything that turns itself into one JSON object (a record of any format)."""

    def to_json(self) -> dict[str, Any]: ...


def write_jsonl(records: Iterable[JsonRecord], path: str | Path) -> int:
    """Write records one JSON object per line; returns how many."""
    count = 0
    with Path(path).open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record.to_json(), sort_keys=True) + "\n")
            count += 1
    return count


def read_jsonl(path: str | Path) -> Iterator[Record]:
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield Record.from_json(json.loads(line))
