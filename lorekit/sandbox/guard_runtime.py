"""Run-time layer of the in-child guard: the builtins and module views code gets.

Loaded inside the sandbox worker next to ``guard.py`` (standard library
only). Everything here checks *names* the code hands over at run time, the
same rules the syntax check applies to names written in the source:

- a name is coerced to an exact ``str`` first (``str.__str__``), so a
  ``str`` subclass cannot lie to ``startswith``, ``==`` or ``hash``;
- dunders outside a short allowlist and the policy's denied names are
  refused; underscore names only on the code's *own* classes and objects;
- ``type(name, bases, dict)`` (and every metaclass derived from the
  sandbox's ``type``) refuses dunder keys outside a small set and vets
  ``__match_args__``; class patterns in ``match`` are vetted before they run;
- library functions that read or write attributes named by the caller, or
  rewrite other modules (``functools.update_wrapper``, ``enum.global_enum``,
  ``dataclasses.make_dataclass``), are wrapped or hidden in module views.

A violation calls the ``stop`` function the guard passes in, which records
it and returns the exception to raise.
"""

from __future__ import annotations

import builtins
import enum
import functools
import sys
import types
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lorekit.sandbox import guard_syntax as syntax
else:  # in the worker this directory is on sys.path, the package is not
    import guard_syntax as syntax

Stopper = Callable[[str, str], BaseException]

_real_type = type
_mro = type.__dict__["__mro__"].__get__
_class_dict = type.__dict__["__dict__"].__get__
#: Keys a class dict given to ``type()`` may hold besides ordinary names.
_SAFE_CLASS_KEYS = syntax.SAFE_DUNDER_METHODS | {
    "__module__",
    "__qualname__",
    "__slots__",
    "__match_args__",
    "__annotations__",
    "__classcell__",
    "__orig_bases__",
}
_OPEN_KEYWORDS = frozenset({"buffering", "encoding", "errors", "newline"})
#: Metaclasses of the standard library that define attribute or isinstance
#: hooks for their own bookkeeping; class patterns may use their classes.
_TRUSTED_METACLASSES: tuple[type, ...] = (enum.EnumType,)


def exact_str(value: object, what: str = "attribute name") -> str:
    """``value`` as a plain ``str`` with no subclass methods left to lie."""
    if _real_type(value) is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)  # a copy of the characters, as an exact str
    raise TypeError(f"{what} must be a string, not {_real_type(value).__name__}")


