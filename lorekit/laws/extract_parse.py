"""Reading the extractor model's answers: prose, then a JSON form checked by a schema.

Every extraction step asks for a short description in words followed by a
```json block. The words become the law's text; the form is what can be
scored against ``CrafterRules`` and compiled into rewards, so it is checked
strictly against a JSON schema: unknown item names, zero or fractional
counts and missing fields are problems fed back to the model, never guessed
around. The schemas are built per step (the item names a step may use depend
on the aspect it asks about), and they are plain JSON Schema, so the prompt
can show them verbatim.

The validator covers the small part of JSON Schema these forms use (type,
required, properties, additionalProperties, propertyNames, enum, minimum,
items, uniqueItems): the project has no JSON Schema dependency, and these few
keywords are enough for every form here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lorekit import jsonscan
from lorekit.laws.experience import ITEM_NAMES, THING_NAMES, precondition_problems
from lorekit.llm.ask import ParseError

Schema = dict[str, Any]

_FENCE = re.compile(r"```[ \t]*+(json)?+[ \t]*+\n(.*?)```", re.DOTALL | re.IGNORECASE)


class FormError(ParseError):
    """An answer whose form cannot be used; ``problems`` says why, one item each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Answer:
    """A usable answer: the description in words and the validated form."""

    text: str
    form: dict[str, Any]


def counts_schema(names: Iterable[str]) -> Schema:
    """An object from item name (one of ``names``) to a positive whole count."""
    return {
        "type": "object",
        "propertyNames": {"enum": sorted(set(names))},
        "additionalProperties": {"type": "integer", "minimum": 1},
    }


def names_schema(names: Iterable[str]) -> Schema:
    """A list of distinct names, each one of ``names``."""
    return {"type": "array", "items": {"enum": sorted(set(names))}, "uniqueItems": True}


def effects_schema(items: Iterable[str]) -> Schema:
    """What one successful action uses up and yields, limited to one aspect's ``items``."""
    items = list(items)
    return {
        "type": "object",
        "required": ["costs", "gains"],
        "additionalProperties": False,
        "properties": {"costs": counts_schema(items), "gains": counts_schema(items)},
    }


def face_schema(places: Iterable[str]) -> Schema:
    """What the faced cell holds after a success: one kind, or null (unchanged, unknown)."""
    return {
        "type": "object",
        "required": ["leaves"],
        "additionalProperties": False,
        "properties": {"leaves": {"enum": [*sorted(set(places)), None]}},
    }


def preconditions_schema(items: Iterable[str], places: Iterable[str]) -> Schema:
    """What must hold before the action: items held, upper bounds (``below``,
    optional: ``{"energy": 9}`` is energy < 9), things nearby, the thing faced."""
    places = list(places)
    return {
        "type": "object",
        "required": ["requires", "nearby", "faced"],
        "additionalProperties": False,
        "properties": {
            "requires": counts_schema(items),
            "below": counts_schema(items),
            "nearby": names_schema(places),
            "faced": names_schema(places),
        },
    }


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    raise ValueError(f"the form validator does not know the type {kind!r}")


def _where(path: str) -> str:
    return path or "the form"


