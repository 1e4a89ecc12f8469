"""Checked stand-ins for standard-library functions that are gadgets in the sandbox.

Loaded inside the sandbox worker next to ``guard_runtime.py`` (standard
library only). Some public functions of allowlisted modules take attribute
names, module names or annotations from the caller and act on them behind
the syntax check's back; where they have ordinary uses they are replaced in
the module views by a checked version instead of being hidden:

- ``functools.update_wrapper``/``wraps``: only their default attribute names;
- ``functools.singledispatch``: ``register`` refuses string annotations,
  which ``typing.get_type_hints`` would compile and evaluate unchecked;
- ``dataclasses.make_dataclass``: public field names, a checked namespace;
- ``dataclasses.dataclass``: never for a class that claims to live in one of
  the worker's own modules (the generated methods would run with the
  guard's globals);
- ``typing.get_origin``: never hands out the unchecked ``type``;
- functions that change the class they are given in place
  (``dataclasses.dataclass``, ``functools.total_ordering``,
  ``typing.final``/``no_type_check``/``runtime_checkable``/
  ``dataclass_transform``) and ``functools.update_wrapper``'s wrapper: only
  what the code may change itself (``Rules.writable``), never a class of the
  library's; ``collections.namedtuple``'s class counts as the code's own;
- ``copy.deepcopy``: no caller's ``memo``. Deep copying records every
  original it passes through in the memo (``memo[id(memo)]`` keeps them
  alive), so a memo of the caller's would hand back what the objects hold
  but the code cannot reach: a bound method's ``__self__`` (``print``'s
  output buffer), any object's ``__dict__``.
"""

from __future__ import annotations

import functools
import os
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, Protocol

_real_type = type
_class_dict = type.__dict__["__dict__"].__get__


class NameRules(Protocol):
    """What these wrappers need of the run's name rules (``guard_runtime.Rules``)."""

    def refuse(self, message: str) -> BaseException: ...

    def class_dict(self, namespace: object) -> None: ...

    def adopt(self, cls: type) -> None: ...

    def writable(self, obj: object, name: object) -> object: ...

    def own_class_only(self, target: object, what: str) -> None: ...


def exact_str(value: object, what: str = "attribute name") -> str:
    """``value`` as a plain ``str`` with no subclass methods left to lie."""
    if _real_type(value) is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)  # a copy of the characters, as an exact str
    raise TypeError(f"{what} must be a string, not {_real_type(value).__name__}")


def _wrapper_names(rules: NameRules, given: object, default: tuple[str, ...]) -> tuple[str, ...]:
    names = tuple(exact_str(n) for n in given)  # type: ignore[attr-defined]
    extra = [n for n in names if n not in default]
    if extra:
        raise rules.refuse(f"functools wrapper attributes are limited to {default}, got {extra}")
    return names


def _guarded_functools(rules: NameRules) -> dict[str, Any]:
    assigned0, updated0 = functools.WRAPPER_ASSIGNMENTS, functools.WRAPPER_UPDATES

    def update_wrapper(
        wrapper: Any, wrapped: Any, assigned: Any = assigned0, updated: Any = updated0
    ) -> Any:
        return functools.update_wrapper(
            rules.writable(wrapper, "__wrapped__"),  # type: ignore[arg-type]
            wrapped,
            _wrapper_names(rules, assigned, assigned0),
            _wrapper_names(rules, updated, updated0),
        )

    def wraps(wrapped: Any, assigned: Any = assigned0, updated: Any = updated0) -> Any:
        assigned = _wrapper_names(rules, assigned, assigned0)
        updated = _wrapper_names(rules, updated, updated0)
        return functools.partial(
            update_wrapper, wrapped=wrapped, assigned=assigned, updated=updated
        )

    def singledispatch(func: Any) -> Any:
        dispatcher = functools.singledispatch(func)
        register = dispatcher.register

        def checked_register(cls: Any, func: Any = None) -> Any:
            if func is None and not _dispatch_type(cls):  # @register on an annotated function
                _no_string_annotations(rules, cls)
            return register(cls, func)

        checked_register.__doc__ = register.__doc__
        dispatcher.register = checked_register  # type: ignore[method-assign]
        return dispatcher

    update_wrapper.__doc__ = functools.update_wrapper.__doc__
    wraps.__doc__ = functools.wraps.__doc__
    singledispatch.__doc__ = functools.singledispatch.__doc__
    return {
        "update_wrapper": update_wrapper,
        "wraps": wraps,
        "singledispatch": singledispatch,
        "total_ordering": _in_place(rules, functools.total_ordering, "functools.total_ordering"),
    }


def _in_place(rules: NameRules, decorator: Callable[..., Any], what: str) -> Callable[..., Any]:
    """``decorator`` (which sets attributes on the class it is given) for the code's
    own classes only: a class of the library's is shared with the worker's own code."""

    def checked(target: Any, *args: Any, **kwargs: Any) -> Any:
        rules.own_class_only(target, what)
        return decorator(target, *args, **kwargs)

    checked.__name__, checked.__doc__ = decorator.__name__, decorator.__doc__
    return checked


def _dispatch_type(cls: object) -> bool:
    """A class or a union of classes: what ``register(cls)`` takes without annotations."""
    if isinstance(cls, _real_type):
        return True
    args = typing.get_args(cls) if isinstance(cls, types.UnionType) else ()
    return bool(args) and all(isinstance(a, _real_type) for a in args)


