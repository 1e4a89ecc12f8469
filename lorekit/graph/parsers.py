"""Answer parsers: text in, a value out, or an :class:`AfterQueryError` that says
what to fix. Their messages are written for the model, which reads them on the
retry, so they state what was expected and what came back.

``validate_schema`` checks the subset of JSON Schema that node outputs use
(type, properties, required, items, enum, minItems, maxItems,
additionalProperties): enough for agents' structured answers, with no
dependency on a schema library.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lorekit import jsonscan
from lorekit.graph.errors import AfterQueryError, GraphError
from lorekit.graph.node import Node, Parser

_FENCE = re.compile(
    r"```(?:json)?+(.*?)```", re.DOTALL | re.IGNORECASE
)  # linear: no \s* before .*?
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}
_SCHEMA_WORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "items",
        "enum",
        "minItems",
        "maxItems",
        "additionalProperties",
        "description",
        "title",
        "minLength",
    }
)


def check_schema(schema: Mapping[str, Any], where: str = "schema") -> None:
    """Refuse schema words the validator does not implement, so a spec author is
    never told their constraint holds when it is silently ignored."""
    if not isinstance(schema, Mapping):
        raise GraphError(f"{where}: a schema must be a mapping")
    unknown = sorted(set(schema) - _SCHEMA_WORDS)
    if unknown:
        raise GraphError(f"{where}: unsupported schema keywords {unknown}")
    t = schema.get("type")
    types = t if isinstance(t, list) else [t] if t is not None else []
    for name in types:
        if name not in _TYPES:
            raise GraphError(f"{where}: unknown type {name!r} (expected one of {sorted(_TYPES)})")
    for key, sub in (schema.get("properties") or {}).items():
        check_schema(sub, f"{where}.properties.{key}")
    if "items" in schema:
        check_schema(schema["items"], f"{where}.items")
    _check_satisfiable(schema, where)


def _check_satisfiable(schema: Mapping[str, Any], where: str) -> None:
    """Refuse a schema no value can meet: the model would be asked in vain, up to
    its retry limit, on every pass."""
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
        raise GraphError(f"{where}: 'required' must be a list of field names")
    if schema.get("additionalProperties") is False:
        missing = [k for k in required if k not in props]
        if missing:
            raise GraphError(
                f"{where}: can never be satisfied: it requires {missing} but "
                "'additionalProperties: false' allows only the fields under 'properties' "
                f"({sorted(props) or 'none'}); add them to 'properties'"
            )
    if "enum" in schema:
        enum = schema["enum"]
        if not isinstance(enum, list) or not enum:
            raise GraphError(f"{where}: can never be satisfied: 'enum' must be a non-empty list")
        t = schema.get("type")
        if t is not None:
            names = t if isinstance(t, list) else [t]
            if not any(_is_type(v, n) for v in enum for n in names):
                raise GraphError(
                    f"{where}: can never be satisfied: no value of 'enum' is of type {t!r}"
                )
    lo, hi = schema.get("minItems", 0), schema.get("maxItems")
    if hi is not None and lo > hi:
        raise GraphError(f"{where}: can never be satisfied: minItems {lo} > maxItems {hi}")
    t = schema.get("type")
    if required and t is not None and "object" not in (t if isinstance(t, list) else [t]):
        raise GraphError(f"{where}: 'required' fields need type 'object', not {t!r}")


def validate_schema(value: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Problems of ``value`` against ``schema``, as short sentences (empty when valid)."""
    problems: list[str] = []
    t = schema.get("type")
    if t is not None:
        names = t if isinstance(t, list) else [t]
        ok = any(_is_type(value, n) for n in names)
        if not ok:
            return [f"{path} should be {' or '.join(names)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path} should be one of {schema['enum']}, got {value!r}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        problems.append(f"{path} should have at least {schema['minLength']} characters")
    if isinstance(value, dict):
        props: Mapping[str, Any] = schema.get("properties") or {}
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path} lacks the required field {key!r}")
        for key, sub in value.items():
            if key in props:
                problems += validate_schema(sub, props[key], f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                problems.append(f"{path} has an unexpected field {key!r}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            problems.append(f"{path} should have at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{path} should have at most {schema['maxItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                problems += validate_schema(item, schema["items"], f"{path}[{i}]")
    return problems


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False  # JSON true is not a number, though Python's bool is an int
    return isinstance(value, _TYPES[name])


def text_parser(answer: str) -> str:
    """The answer, stripped; an empty answer is refused."""
    text = answer.strip()
    if not text:
        raise AfterQueryError("The answer was empty.")
    return text


def json_parser(schema: Mapping[str, Any] | None = None, *, take: str = "whole") -> Parser:
    """Parse JSON (a fenced block or the outermost braces are accepted, since models
    wrap JSON in prose) and validate it against ``schema``.

    ``take="last"`` is for answers that reason in steps and hold several JSON
    values (drafts, then the answer): the last JSON object or array wins, as in
    AgentKit's JSON after-query."""
    if schema is not None:
        check_schema(schema)
    if take not in ("whole", "last"):
        raise GraphError(f"json_parser: take must be 'whole' or 'last', got {take!r}")

    def parse(answer: str) -> Any:
        text = answer.strip()
        if take == "last":
            value = last_json(text)
        else:
            fenced = _FENCE.search(text)
            if fenced:
                text = fenced.group(1).strip()
            try:
                value = jsonscan.loads(text)
            except json.JSONDecodeError:
                value = _outermost_json(text)
        if schema is not None:
            problems = validate_schema(value, schema)
            if problems:
                raise AfterQueryError(
                    "The JSON does not match the expected shape: " + "; ".join(problems[:5])
                )
        return value

    return parse


def last_json(text: str) -> Any:
    """The last top-level JSON object or array in ``text`` (prose between is ignored).

    One linear scan (:func:`lorekit.jsonscan.values`): decoding from every
    ``{`` took seconds on an answer of many braces."""
    try:
        found = [value for _, _, value in jsonscan.values(text)]
    except json.JSONDecodeError as exc:
        raise AfterQueryError(f"The answer's JSON cannot be read: {exc.msg}.") from None
    if not found:
        raise AfterQueryError(
            "The answer holds no valid JSON object. End it with the answer as one JSON value."
        )
    return found[-1]


def _outermost_json(text: str) -> Any:
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            try:
                return jsonscan.loads(text[start : end + 1])
            except json.JSONDecodeError:
                continue
    raise AfterQueryError("The answer is not valid JSON. Reply with one JSON value only.")


def choice_parser(choices: Sequence[str]) -> Parser:
    """Accept one of ``choices`` (case-insensitive; trailing punctuation and a
    one-word preamble such as 'Answer:' are tolerated). Returns the choice as declared."""
    if not choices:
        raise GraphError("a choice parser needs at least one choice")
    table = {_norm(c): c for c in choices}

    def parse(answer: str) -> str:
        text = answer.strip()
        candidates = [text]
        head = text.splitlines()[0] if text else ""
        if ":" in head:  # "Answer: yes"
            candidates.append(text.split(":", 1)[1])
        for candidate in candidates:
            norm = _norm(candidate)
            if norm in table:
                return table[norm]
            words = norm.split()
            if words and _norm(words[0]) in table:  # "yes, because ..."
                return table[_norm(words[0])]
        raise AfterQueryError(
            f"Answer with exactly one of: {', '.join(choices)}. Got: {text[:80]!r}."
        )

    return parse


def _norm(text: str) -> str:
    return text.strip().strip(" .,;!?\"'`*").lower()


def regex_parser(pattern: str) -> Parser:
    """Search the answer with ``pattern``: named groups give a dict, one group gives
    its text, no group gives the whole match."""
    rx = re.compile(pattern, re.MULTILINE)

    def parse(answer: str) -> Any:
        m = rx.search(answer)
        if m is None:
            raise AfterQueryError(f"The answer must match the format {pattern!r}.")
        named = m.groupdict()
        if named:
            return {k: (v.strip() if isinstance(v, str) else v) for k, v in named.items()}
        if rx.groups >= 1:
            return (m.group(1) or "").strip()
        return m.group(0).strip()

    return parse


def parser_for(node: Node) -> Parser:
    """The parser a node uses: its own, or the one its ``output`` kind implies."""
    if node.parser is not None:
        return node.parser
    if node.output == "json":
        return json_parser(node.schema, take=node.json_take)
    if node.output == "choice":
        return choice_parser(node.choices)
    if node.output == "regex":
        assert node.pattern is not None  # checked by Node
        return regex_parser(node.pattern)
    return text_parser