def _shown(value: Any, limit: int = 120) -> str:
    """``value`` as JSON for a problem message, cut to ``limit`` characters."""
    try:
        text = json.dumps(value)
    except (ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def validate(value: Any, schema: Mapping[str, Any], path: str = "") -> list[str]:
    """Every way ``value`` breaks ``schema``, each naming where (empty: it conforms).

    ``propertyNames`` is supported as ``{"enum": [...]}`` only, which is all the forms use.
    """
    kind = schema.get("type")
    if kind is not None and not _type_ok(value, kind):
        return [f"{_where(path)} must be of type {kind}, got {_shown(value)}"]
    problems: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join("null" if x is None else str(x) for x in schema["enum"])
        problems.append(f"{_where(path)}: {_shown(value)} is not one of: {allowed}")
    if "minimum" in schema and isinstance(value, int | float) and value < schema["minimum"]:
        problems.append(f"{_where(path)} must be at least {schema['minimum']}, got {value}")
    if isinstance(value, dict):
        problems += _validate_object(value, schema, path)
    if isinstance(value, list):
        item_schema = schema.get("items")
        for i, item in enumerate(value):
            if item_schema is not None:
                problems += validate(item, item_schema, f"{path}[{i}]")
        if schema.get("uniqueItems") and len({json.dumps(x, sort_keys=True) for x in value}) < len(
            value
        ):
            problems.append(f"{_where(path)} lists a name more than once")
    return problems


def _validate_object(value: dict[str, Any], schema: Mapping[str, Any], path: str) -> list[str]:
    problems = [
        f"{_where(path)} lacks the field {key!r}"
        for key in schema.get("required", ())
        if key not in value
    ]
    props: Mapping[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    names = schema.get("propertyNames")
    for key, item in value.items():
        sub = f"{path}.{key}" if path else key
        if names is not None and key not in names.get("enum", (key,)):
            allowed = ", ".join(names["enum"])
            problems.append(f"{_where(path)}: {key!r} is not a known name (use one of: {allowed})")
        if key in props:
            problems += validate(item, props[key], sub)
        elif extra is False:
            problems.append(f"{_where(path)} has an unexpected field {key!r}")
        elif isinstance(extra, dict):
            problems += validate(item, extra, sub)
    return problems


def _bare_objects(answer: str) -> list[tuple[int, int, str]]:
    """Top-level JSON objects written into prose, in order (braces in words are skipped).

    One linear scan (:func:`lorekit.jsonscan.values`): decoding from every
    ``{`` took seconds on an answer of many braces. Raises FormError for a
    number too long or nesting too deep to decode."""
    try:
        return [(i, end, answer[i:end]) for i, end, _ in jsonscan.values(answer, "{")]
    except json.JSONDecodeError as exc:
        raise FormError([f"the JSON cannot be read: {exc.msg}"]) from None


def _json_candidates(answer: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Fenced blocks, else bare objects (or, failing that, the widest ``{...}`` span,
    so the parse error can be shown); the last one first, with their spans."""
    blocks = [(m.start(), m.end(), m.group(2)) for m in _FENCE.finditer(answer)]
    if blocks:
        return "fenced", list(reversed(blocks))
    bare = _bare_objects(answer)
    if bare:
        return "bare", list(reversed(bare))
    start, end = answer.find("{"), answer.rfind("}")
    if start >= 0 and end > start:
        return "bare", [(start, end + 1, answer[start : end + 1])]
    return "none", []


def parse_answer(answer: str, schema: Mapping[str, Any]) -> Answer:
    """Split an answer into its words and its form, or raise :class:`FormError`.

    The form is the last fenced block that parses as a JSON object (a bare
    object is accepted too). Text outside the block is the description.
    """
    how, candidates = _json_candidates(answer)
    if how == "none":
        raise FormError(["there is no ```json block with the structured form in your answer"])
    first_error = ""
    for start, end, raw in candidates:
        try:
            form = jsonscan.loads(raw)
        except json.JSONDecodeError as exc:
            first_error = first_error or (
                f"the JSON block does not parse: {exc.msg} at line {exc.lineno} column {exc.colno}"
            )
            continue
        if not isinstance(form, dict):
            first_error = first_error or "the JSON block must hold one object ({...})"
            continue
        try:
            problems = validate(form, schema)
        except RecursionError:
            problems = ["the JSON block is nested too deeply"]
        if problems:
            raise FormError(problems)
        text = (answer[:start] + answer[end:]).strip()
        return Answer(text, form)
    raise FormError([first_error])


def impossible_bounds(form: Mapping[str, Any]) -> list[str]:
    """Bounds in a preconditions form that no crafter state meets (the saved
    experience would be refused when loaded): fed back like a schema problem."""
    return precondition_problems(form.get("requires", {}), form.get("below", {}))


def seen_items(records: Iterable[Mapping[str, Any]], aspect: str) -> set[str]:
    """Crafter's items the records show in one aspect (other names are left out:
    an experience naming them would not load)."""
    out: set[str] = set()
    for rec in records:
        for key in ("before", "after"):
            part = rec[key].get(aspect)
            if isinstance(part, Mapping):
                out |= {str(k) for k in part}
    return out & ITEM_NAMES


def seen_places(records: Iterable[Mapping[str, Any]]) -> set[str]:
    """Crafter's kinds the records show faced or nearby (the player's own cell
    aside; other names are left out, as an experience naming them would not load)."""
    out: set[str] = set()
    for rec in records:
        for key in ("before", "after"):
            state = rec[key]
            if isinstance(state.get("face"), str):
                out.add(state["face"])
            for row in state.get("nearby") or []:
                out |= {str(c) for c in row if isinstance(c, str)}
    return out & THING_NAMES
