"""Our text description of a crafter player's situation.

An LLM cannot read crafter's 64x64 image, and a raw grid of names is hard to
use, so we describe what matters for a decision: the faced cell, the nearest
thing of each kind in the 9x7 view with its direction and walking distance,
vitals, inventory, sleep/death status and achievement progress.

``describe(..., detailed=True)`` (the env's ``observation="detailed"``) adds
what AgentKit's Crafter agent reads (Wu et al. 2024, appendix E.1): the four
cells next to the player, up to two things of each kind in view instead of
one, and what lies further to the front (the commonest materials in the half
of the view ahead). The standard text is unchanged by it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from crafter import constants

from lorekit.envs.crafter.core import ACHIEVEMENTS, CrafterCore
from lorekit.envs.crafter.data import data, text

VITALS = ("health", "food", "drink", "energy")
OBSERVATIONS = ("standard", "detailed")
"""``CrafterTextEnv(observation=...)``: the standard text, or with the surroundings
and two things of each kind (:func:`describe`)."""
VIEW = (9, 7)
_FACING = {(-1, 0): "west", (1, 0): "east", (0, -1): "north", (0, 1): "south"}


def thing_name(obj: Any) -> str:
    """A creature's or item's kind as a lower-case word (``"cow"``)."""
    name = type(obj).__name__.lower()
    for base in ("zombie", "skeleton", "player"):
        if base in name:
            return base
    if name == "plant" and getattr(obj, "ripe", False):
        return "ripe plant"
    return name


def faced(core: CrafterCore, player: Any) -> tuple[str, str]:
    """(direction word, what occupies the faced cell: creature or material)."""
    target = (player.pos[0] + player.facing[0], player.pos[1] + player.facing[1])
    material, obj = core.world[target]
    direction = _FACING[(int(player.facing[0]), int(player.facing[1]))]
    if obj is not None:
        return direction, thing_name(obj)
    return direction, str(material) if material is not None else "the edge of the world"


def _where(dx: int, dy: int) -> str:
    parts = []
    if dy:
        parts.append(f"{abs(dy)} {'north' if dy < 0 else 'south'}")
    if dx:
        parts.append(f"{abs(dx)} {'west' if dx < 0 else 'east'}")
    return ", ".join(parts) or text("here")


def nearest_in_view(core: CrafterCore, player: Any) -> list[tuple[str, int, int]]:
    """(kind, dx, dy) of the nearest thing of each kind in the 9x7 view,
    grass excepted, sorted by walking distance then name."""
    px, py = int(player.pos[0]), int(player.pos[1])
    half_w, half_h = VIEW[0] // 2, VIEW[1] // 2
    width, height = core.area
    best: dict[str, tuple[int, int, int]] = {}
    names = core.world._mat_names
    mat = core.world._mat_map
    x0, x1 = max(px - half_w, 0), min(px + half_w + 1, width)
    y0, y1 = max(py - half_h, 0), min(py + half_h + 1, height)
    block = mat[x0:x1, y0:y1].tolist()
    for i, column in enumerate(block):
        dx = x0 + i - px
        for j, code in enumerate(column):
            dy = y0 + j - py
            kind = names[code]
            if kind == "grass" or (dx == 0 and dy == 0):
                continue
            steps = abs(dx) + abs(dy)
            if kind not in best or steps < best[kind][0]:
                best[kind] = (steps, dx, dy)
    for obj in core.world.objects:
        if obj is player:
            continue
        dx, dy = int(obj.pos[0]) - px, int(obj.pos[1]) - py
        if abs(dx) > half_w or abs(dy) > half_h:
            continue
        kind = thing_name(obj)
        steps = abs(dx) + abs(dy)
        if kind not in best or steps < best[kind][0]:
            best[kind] = (steps, dx, dy)
    ordered = sorted(best.items(), key=lambda kv: (kv[1][0], kv[0]))
    return [(kind, dx, dy) for kind, (_, dx, dy) in ordered]


def things_in_view(core: CrafterCore, player: Any, per_kind: int = 2) -> list[tuple[str, int, int]]:
    """(kind, dx, dy) of up to ``per_kind`` nearest things of each kind in the 9x7
    view, grass excepted, sorted by walking distance then name (ties keep the
    scan order: materials column by column, then creatures)."""
    px, py = int(player.pos[0]), int(player.pos[1])
    half_w, half_h = VIEW[0] // 2, VIEW[1] // 2
    width, height = core.area
    names = core.world._mat_names
    found: list[tuple[int, str, int, int]] = []
    x0, x1 = max(px - half_w, 0), min(px + half_w + 1, width)
    y0, y1 = max(py - half_h, 0), min(py + half_h + 1, height)
    for i, column in enumerate(core.world._mat_map[x0:x1, y0:y1].tolist()):
        for j, code in enumerate(column):
            dx, dy = x0 + i - px, y0 + j - py
            kind = names[code]
            if kind != "grass" and (dx or dy):
                found.append((abs(dx) + abs(dy), kind, dx, dy))
    for obj in core.world.objects:
        dx, dy = int(obj.pos[0]) - px, int(obj.pos[1]) - py
        if obj is not player and abs(dx) <= half_w and abs(dy) <= half_h:
            found.append((abs(dx) + abs(dy), thing_name(obj), dx, dy))
    kept: dict[str, int] = {}
    out = []
    for steps, kind, dx, dy in sorted(found, key=lambda f: f[0]):
        if kept.get(kind, 0) < per_kind:
            kept[kind] = kept.get(kind, 0) + 1
            out.append((steps, kind, dx, dy))
    out.sort(key=lambda f: (f[0], f[1]))
    return [(kind, dx, dy) for _, kind, dx, dy in out]


def surroundings(core: CrafterCore, player: Any) -> list[tuple[str, str]]:
    """(direction, what is there) for the four cells next to the player:
    a creature if one stands there, else the material."""
    out = []
    for (dx, dy), direction in (
        ((0, -1), "north"),
        ((0, 1), "south"),
        ((-1, 0), "west"),
        ((1, 0), "east"),
    ):
        material, obj = core.world[(int(player.pos[0]) + dx, int(player.pos[1]) + dy)]
        if obj is not None:
            what = thing_name(obj)
        else:
            what = str(material) if material is not None else "the edge of the world"
        out.append((direction, what))
    return out


def further_ahead(core: CrafterCore, player: Any, top: int = 3) -> tuple[str, list[str]]:
    """The facing direction and the ``top`` most common materials in the half of the
    9x7 view that lies ahead of the player ("12 grass", ...), most common first."""
    fx, fy = int(player.facing[0]), int(player.facing[1])
    px, py = int(player.pos[0]), int(player.pos[1])
    half_w, half_h = VIEW[0] // 2, VIEW[1] // 2
    width, height = core.area
    names = core.world._mat_names
    counts: dict[str, int] = {}
    for x in range(max(px - half_w, 0), min(px + half_w + 1, width)):
        for y in range(max(py - half_h, 0), min(py + half_h + 1, height)):
            ahead = (x - px) * fx > 0 if fx else (y - py) * fy > 0
            if ahead:
                kind = str(names[core.world._mat_map[x, y]])
                counts[kind] = counts.get(kind, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return _FACING.get((fx, fy), "south"), [f"{n} {kind}" for kind, n in ranked]


def _names(items: Iterable[str]) -> str:
    listed = ", ".join(items)
    return listed or text("none")


def describe(core: CrafterCore, index: int = 0, *, detailed: bool = False) -> str:
    """The full text observation of player ``index`` (``detailed``: see the module
    docstring)."""
    player = core.players[index]
    daylight = float(core.world.daylight)
    lines = [
        text("header").format(
            step=core.step_count,
            length=core.length or "unlimited",
            time="day" if daylight >= 0.5 else "night",
            daylight=daylight,
        )
    ]
    direction, thing = faced(core, player)
    lines.append(text("facing").format(direction=direction, thing=thing))
    inv = player.inventory
    lines.append(text("vitals").format(**{k: inv[k] for k in VITALS}))
    items = [f"{name} {count}" for name, count in inv.items() if name not in VITALS and count > 0]
    lines.append(
        text("inventory").format(items=", ".join(items)) if items else text("inventory_empty")
    )
    if detailed:
        around = ", ".join(f"{d}: {what}" for d, what in surroundings(core, player))
        lines.append(text("around").format(cells=around))
        lines.append(text("view_two").format(width=VIEW[0], height=VIEW[1]))
        seen = things_in_view(core, player, 2)
    else:
        lines.append(text("view").format(width=VIEW[0], height=VIEW[1]))
        seen = nearest_in_view(core, player)
    if not seen:
        lines.append(text("view_none"))
    for kind, dx, dy in seen:
        lines.append(
            text("view_item").format(thing=kind, where=_where(dx, dy), steps=abs(dx) + abs(dy))
        )
    if detailed:
        direction, ahead = further_ahead(core, player)
        lines.append(text("further").format(direction=direction, things=_names(ahead)))
    if not core.alive(player):
        lines.append(text("status_dead"))
    elif player.sleeping:
        # crafter wakes a sleeper at full energy in its next update, and then
        # carries out the chosen action (objects.py, Player.update)
        rested = player.inventory["energy"] >= constants.items["energy"]["max"]
        lines.append(text("status_rested" if rested else "status_sleeping"))
    else:
        lines.append(text("status_awake"))
    unlocked = [a for a in ACHIEVEMENTS if player.achievements[a] > 0]
    lines.append(text("unlocked").format(count=len(unlocked), names=_names(unlocked)))
    lines.append(
        text("remaining").format(names=_names(a for a in ACHIEVEMENTS if a not in unlocked))
    )
    return "\n".join(lines)


def canonical_actions() -> dict[str, str]:
    """Readable action name -> crafter action name, in crafter's order."""
    mapping: dict[str, str] = dict(data()["actions"])
    assert sorted(mapping.values()) == sorted(constants.actions)
    return mapping
