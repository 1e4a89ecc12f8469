"""Reading an ALFWorld sub-task ("clean the mug with the sinkbasin") as a condition on the state.

ADaPT's planner writes sub-tasks in plain words, and the controller wants to
know whether one is done without taking the executor's word for it. This
module turns the common shapes of such sentences into a :class:`Condition`
that a :class:`~lorekit.envs.alfworld.world.World` either meets or not:

- take: "find and take a mug", "take mug 3 from cabinet 5" -> holds a (that) mug;
- find: "find a desklamp" -> holds one, or stands where one is in view;
- change: "clean the mug with the sinkbasin", "heat the egg" -> the held mug is
  clean (any mug, when none is held);
- place: "put the clean mug in/on the desk", "move mug 1 to desk 1",
  "put two soapbottle in countertop" -> that many (clean) mugs in one desk;
- look: "use the desklamp", "look at the bowl under the desklamp" -> a lamp is
  on where the agent stands (and the bowl is held);
- go / open: "go to the fridge", "open drawer 2".

Names come from the world itself (its object and receptacle types), so a
sentence about a thing the room does not have reads as "cannot tell"
(``None``), never as a guess. Only the words matter: both place syntaxes
("move X to Y", "put X in/on Y") and AutoManual's ``mug_1`` ids read the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lorekit.envs.alfworld.world import World

_STEP_PREFIX = re.compile(r"^\s*(?:step\s*\d+\s*[:.)]\s*)", re.I)
_ID = re.compile(r"\b([a-z]+)_(\d+)\b")
_NON_WORD = re.compile(r"[^a-z0-9 ]+")

ADJECTIVES = {
    "clean": "clean",
    "cleaned": "clean",
    "washed": "clean",
    "rinsed": "clean",
    "hot": "hot",
    "heated": "hot",
    "warm": "hot",
    "warmed": "hot",
    "cool": "cool",
    "cooled": "cool",
    "cold": "cool",
    "chilled": "cool",
}
"""Words before an object that say which state it must be in."""
CHANGE_VERBS = {
    "clean": "clean",
    "wash": "clean",
    "rinse": "clean",
    "heat": "hot",
    "warm": "hot",
    "cool": "cool",
    "chill": "cool",
    "refrigerate": "cool",
}
"""Verbs that ask for a state change ("clean" is both: context decides)."""
PLACE_VERBS = frozenset({"put", "place", "move", "set", "drop", "leave", "store", "insert"})
TAKE_VERBS = frozenset(
    {"take", "pick", "grab", "get", "fetch", "obtain", "hold", "carry", "retrieve", "collect"}
)
FIND_VERBS = frozenset({"find", "locate", "search", "seek", "spot"})
LOOK_VERBS = frozenset({"look", "examine", "use", "turn", "switch", "light", "toggle"})
TWO = frozenset({"two", "both", "second", "another"})
DETERMINERS = frozenset({"a", "an", "the", "some", "another", "two", "second", "both"})
ALIASES = {"sink": "sinkbasin", "stove": "stoveburner", "bathtub": "bathtubbasin"}
"""Short names people use for receptacle types."""


@dataclass(frozen=True)
class Mention:
    """A thing named in the sentence: its type, its full name if numbered, where."""

    kind: str  # "obj" or "recep"
    type: str
    name: str | None
    at: int


@dataclass(frozen=True)
class Condition:
    """What a sub-task asks of the state; ``kind`` is one of
    take/find/change/place/look/lamp/go/open."""

    kind: str
    obj: Mention | None = None
    recep: Mention | None = None
    states: tuple[str, ...] = ()
    count: int = 1

    def holds(self, world: World) -> bool:
        return _CHECKS[self.kind](self, world)


def normalize(text: str) -> str:
    """Lower case, ``mug_1`` as ``mug 1``, "in/on" as "in", no punctuation, no "Step 1:"."""
    low = _STEP_PREFIX.sub("", text.strip().splitlines()[0] if text.strip() else "").lower()
    low = _ID.sub(r"\1 \2", low).replace("in/on", "in")
    return " ".join(_NON_WORD.sub(" ", low).split())


def parse_condition(text: str, world: World) -> Condition | None:
    """The condition ``text`` asks for in this room, or None when it cannot be read."""
    words = normalize(text).split()
    mentions = _mentions(words, world)
    if any(
        m.name and m.name not in world.obj_type and m.name not in world.recep_type for m in mentions
    ):
        return None  # "mug 7" in a room without one: a name the planner made up
    objs = [m for m in mentions if m.kind == "obj"]
    receps = [m for m in mentions if m.kind == "recep"]
    lamps = [m for m in objs if _is_lamp(m.type, world)]
    things = [m for m in objs if m not in lamps]
    said = set(words)
    if lamps and said & (LOOK_VERBS | {"under"}):
        if things:
            return Condition("look", obj=things[0], recep=lamps[0])
        return Condition("lamp", obj=lamps[0])
    if said & PLACE_VERBS and objs and receps and receps[-1].at > objs[0].at:
        count = 2 if said & TWO else 1
        states = _states(words, objs[0])
        return Condition("place", obj=objs[0], recep=receps[-1], states=states, count=count)
    target = things[0] if things else (objs[0] if objs else None)
    if target is not None:
        verb_states = _verb_states(words, target.at)
        if verb_states:
            return Condition("change", obj=target, states=verb_states)
        if said & TAKE_VERBS:
            return Condition("take", obj=target)
        if said & FIND_VERBS:
            return Condition("find", obj=target)
    if receps and not objs:
        if "open" in said:
            return Condition("open", recep=receps[0])
        if "go" in said or "walk" in said:
            return Condition("go", recep=receps[0])
    return None


def _mentions(words: list[str], world: World) -> list[Mention]:
    obj_types = set(world.obj_type.values())
    recep_types = set(world.recep_type.values())
    lamp_types = sorted(t for t in obj_types if _is_lamp(t, world))
    if lamp_types:  # "the lamp" is the room's desklamp (or floorlamp)
        words = [lamp_types[0] if w in ("lamp", "lamps") else w for w in words]
    found: list[Mention] = []
    i = 0
    while i < len(words):
        hit = None
        for width in (3, 2, 1):  # "soap bottle" -> soapbottle
            if i + width > len(words):
                continue
            kind_type = _known("".join(words[i : i + width]), obj_types, recep_types)
            if kind_type is not None:
                hit = (width, *kind_type)
                break
        if hit is None:
            i += 1
            continue
        width, kind, type_ = hit
        name = None
        after = i + width
        if after < len(words) and words[after].isdigit():
            name = f"{type_} {int(words[after])}"
            after += 1
        found.append(Mention(kind, type_, name, i))
        i = after
    return found


def _known(word: str, obj_types: set[str], recep_types: set[str]) -> tuple[str, str] | None:
    word = ALIASES.get(word, word)
    forms = [word]
    if word.endswith("ies"):
        forms.append(word[:-3] + "y")
    if word.endswith("ves"):
        forms.append(word[:-3] + "fe")
    if word.endswith("es"):
        forms.append(word[:-2])
    if word.endswith("s"):
        forms.append(word[:-1])
    for form in forms:
        if form in obj_types:
            return "obj", form
        if form in recep_types:
            return "recep", form
    return None


def _is_lamp(type_: str, world: World) -> bool:
    return any(world.obj_type[o] == type_ for o in world.toggleable if o in world.obj_type)


def _states(words: list[str], thing: Mention) -> tuple[str, ...]:
    """States asked for the object: adjectives right before it, or a change verb before it."""
    found = {ADJECTIVES[w] for w in words[max(0, thing.at - 3) : thing.at] if w in ADJECTIVES}
    return tuple(sorted(found | set(_verb_states(words, thing.at))))


def _verb_states(words: list[str], end: int) -> tuple[str, ...]:
    """States asked for by verbs before ``words[end]``; "the clean mug" is an adjective."""
    return tuple(
        sorted(
            {
                CHANGE_VERBS[w]
                for i, w in enumerate(words[:end])
                if w in CHANGE_VERBS and not (i > 0 and words[i - 1] in DETERMINERS)
            }
        )
    )


# -- the checks ------------------------------------------------------------------------


def _matches(mention: Mention, name: str, types: dict[str, str]) -> bool:
    return name == mention.name if mention.name else types.get(name) == mention.type


def _holding(c: Condition, w: World) -> bool:
    assert c.obj is not None
    return w.holding is not None and _matches(c.obj, w.holding, w.obj_type)


def _find(c: Condition, w: World) -> bool:
    assert c.obj is not None
    obj = c.obj
    if _holding(c, w):
        return True
    return any(
        _matches(obj, o, w.obj_type) and w.at(r) and not w.is_closed(r) for o, r in w.inside.items()
    )


def _change(c: Condition, w: World) -> bool:
    assert c.obj is not None
    obj = c.obj
    if _holding(c, w):
        assert w.holding is not None
        return all(w.has_state(w.holding, s) for s in c.states)
    return any(
        _matches(obj, o, w.obj_type) and all(w.has_state(o, s) for s in c.states)
        for o in w.obj_type
    )


def _place(c: Condition, w: World) -> bool:
    assert c.obj is not None and c.recep is not None
    counts: dict[str, int] = {}
    for o, r in w.inside.items():
        if not (_matches(c.obj, o, w.obj_type) and _matches(c.recep, r, w.recep_type)):
            continue
        if all(w.has_state(o, s) for s in c.states):
            counts[r] = counts.get(r, 0) + 1
    return any(n >= c.count for n in counts.values())


def _lamp_on(lamp: Mention, w: World) -> bool:
    return any(
        _matches(lamp, o, w.obj_type) and o in w.toggled and w.at(w.inside.get(o, ""))
        for o in w.obj_type
    )


def _look(c: Condition, w: World) -> bool:
    assert c.recep is not None
    return _holding(c, w) and _lamp_on(c.recep, w)


def _lamp(c: Condition, w: World) -> bool:
    assert c.obj is not None
    return _lamp_on(c.obj, w)


def _go(c: Condition, w: World) -> bool:
    assert c.recep is not None
    recep = c.recep
    return any(_matches(recep, r, w.recep_type) and w.at(r) for r in w.recep_type)


def _open(c: Condition, w: World) -> bool:
    assert c.recep is not None
    recep = c.recep
    return any(_matches(recep, r, w.recep_type) for r in w.opened)


_CHECKS = {
    "take": _holding,
    "find": _find,
    "change": _change,
    "place": _place,
    "look": _look,
    "lamp": _lamp,
    "go": _go,
    "open": _open,
}