class Rules:
    """The name rules of one run, shared by every helper handed to the code."""

    def __init__(self, denied: frozenset[str], stop: Stopper) -> None:
        self.denied = denied
        self.stop = stop
        self._own: dict[int, weakref.ref[type]] = {}

    def adopt(self, cls: type) -> None:
        """Record a class the code made; its private names are the code's to use."""
        self._own[id(cls)] = weakref.ref(cls)

    def is_own(self, cls: type) -> bool:
        # by identity: a metaclass's __eq__/__hash__ cannot claim a foreign class
        ref = self._own.get(id(cls))
        return ref is not None and ref() is cls

    def refuse(self, message: str) -> BaseException:
        return self.stop("ForbiddenOperation", message)

    def owns(self, obj: object) -> bool:
        """Whether a private name on ``obj`` belongs to the code's own classes."""
        cls = obj if isinstance(obj, _real_type) else _real_type(obj)
        return any(self.is_own(k) for k in _mro(cls))

    def private_ok(self, obj: object, name: str) -> bool:
        if name in syntax.PUBLIC_UNDERSCORE:
            return True
        cls = obj if isinstance(obj, _real_type) else _real_type(obj)
        for klass in _mro(cls):
            if name in _class_dict(klass):
                return self.is_own(klass)
        return self.owns(obj)

    def name(self, obj: object, name: object) -> str:
        """The checked, exact name for an attribute access on ``obj``."""
        text = exact_str(name)
        if syntax.bad_attribute(text, self.denied):
            raise self.refuse(f"access to attribute {text!r} is not allowed")
        if text.startswith("_") and not self.private_ok(obj, text):
            raise self.refuse(f"access to private attribute {text!r} of {_describe(obj)}")
        return text

    def class_dict(self, namespace: object) -> None:
        """Refuse a class body given as a dict with hooks the syntax check forbids."""
        if not isinstance(namespace, dict):
            return  # type() itself rejects it
        if _real_type(namespace) is not dict:
            raise self.refuse("a class dict must be a plain dict")
        for key in list(namespace):
            if _real_type(key) is not str:
                raise self.refuse("class attribute names must be plain strings")
            text = key
            if text.startswith("__") and text not in _SAFE_CLASS_KEYS:
                raise self.refuse(f"a class dict may not define {text!r}")
            if text == "__module__" and namespace[key] != "__sandbox__":
                raise self.refuse("a class dict may not set '__module__'")
        if "__match_args__" in namespace:
            self.match_args(namespace["__match_args__"])
        annotations = namespace.get("__annotations__", {})
        if _real_type(annotations) is not dict or not all(
            _real_type(k) is str and k.isidentifier() and not k.startswith("__")
            for k in annotations
        ):
            raise self.refuse("__annotations__ in a class dict must name public identifiers")

    def match_args(self, names: object) -> None:
        if _real_type(names) is not tuple:
            raise self.refuse("__match_args__ must be a tuple of public attribute names")
        for name in names:
            text = exact_str(name, "__match_args__ entry")
            if (
                _real_type(name) is not str
                or syntax.bad_attribute(text, self.denied)
                or (text.startswith("_") and text not in syntax.PUBLIC_UNDERSCORE)
            ):
                raise self.refuse(f"__match_args__ may not name {text!r}")

    def match_classes(self, *classes: object) -> None:
        """Vet the classes a ``match`` statement uses with positional patterns."""
        for cls in classes:
            if not isinstance(cls, _real_type):
                continue  # the interpreter raises TypeError itself
            for meta in _mro(_real_type(cls)):
                if meta in (_real_type, object) or meta in _TRUSTED_METACLASSES:
                    continue
                hooks = {"__getattr__", "__getattribute__", "__match_args__"}
                if hooks & set(_class_dict(meta)):
                    raise self.refuse(f"class patterns cannot use {_describe(cls)}")
            for klass in _mro(cls):
                found = _class_dict(klass)
                if "__match_args__" in found:
                    self.match_args(found["__match_args__"])
                    break


def _describe(obj: object) -> str:
    cls = obj if isinstance(obj, _real_type) else _real_type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


# ---------------------------------------------------------------- type()


def make_type(rules: Rules) -> type:
    """The sandbox's ``type``: a real metaclass that checks 3-argument calls.

    ``type(x)`` answers as usual (the real ``type`` comes back as this one),
    ``isinstance(C, type)`` and ``class M(type)`` keep working, and every
    class made by calling it, or a metaclass derived from it, has its dict
    checked and is recorded as the code's own.
    """

    class GuardedMeta(_real_type):
        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            if cls is sandbox_type and len(args) == 1 and not kwargs:
                found = _real_type(args[0])
                return sandbox_type if found is _real_type else found
            if len(args) == 3:
                rules.class_dict(args[2])
            target = _real_type if cls is sandbox_type else cls
            made = _real_type.__call__(target, *args, **kwargs)
            if isinstance(made, _real_type):
                rules.adopt(made)
            return made

        def __instancecheck__(cls, obj: object) -> bool:
            if cls is sandbox_type:
                return isinstance(obj, _real_type)
            return _real_type.__instancecheck__(cls, obj)

        def __subclasscheck__(cls, sub: type) -> bool:
            if cls is sandbox_type:
                return issubclass(sub, _real_type)
            return _real_type.__subclasscheck__(cls, sub)

    sandbox_type: type = GuardedMeta("type", (_real_type,), {"__module__": "builtins"})
    return sandbox_type


