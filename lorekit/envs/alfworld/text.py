"""ALFWorld's two command syntaxes and the papers' text conventions.

- Syntax. ALFWorld 0.4.x places an object with ``move X to Y``; 0.3.x, ReAct,
  ADaPT and AutoManual wrote ``put X in/on Y``. The syntax lives in the game's
  grammar, so :func:`grammar_for_syntax` rewrites the grammar and the same
  engine plays either.
- Arrival sentences. 0.4.x opens every ``go to`` answer with "You arrive at
  fridge 1." (0.3.x said "You arrive at loc 12."); ReAct's prompts drop that
  sentence (:func:`strip_arrival`), ADaPT's say "You arrive at the location."
  (:func:`show_arrival` with ``"location"``), AutoManual's wrapper drops only
  0.3.x's "You arrive at loc 12." (``"loc"``).
- Commands. TextWorld carries out a command only if it is, spaces around it
  aside, exactly one of the admissible ones: "go to desk 1." or "Go to desk 1"
  is "Nothing happens." (``commands="exact"``, as the papers ran).
  ``commands="normalized"`` forgives case, runs of spaces, a final period and
  a leading ">" (:func:`normalize_command`).
- Object ids. AutoManual drives ALFWorld from Python, so it writes objects as
  identifiers (``cabinet_1``) and drops the articles ("you see cabinet_1,
  mug_2"). :func:`to_object_ids` and :func:`from_object_ids` convert both ways.
"""

from __future__ import annotations

import re
from typing import Literal

from lorekit.envs.alfworld.planner import Act

Syntax = Literal["move", "put"]
SYNTAXES: tuple[Syntax, ...] = ("move", "put")
Arrival = Literal["keep", "strip", "location", "loc"]
ARRIVALS: tuple[Arrival, ...] = ("keep", "strip", "location", "loc")
Commands = Literal["exact", "normalized"]
COMMAND_MODES: tuple[Commands, ...] = ("exact", "normalized")
_LOCATION_ARRIVAL = "You arrive at the location. "

# The 0.4.2 grammar's placing rules and their 0.3.x counterparts. Each pair
# must match the grammar exactly once or more; a grammar without them is a
# version we do not know, and rewriting it silently would be wrong.
_PUT_REWRITES = (
    ('template :: "move {o} to {r}";', 'template :: "put {o} in/on {r}";'),
    ('"You move the {o.name} to the {r.name}."', '"You put the {o.name} in/on the {r.name}."'),
    (
        "move (object) to (receptacle):  place an object in or on a receptacle",
        "put (object) in/on (receptacle): place an object in or on a receptacle",
    ),
)

_ARRIVAL = re.compile(r"^You arrive at [^.]*\.\s*")
_NAMED = re.compile(r"\b([a-z]+) (\d+)\b")
_ARTICLE = re.compile(r"\b(?:a|an|the) (?=[a-z]+_\d+\b)", re.IGNORECASE)
_ID = re.compile(r"\b([a-z]+)_(\d+)\b")


class UnknownGrammar(ValueError):
    """The game's grammar is not one whose placing command we know how to rewrite."""


def grammar_for_syntax(grammar: str, syntax: Syntax) -> str:
    """``grammar`` with its placing command in ``syntax`` (either input syntax works)."""
    if syntax not in SYNTAXES:
        raise ValueError(f"syntax must be one of {SYNTAXES}, got {syntax!r}")
    pairs = _PUT_REWRITES if syntax == "put" else tuple((b, a) for a, b in _PUT_REWRITES)
    source, target = pairs[0]
    if source not in grammar:
        if target in grammar:
            return grammar  # already in the wanted syntax
        raise UnknownGrammar(
            "the game's grammar has neither 'move {o} to {r}' nor 'put {o} in/on {r}' as its "
            "placing command; it comes from an ALFWorld version LoreKit does not know"
        )
    for old, new in pairs:
        grammar = grammar.replace(old, new)
    return grammar


def render(act: Act, syntax: Syntax) -> str:
    """The command text of ``act`` in ``syntax`` (display names, e.g. "mug 1")."""
    verb, obj, recep = act.verb, act.obj, act.recep
    if verb == "go":
        return f"go to {recep}"
    if verb in ("open", "close"):
        return f"{verb} {recep}"
    if verb == "take":
        return f"take {obj} from {recep}"
    if verb == "put":
        return f"move {obj} to {recep}" if syntax == "move" else f"put {obj} in/on {recep}"
    if verb in ("clean", "heat", "cool"):
        return f"{verb} {obj} with {recep}"
    if verb == "use":
        return f"use {obj}"
    raise ValueError(f"unknown act verb {verb!r}")


def strip_arrival(text: str) -> str:
    """``text`` without a leading "You arrive at ..." sentence."""
    stripped = _ARRIVAL.sub("", text, count=1)
    return stripped or text


def show_arrival(text: str, arrival: Arrival) -> str:
    """``text`` with its leading arrival sentence kept, dropped, written as ADaPT
    shows it ("You arrive at the location. On the desk 1, ..."), or dropped only
    where it names no place ("You arrive at loc 12.", ``"loc"``: AutoManual)."""
    if arrival == "strip":
        return strip_arrival(text)
    if arrival == "loc" and text.startswith("You arrive at loc") and ". " in text:
        return text[text.index(". ") + 2 :]  # AutoManual's wrapper: up to the first ". "
    if arrival == "location" and _ARRIVAL.match(text):
        return _ARRIVAL.sub(_LOCATION_ARRIVAL, text, count=1)
    return text


def command_text(command: str, commands: Commands) -> str:
    """What is matched against the admissible commands: the command with the
    spaces around it dropped (TextWorld), or normalized as well."""
    return normalize_command(command) if commands == "normalized" else str(command).strip()


def to_object_ids(text: str) -> str:
    """ "a mug 1" -> "mug_1": every numbered name as an identifier, without its article
    ("a", "an" or "the"), as AutoManual's code-writing agents see ALFWorld."""
    return _ARTICLE.sub("", _NAMED.sub(r"\1_\2", text))


def from_object_ids(command: str) -> str:
    """ "take mug_1 from cabinet_2" -> "take mug 1 from cabinet 2"."""
    return _ID.sub(r"\1 \2", command)


def normalize_command(command: str) -> str:
    """Case, spaces and a trailing period do not matter; the words do."""
    text = " ".join(str(command).replace("\u00a0", " ").split()).strip()
    text = text.lstrip(">").strip().rstrip(".").strip()
    return text.lower()
