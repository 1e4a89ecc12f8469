"""Reading Crafter's text observation back: one step toward the nearest thing of a kind.

The text observation (:mod:`lorekit.envs.crafter.textobs`) names what the
player faces (``You face east: tree.``) and, per kind, the offset of the
nearest one (``tree: 2 east, 1 north (3 steps)``). Scripted stand-ins for
models (SPRING's and AgentKit's test models) walk by it; so may any simple
controller. It walks straight lines along the longer axis and does not go
around obstacles (a blocked step only turns the player, which is how one comes
to face a tree).
"""

from __future__ import annotations

import re

_FACE = re.compile(r"You face (\w+): ([\w ]+)\.")
_SEEN = r"^\s*{kind}: (.*?)\(\d+ steps?\)"
_PART = re.compile(r"(\d+) (north|south|east|west)")
_STEP = {"north": (0, -1), "south": (0, 1), "west": (-1, 0), "east": (1, 0)}


def step_toward(observation: str, seek: str = "tree") -> str:
    """``do`` when facing ``seek``, else a move toward the nearest one, else west."""
    face = _FACE.search(observation)
    if face and face.group(2).strip() == seek:
        return "do"
    seen = re.search(_SEEN.format(kind=re.escape(seek)), observation, re.MULTILINE)
    if seen is None:
        return "move_west"
    dx = dy = 0
    for count, direction in _PART.findall(seen.group(1)):
        sx, sy = _STEP[direction]
        dx, dy = dx + sx * int(count), dy + sy * int(count)
    if abs(dx) >= abs(dy) and dx:
        return "move_east" if dx > 0 else "move_west"
    return "move_south" if dy > 0 else "move_north"