def make_build_class(rules: Rules) -> Callable[..., Any]:
    """``__build_class__`` that records every class statement's class as the code's own."""
    real = builtins.__build_class__

    def build_class(func: Any, name: str, *bases: Any, **kwargs: Any) -> Any:
        cls = real(func, name, *bases, **kwargs)
        if isinstance(cls, _real_type):
            rules.adopt(cls)
        return cls

    return build_class


# ---------------------------------------------------------------- gadgets


def _wrapper_names(rules: Rules, given: object, default: tuple[str, ...]) -> tuple[str, ...]:
    names = tuple(exact_str(n) for n in given)  # type: ignore[attr-defined]
    extra = [n for n in names if n not in default]
    if extra:
        raise rules.refuse(f"functools wrapper attributes are limited to {default}, got {extra}")
    return names


def _guarded_functools(rules: Rules) -> dict[str, Any]:
    assigned0, updated0 = functools.WRAPPER_ASSIGNMENTS, functools.WRAPPER_UPDATES

    def update_wrapper(
        wrapper: Any, wrapped: Any, assigned: Any = assigned0, updated: Any = updated0
    ) -> Any:
        return functools.update_wrapper(
            wrapper,
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

    update_wrapper.__doc__ = functools.update_wrapper.__doc__
    wraps.__doc__ = functools.wraps.__doc__
    return {"update_wrapper": update_wrapper, "wraps": wraps}


def _guarded_dataclasses(rules: Rules) -> dict[str, Any]:
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

    make_dataclass.__doc__ = dataclasses.make_dataclass.__doc__
    return {"make_dataclass": make_dataclass}


def _guarded_typing(rules: Rules, sandbox_type: type) -> dict[str, Any]:
    import typing

    def get_origin(tp: Any) -> Any:
        found = typing.get_origin(tp)
        return sandbox_type if found is _real_type else found

    get_origin.__doc__ = typing.get_origin.__doc__
    return {"get_origin": get_origin}


#: Per module: a factory of replacements for public names the view would show.
_GUARDED: dict[str, Callable[[Rules, type], dict[str, Any]]] = {
    "functools": lambda rules, _: _guarded_functools(rules),
    "dataclasses": lambda rules, _: _guarded_dataclasses(rules),
    "typing": _guarded_typing,
}


# ---------------------------------------------------------------- module views


class ModuleView:
    """A snapshot of a module's public, non-module names handed to the code."""

    def __init__(self, name: str, attrs: dict[str, Any]) -> None:
        self.__dict__.update(attrs)
        self.__dict__["__name__"] = name

    def __repr__(self) -> str:
        return f"<module {self.__dict__['__name__']!r} (sandbox view)>"


def build_views(
    allowed: list[str], hidden: dict[str, list[str]], rules: Rules, sandbox_type: type
) -> dict[str, ModuleView]:
    """Views of every allowlisted (already imported) module, keyed by full name."""
    views: dict[str, ModuleView] = {}
    for full in sorted(allowed, key=lambda n: n.count(".")):
        module = sys.modules.get(full)
        if module is None:
            continue
        skip = set(hidden.get(full, ()))
        attrs = {
            key: value
            for key, value in vars(module).items()
            if not key.startswith("_")
            and key not in skip
            and not isinstance(value, types.ModuleType)
        }
        guarded = _GUARDED.get(full)
        if guarded is not None:
            attrs.update((k, v) for k, v in guarded(rules, sandbox_type).items() if k in attrs)
        views[full] = ModuleView(full, attrs)
    for full, view in views.items():  # allowlisted submodules become attributes
        parent, _, leaf = full.rpartition(".")
        if parent in views:
            setattr(views[parent], leaf, view)
    return views


def make_import(views: dict[str, ModuleView], stop: Stopper) -> Callable[..., ModuleView]:
    """An ``__import__`` that only returns views of allowlisted modules."""
    allowed = ", ".join(sorted(views))
    lazy = frozenset({"_strptime"})  # C code imports it through the caller's __import__

    def guarded_import(
        name: str,
        globals: object = None,
        locals: object = None,
        fromlist: object = (),
        level: int = 0,
    ) -> ModuleView:
        name = exact_str(name, "module name")
        if level != 0:
            raise stop("ForbiddenImport", "relative imports are not allowed")
        if name in lazy and name in sys.modules:
            return sys.modules[name]  # type: ignore[return-value]
        if name not in views:
            raise stop("ForbiddenImport", f"import of {name!r} is not allowed (allowed: {allowed})")
        if fromlist:
            return views[name]
        return views[name.partition(".")[0]]

    return guarded_import


# ---------------------------------------------------------------- builtins

_REMOVED_BUILTINS = (
    "eval",
    "exec",
    "compile",
    "vars",
    "globals",
    "locals",
    "input",
    "breakpoint",
    "help",
    "__loader__",
    "__spec__",
    "__package__",
)


def make_builtins(
    views: dict[str, ModuleView],
    rules: Rules,
    sandbox_type: type,
    printer: Callable[..., None],
    inside_workdir: Callable[[object], str | None],
) -> dict[str, Any]:
    """The builtins dict of sandboxed code."""
    stop = rules.stop
    real_open = builtins.open
    safe: dict[str, Any] = {k: v for k, v in vars(builtins).items() if k not in _REMOVED_BUILTINS}

    def unavailable(name: str) -> Callable[..., None]:
        def stub(*args: object, **kwargs: object) -> None:
            raise stop("ForbiddenOperation", f"{name}() is not available in the sandbox")

        stub.__name__ = name
        return stub

    def guarded_getattr(obj: object, name: str, *default: object) -> object:
        return getattr(obj, rules.name(obj, name), *default)

    def guarded_hasattr(obj: object, name: str) -> bool:
        return hasattr(obj, rules.name(obj, name))

    def guarded_setattr(obj: object, name: str, value: object) -> None:
        text = rules.name(obj, name)
        if text == "__match_args__":
            rules.match_args(value)
        setattr(obj, text, value)

    def guarded_delattr(obj: object, name: str) -> None:
        delattr(obj, rules.name(obj, name))

    def private_attr(obj: object, name: str) -> object:
        if not rules.private_ok(obj, name):
            raise rules.refuse(f"access to private attribute {name!r} of {_describe(obj)}")
        return getattr(obj, name)

    def guarded_open(file: object, mode: object = "r", *args: Any, **kwargs: Any) -> Any:
        extra = sorted(set(kwargs) - _OPEN_KEYWORDS)
        if len(args) > len(_OPEN_KEYWORDS) or extra:
            raise stop(
                "ForbiddenOperation",
                f"open() takes only a path, a mode and {', '.join(sorted(_OPEN_KEYWORDS))}"
                + (f"; {extra} are not available" if extra else ""),
            )
        full = inside_workdir(file)
        if full is None:
            raise stop(
                "ForbiddenOperation",
                f"open({file!r}) is outside the sandbox's working directory",
            )
        return real_open(full, exact_str(mode, "mode"), *args, **kwargs)

    for name in _REMOVED_BUILTINS:
        if not name.startswith("_"):
            safe[name] = unavailable(name)
    safe.update(
        getattr=guarded_getattr,
        hasattr=guarded_hasattr,
        setattr=guarded_setattr,
        delattr=guarded_delattr,
        open=guarded_open,
        print=printer,
        type=sandbox_type,
        __build_class__=make_build_class(rules),
        __import__=make_import(views, stop),
    )
    safe[syntax.PRIVATE_HELPER] = private_attr
    safe[syntax.MATCH_HELPER] = rules.match_classes
    return safe
