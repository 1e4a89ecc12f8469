"""The subset of JSON Schema that node outputs use: checking a schema, validating a value.

``check_schema`` refuses schema words the validator does not implement and
schemas no value can meet; ``validate_schema`` lists a value's problems.
Standard library only, and below the node (which checks its ``schema`` when
it is built) and the parsers (which validate answers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lorekit.graph.errors import GraphError

__all__ = ["check_schema", "validate_schema"]

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