def _no_string_annotations(rules: NameRules, func: object) -> None:
    """Refuse annotations that ``typing.get_type_hints`` would evaluate as code.

    ``singledispatch.register(func)`` reads the dispatch class from the
    annotations with ``get_type_hints``, which compiles and evaluates every
    string in them (nested ones too, ``list["..."]``) without the syntax
    check: an attribute walk (``'{0.__globals__}'.format(f)``) would run there.
    """
    found = getattr(func, "__annotations__", None)
    if not isinstance(found, dict):
        return  # singledispatch raises its own TypeError
    todo, seen = list(found.values()), 0
    while todo:
        value = todo.pop()
        seen += 1
        if isinstance(value, str | typing.ForwardRef) or seen > 200:
            raise rules.refuse(
                "singledispatch register: annotate with classes, not strings (a string "
                "annotation would be evaluated outside the sandbox's checks); or pass the "
                "class: register(cls, func)"
            )
        todo.extend(typing.get_args(value))


def _guarded_dataclasses(rules: NameRules) -> dict[str, Any]:
    import dataclasses

    def make_dataclass(cls_name: Any, fields: Any, *args: Any, **kwargs: Any) -> Any:
        checked = []
        for item in fields:
            parts = (item,) if isinstance(item, str) else tuple(item)
            name = exact_str(parts[0], "field name")
            if not name.isidentifier() or name.startswith("_"):
                raise rules.refuse(f"make_dataclass: field name {name!r} is not a public name")
            checked.append(name if len(parts) == 1 else (name, *parts[1:]))
        namespace = kwargs.get("namespace")
        if namespace is not None:
            rules.class_dict(namespace)
        made = dataclasses.make_dataclass(exact_str(cls_name), checked, *args, **kwargs)
        rules.adopt(made)
        return made

    def dataclass(cls: Any = None, /, **kwargs: Any) -> Any:
        def wrap(target: Any) -> Any:
            rules.own_class_only(target, "dataclass")
            if isinstance(target, _real_type):
                module = _class_dict(target).get("__module__")
                if _worker_module(module):
                    raise rules.refuse(
                        f"dataclass: class {target.__qualname__!r} claims to "
                        f"live in the sandbox's own module {module!r}"
                    )
            return dataclasses.dataclass(target, **kwargs)

        return wrap if cls is None else wrap(cls)

    make_dataclass.__doc__ = dataclasses.make_dataclass.__doc__
    dataclass.__doc__ = dataclasses.dataclass.__doc__
    return {"make_dataclass": make_dataclass, "dataclass": dataclass}


_HERE = os.path.dirname(os.path.abspath(__file__))


def _worker_module(name: object) -> bool:
    """Whether ``name`` is one of the worker's own modules (the guard, ``__main__``).

    ``dataclasses`` runs the code it generates with the globals of the
    module a class names in ``__module__``; that must never be the guard's.
    """
    if _real_type(name) is not str:
        return False
    module = sys.modules.get(name)
    if module is None:
        return False
    if name == "__main__":
        return True
    file = getattr(module, "__file__", None)
    return isinstance(file, str) and os.path.dirname(os.path.abspath(file)) == _HERE


def _guarded_typing(rules: NameRules, sandbox_type: type) -> dict[str, Any]:
    def get_origin(tp: Any) -> Any:
        found = typing.get_origin(tp)
        return sandbox_type if found is _real_type else found

    def dataclass_transform(**kwargs: Any) -> Any:
        return _in_place(rules, typing.dataclass_transform(**kwargs), "dataclass_transform")

    get_origin.__doc__ = typing.get_origin.__doc__
    dataclass_transform.__doc__ = typing.dataclass_transform.__doc__
    checked = {
        name: _in_place(rules, getattr(typing, name), f"typing.{name}")
        for name in ("final", "no_type_check", "runtime_checkable")
    }
    return {"get_origin": get_origin, "dataclass_transform": dataclass_transform, **checked}


def _guarded_collections(rules: NameRules) -> dict[str, Any]:
    import collections

    def namedtuple(typename: Any, field_names: Any, **kwargs: Any) -> Any:
        made = collections.namedtuple(typename, field_names, **kwargs)  # type: ignore[misc]
        rules.adopt(made)  # a class the code asked for, like a class statement's
        return made

    namedtuple.__doc__ = collections.namedtuple.__doc__
    return {"namedtuple": namedtuple}


def _guarded_copy(rules: NameRules) -> dict[str, Any]:
    import copy

    def deepcopy(x: Any, memo: Any = None) -> Any:
        if memo is not None:
            raise rules.refuse(
                "copy.deepcopy: the memo argument is not available in the sandbox (it would "
                "hold every original the copy passes through); call deepcopy(x)"
            )
        return copy.deepcopy(x)

    deepcopy.__doc__ = copy.deepcopy.__doc__
    return {"deepcopy": deepcopy}


#: Per module: a factory of replacements for public names the view would show.
GUARDED: dict[str, Callable[[NameRules, type], dict[str, Any]]] = {
    "functools": lambda rules, _: _guarded_functools(rules),
    "dataclasses": lambda rules, _: _guarded_dataclasses(rules),
    "typing": _guarded_typing,
    "copy": lambda rules, _: _guarded_copy(rules),
    "collections": lambda rules, _: _guarded_collections(rules),
}
