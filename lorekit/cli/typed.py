"""``KEY=VALUE`` options checked against the typed parameters of what they configure.

``--agent-opt max_turns=many`` used to reach the agent's constructor, which
compared ``'many' < 1`` and failed with a Python message. Every value is now
checked against the parameter's annotation before anything is built or run,
and a mismatch is one line naming the option, the key, the expected type and
what was given: ``--agent-opt max_turns: expected an integer, got 'many'``.

Values arrive as YAML scalars (``3``, ``0.5``, ``true``, ``[a, b]``); a
parameter typed ``str`` gets the text the user typed even when it reads as a
number (``--agent-opt manual=2024``). Annotations this module cannot check
(a class, a callable) accept any value and leave it to the target.
"""

from __future__ import annotations

import functools
import inspect
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath
from typing import Any, Literal, Union

from lorekit.cli.errors import UserError


class Mismatch(ValueError):
    """A value that does not fit its annotation; the message is what was expected."""


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@functools.lru_cache(maxsize=64)  # an experiment's thousand rows share a few agents
def _hints(target: Callable[..., Any]) -> dict[str, Any]:
    """The parameter annotations of ``target`` (a class: its ``__init__``), evaluated.

    An annotation that cannot be evaluated (a name only imported for type
    checking) is left out, so it accepts any value."""
    func = target.__init__ if inspect.isclass(target) else target
    try:
        return typing.get_type_hints(func)
    except Exception:
        pass
    namespace = dict(getattr(inspect.getmodule(func), "__dict__", {}))
    out: dict[str, Any] = {}
    for name, ann in getattr(func, "__annotations__", {}).items():
        one = types.SimpleNamespace(__annotations__={name: ann})
        try:  # one annotation at a time, so one unresolvable name spoils only itself
            out[name] = typing.get_type_hints(one, globalns=namespace)[name]
        except Exception:
            continue
    return out


def _expected(ann: Any) -> str:
    """How a message names what ``ann`` accepts."""
    origin = typing.get_origin(ann)
    if ann is bool:
        return "true or false"
    if ann is int:
        return "an integer"
    if ann is float:
        return "a number"
    if ann is str:
        return "text"
    if origin is Literal:
        return "one of " + ", ".join(map(str, typing.get_args(ann)))
    if origin in (Union, types.UnionType):
        parts = [_expected(a) for a in typing.get_args(ann) if a is not type(None)]
        none = type(None) in typing.get_args(ann)
        return " or ".join(parts + (["none"] if none else []))
    if origin in (list, tuple, Sequence) or ann in (list, tuple):
        return "a list, e.g. [a, b]"
    if origin in (dict, Mapping) or ann is dict:
        return "a mapping, e.g. {a: 1}"
    return getattr(ann, "__name__", str(ann))


def coerce(value: Any, raw: str, ann: Any) -> Any:
    """``value`` (parsed from the text ``raw``) as ``ann`` wants it, or :class:`Mismatch`."""
    if ann is Any or ann is inspect.Parameter.empty:
        return value
    origin = typing.get_origin(ann)
    if origin in (Union, types.UnionType):
        members = typing.get_args(ann)
        if value is None and type(None) in members:
            return None
        for member in members:
            if member is type(None):
                continue
            try:
                return coerce(value, raw, member)
            except Mismatch:
                continue
        raise Mismatch(_expected(ann))
    if origin is Literal:
        choices = typing.get_args(ann)
        for choice in choices:
            if value == choice or (isinstance(choice, str) and raw == choice):
                return choice
        raise Mismatch(_expected(ann))
    if ann is bool:
        if isinstance(value, bool):
            return value
        raise Mismatch(_expected(ann))
    if ann is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise Mismatch(_expected(ann))
    if ann is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not math.isfinite(float(value)):
                raise Mismatch("a finite number")
            return float(value)
        raise Mismatch(_expected(ann))
    if ann is str or (inspect.isclass(ann) and issubclass(ann, PurePath)):
        if isinstance(value, str):
            return value if ann is str else ann(value)
        if isinstance(value, int | float | bool) or value is None:
            return raw.strip() if ann is str else ann(raw.strip())  # what the user typed
        raise Mismatch(_expected(ann))
    if origin in (list, tuple, Sequence) or ann in (list, tuple):
        if isinstance(value, list | tuple):
            args = typing.get_args(ann)
            item = args[0] if args and (len(args) == 1 or args[-1] is Ellipsis) else None
            if item is not None:
                value = [coerce(v, str(v), item) for v in value]
            return tuple(value) if origin is tuple or ann is tuple else list(value)
        raise Mismatch(_expected(ann))
    if origin in (dict, Mapping) or ann is dict:
        if isinstance(value, dict):
            return value
        raise Mismatch(_expected(ann))
    return value  # a class or callable: the target checks it


def check_options(
    target: Callable[..., Any],
    values: Mapping[str, Any],
    raw: Mapping[str, str],
    *,
    flag: str,
) -> dict[str, Any]:
    """``values`` checked and converted against ``target``'s annotated parameters.

    Unknown keys pass through unchanged (the target names what it takes);
    a value of the wrong type raises :class:`UserError` naming ``flag``."""
    hints = _hints(target)
    out: dict[str, Any] = {}
    for key, value in values.items():
        ann = hints.get(key, Any)
        try:
            out[key] = coerce(value, raw.get(key, str(value)), ann)
        except Mismatch as exc:
            where = f"{flag}{key}" if flag.endswith(".") else f"{flag} {key}"
            raise UserError(
                f"{where}: expected {exc}, got {_describe(raw.get(key, value))}"
            ) from None
    return out


def agent_factory(name: str) -> Callable[..., Any] | None:
    """The callable that builds agent ``name`` (imported now), or None for an unknown name."""
    from lorekit.agents.registry import agent_factory as factory_of
    from lorekit.registry import REGISTRY

    if REGISTRY.find("agent", name) is None:
        return None
    factory = factory_of(name)
    return factory if callable(factory) else None
