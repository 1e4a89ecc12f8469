"""Run-time layer of the in-child guard: the builtins and module views code gets.

Loaded inside the sandbox worker next to ``guard.py`` (standard library
only). Everything here checks *names* the code hands over at run time, the
same rules the syntax check applies to names written in the source:

- a name is coerced to an exact ``str`` first (``str.__str__``), so a
  ``str`` subclass cannot lie to ``startswith``, ``==`` or ``hash``;
- dunders outside a short allowlist and the policy's denied names are
  refused; an underscore name only where attribute lookup would find it
  in one of the code's *own* classes: the lookup is followed as the
  interpreter does it, through the metaclass too (``Enum._convert_`` lives
  on ``EnumType``, not on the code's enum), and a foreign ``__getattr__``
  never answers one;
- class keywords (``class E(enum.Enum, _simple=True)``) are public names;
- an attribute write or delete (a statement, ``setattr``, ``delattr``, or a
  library function that decorates a class in place) changes only what the
  code made: never a class it did not make (the worker's own code relies
  on the standard library's classes, ``json.JSONEncoder`` sends its
  report), never through a foreign ``__setattr__``/``__delattr__`` written
  in Python (``typing.Mapping.x = 1`` writes to ``collections.abc``);
- ``type(name, bases, dict)`` (and every metaclass derived from the
  sandbox's ``type``) refuses dunder keys outside a small set and vets
  ``__match_args__``; class patterns in ``match`` are vetted before they run;
- library functions that read or write attributes named by the caller,
  evaluate annotations or rewrite other modules (``functools.update_wrapper``,
  ``singledispatch``, ``enum.global_enum``, ``dataclasses.make_dataclass``)
  are wrapped (``guard_gadgets``) or hidden in module views.

A violation calls the ``stop`` function the guard passes in, which records
it and returns the exception to raise.
"""

from __future__ import annotations

import builtins
import enum
import sys
import types
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lorekit.sandbox import guard_gadgets as gadgets
    from lorekit.sandbox import guard_syntax as syntax
else:  # in the worker this directory is on sys.path, the package is not
    import guard_gadgets as gadgets
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
_SLOT = _real_type(object.__dict__["__setattr__"])  # a C type's slot wrapper
#: An object's address as a key, like ``id`` but without the ``builtins.id`` audit
#: event, which the hook would judge on every check (a metaclass ``__hash__`` is
#: bypassed, and the weak reference stored beside it confirms the identity).
_identity = object.__hash__
_OPEN_KEYWORDS = frozenset({"buffering", "encoding", "errors", "newline"})
#: Metaclasses of the standard library that define attribute or isinstance
#: hooks for their own bookkeeping; class patterns may use their classes.
_TRUSTED_METACLASSES: tuple[type, ...] = (enum.EnumType,)
exact_str = gadgets.exact_str


class Rules:
    """The name rules of one run, shared by every helper handed to the code."""

    def __init__(self, denied: frozenset[str], stop: Stopper) -> None:
        self.denied = denied
        self.stop = stop
        self._own: dict[int, weakref.ref[type]] = {}
        #: Classes whose instances take writes without a foreign hook (``writable``).
        self._plain_writes: dict[int, weakref.ref[type]] = {}

    def adopt(self, cls: type) -> None:
        """Record a class the code made; its private names are the code's to use."""
        self._own[_identity(cls)] = weakref.ref(cls)

    def is_own(self, cls: type) -> bool:
        return _known(self._own, cls)

    def refuse(self, message: str) -> BaseException:
        return self.stop("ForbiddenOperation", message)

    def private_ok(self, obj: object, name: str) -> bool:
        """Whether ``obj.name`` (a private name) resolves to something the code owns.

        Where the name is defined decides, found as ``getattr`` would find
        it: for a class, a data descriptor of its metaclass, then the
        class's own MRO, then the metaclass's; for anything else, its
        class's MRO (an instance attribute is the code's if its class is).
        A name found nowhere would reach ``__getattr__``: only the code's own.
        """
        if name in syntax.PUBLIC_UNDERSCORE:
            return True
        kind = _real_type(obj)
        is_class = issubclass(kind, _real_type)
        definer = _defined_in(_mro(kind), name)
        if is_class:
            meta = definer
            if meta is None or not _is_data_descriptor(_class_dict(meta)[name]):
                definer = _defined_in(_mro(obj), name) or meta
        if definer is not None:
            return self.is_own(definer)
        hooks = [k for k in _mro(kind) if "__getattr__" in _class_dict(k)]
        if any(not self.is_own(k) for k in hooks):
            return False  # a foreign __getattr__ would be handed the name
        own = _mro(obj) if is_class else _mro(kind)
        return any(self.is_own(k) for k in own)

    def writable(self, obj: object, name: object) -> object:
        """``obj`` itself, once writing or deleting ``obj.name`` is the code's to do.

        Ownership is decided as for private names, by the identity of the
        classes the code made. An instance of a foreign class (a
        ``decimal.Context``, a ``textwrap.TextWrapper`` the code made) may
        be changed unless a foreign hook written in Python would be handed
        the write; a public-underscore name (an enum member's ``_value_``)
        is public to read, not to write.
        """
        kind = _real_type(obj)
        ref = self._plain_writes.get(_identity(kind))  # the common case, inline: a public name
        if ref is not None and ref() is kind and _real_type(name) is str and name[:1] != "_":
            return obj
        return self._check_write(obj, name)

    def _check_write(self, obj: object, name: object) -> object:
        text = exact_str(name)
        kind = _real_type(obj)
        is_class = issubclass(kind, _real_type)
        if is_class and not self.is_own(obj):  # type: ignore[arg-type]
            raise self.refuse(
                f"changing attribute {text!r} of {_describe(obj)}: only classes the "
                "code made may be changed (subclass it instead)"
            )
        if not is_class and not _known(self._plain_writes, kind):
            for klass in _mro(kind):
                hooks = [_class_dict(klass).get(h) for h in ("__setattr__", "__delattr__")]
                # a C type's own slot is its check; anything else is code handed the write
                foreign = any(h is not None and _real_type(h) is not _SLOT for h in hooks)
                if foreign and not self.is_own(klass):
                    raise self.refuse(
                        f"changing attribute {text!r} of a {_describe(obj)}: its class "
                        "handles attribute writes itself"
                    )
            # the verdict stands: no class's hooks can change (dunders are never written)
            self._plain_writes[_identity(kind)] = weakref.ref(kind)
        if text.startswith("_") and not syntax.is_dunder(text):
            if text in syntax.PUBLIC_UNDERSCORE:
                owner = _mro(obj) if is_class else _mro(kind)
                allowed = any(self.is_own(k) for k in owner)
            else:
                allowed = self.private_ok(obj, text)
            if not allowed:
                raise self.refuse(f"changing private attribute {text!r} of {_describe(obj)}")
        return obj

    def own_class_only(self, target: object, what: str) -> None:
        """Refuse a library function that changes ``target`` in place when it is a
        class the code did not make (``dataclasses.dataclass``, ``total_ordering``)."""
        if isinstance(target, _real_type) and not self.is_own(target):
            raise self.refuse(
                f"{what}: {_describe(target)} is not a class the code made, and {what} "
                "would change it in place"
            )

    def class_keywords(self, keywords: dict[str, Any]) -> None:
        """Refuse private class keywords: they are a metaclass's internals."""
        for key in keywords:
            if _real_type(key) is not str or key.startswith("_"):
                raise self.refuse(f"class keyword {key!r} is not allowed")

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


def _known(table: dict[int, weakref.ref[type]], cls: type) -> bool:
    # by identity: a metaclass's __eq__/__hash__ cannot claim a foreign class
    ref = table.get(_identity(cls))
    return ref is not None and ref() is cls


def _defined_in(mro: tuple[type, ...], name: str) -> type | None:
    for klass in mro:
        if name in _class_dict(klass):
            return klass
    return None


def _is_data_descriptor(value: object) -> bool:
    kind = _real_type(value)
    return _defined_in(_mro(kind), "__set__") is not None or (
        _defined_in(_mro(kind), "__delete__") is not None
    )


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
                rules.class_keywords(kwargs)
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
        rules.class_keywords({k: v for k, v in kwargs.items() if k != "metaclass"})
        cls = real(func, name, *bases, **kwargs)
        if isinstance(cls, _real_type):
            rules.adopt(cls)
        return cls

    return build_class


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
        guarded = gadgets.GUARDED.get(full)
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
        setattr(rules.writable(obj, text), text, value)

    def guarded_delattr(obj: object, name: str) -> None:
        text = rules.name(obj, name)
        delattr(rules.writable(obj, text), text)

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
    safe[syntax.WRITE_HELPER] = rules.writable
    return safe
