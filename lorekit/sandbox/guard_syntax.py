"""Syntax layer of the in-child guard: what code may say, checked before it runs.

Loaded inside the sandbox worker next to ``guard.py`` (standard library
only). :func:`check_tree` rejects constructs that reach interpreter internals
by name; :func:`instrument` then rewrites the few constructs whose safety
depends on run-time values so that a check runs first:

- ``obj._name`` (a single leading underscore) becomes ``__sbx_attr__(obj,
  '_name')``: private names are fine on the code's own classes and objects,
  never on the standard library's (``ForwardRef._evaluate`` runs ``eval``,
  ``Enum._convert_`` rewrites another module's globals);
- every attribute write or delete (``obj.name = v``, ``obj.name += v``,
  ``del obj.name``, ``for obj.name in ...``) becomes a write on
  ``__sbx_write__(obj, 'name')``, which hands ``obj`` back once the write
  is the code's to make: never on a class the code did not make (the
  worker's own code uses ``json.JSONEncoder`` to send its report, and the
  rest of the library is shared the same way), never through a foreign
  ``__setattr__`` (``typing.Mapping.x = 1`` writes to
  ``collections.abc.Mapping``), a private name only where reading it is
  allowed;
- a ``match`` statement whose class patterns take positional sub-patterns is
  preceded by ``__sbx_match__(Cls, ...)``, which vets each class's
  ``__match_args__`` (the names the interpreter will read from the subject).

The helper names start with ``__``, so the code itself can never name them:
the check runs before the rewrite and rejects such names.
"""

from __future__ import annotations

import ast
import string

#: Dunder attributes code may read (``obj.__name__``).
ALLOWED_DUNDERS = frozenset({"__init__", "__name__", "__doc__", "__qualname__"})

#: Dunder methods code may define: the data model's operators and protocols.
#: Missing on purpose: attribute hooks (``__getattr__``, ``__getattribute__``,
#: ``__setattr__``, descriptors), ``__instancecheck__``/``__subclasscheck__``
#: (they make ``isinstance`` lie to class patterns), pickling and copying
#: hooks (``__reduce_ex__`` state is applied with ``setattr``), ``__fspath__``,
#: ``__del__``, ``__class__``, ``__init_subclass__``, ``__set_name__``,
#: ``__mro_entries__``, ``__prepare__``, ``__class_getitem__``.
SAFE_DUNDER_METHODS = ALLOWED_DUNDERS | frozenset(
    f"__{name}__"
    for name in [
        "new",
        "repr",
        "str",
        "bytes",
        "hash",
        "bool",
        "len",
        "length_hint",
        "iter",
        "next",
        "reversed",
        "contains",
        "getitem",
        "setitem",
        "delitem",
        "missing",
        "call",
        "enter",
        "exit",
        "post_init",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "neg",
        "pos",
        "abs",
        "invert",
        "int",
        "float",
        "complex",
        "index",
        "round",
        "trunc",
        "floor",
        "ceil",
        "add",
        "sub",
        "mul",
        "matmul",
        "truediv",
        "floordiv",
        "mod",
        "divmod",
        "pow",
        "lshift",
        "rshift",
        "and",
        "xor",
        "or",
        "radd",
        "rsub",
        "rmul",
        "rmatmul",
        "rtruediv",
        "rfloordiv",
        "rmod",
        "rdivmod",
        "rpow",
        "rlshift",
        "rrshift",
        "rand",
        "rxor",
        "ror",
        "iadd",
        "isub",
        "imul",
        "imatmul",
        "itruediv",
        "ifloordiv",
        "imod",
        "ipow",
        "ilshift",
        "irshift",
        "iand",
        "ixor",
        "ior",
    ]
)

#: Underscore names that are public API of standard-library types.
PUBLIC_UNDERSCORE = frozenset(
    {"_asdict", "_replace", "_fields", "_make", "_field_defaults", "_name_", "_value_"}
)

PRIVATE_HELPER = "__sbx_attr__"
MATCH_HELPER = "__sbx_match__"
WRITE_HELPER = "__sbx_write__"


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def bad_attribute(name: str, denied: frozenset[str]) -> bool:
    """Names never readable on anything: dunders outside the allowlist, denied names."""
    return (name.startswith("__") and name not in ALLOWED_DUNDERS) or name in denied


def _format_is_plain(template: str) -> bool:
    """True when no replacement field walks attributes or indexes (``{0.x}``)."""
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError:
        return True  # str.format will raise on it anyway, touching nothing
    for _, field, spec, _ in parts:
        if field and ("." in field or "[" in field):
            return False
        if spec and "{" in spec and not _format_is_plain(spec):
            return False
    return True


def check_tree(tree: ast.AST, denied: frozenset[str]) -> tuple[int, str] | None:
    """First construct (in source order) the policy rejects, as (line, reason)."""
    problems = []
    for node in ast.walk(tree):
        reason = _check_node(node, denied)
        if reason is not None:
            where = (getattr(node, "lineno", 0), getattr(node, "end_col_offset", 0) or 0)
            problems.append((*where, reason))
    if not problems:
        return None
    line, _, reason = min(problems)
    return line, reason


#: Module attributes code may read but never rebind: ``__name__`` is the
#: module every class and function made afterwards claims to live in, and
#: the standard library looks that module up (``dataclasses`` runs generated
#: code with its globals, ``namedtuple`` and ``enum`` record it).
READ_ONLY_NAMES = frozenset({"__name__"})


def _bound_names(node: ast.AST) -> list[str]:
    """The plain names a node binds (assignment targets, imports, handlers, ...)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        return [node.id]
    if isinstance(node, ast.alias):
        return [node.asname or node.name.partition(".")[0]]
    if isinstance(node, ast.Global | ast.Nonlocal):
        return list(node.names)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    return []


def _check_node(node: ast.AST, denied: frozenset[str]) -> str | None:
    rebound = READ_ONLY_NAMES.intersection(_bound_names(node))
    if rebound:
        return f"binding {min(rebound)!r} is not allowed (read it, never assign it)"
    if isinstance(node, ast.Attribute):
        if node.attr in ("format", "format_map"):
            receiver = node.value
            if (
                isinstance(receiver, ast.Constant)
                and isinstance(receiver.value, str)
                and _format_is_plain(receiver.value)
            ):
                return None
            return (
                f"'.{node.attr}' is only allowed on a string literal without "
                "attribute or index lookups; use an f-string"
            )
        if bad_attribute(node.attr, denied):
            return f"access to attribute {node.attr!r} is not allowed"
    elif isinstance(node, ast.Name):
        if node.id.startswith("__") and node.id not in ALLOWED_DUNDERS:
            return f"use of name {node.id!r} is not allowed"
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        if node.name.startswith("__") and node.name not in SAFE_DUNDER_METHODS:
            return f"defining {node.name!r} is not allowed"
    elif isinstance(node, ast.Import):
        for alias in node.names:
            if any(part.startswith("_") for part in alias.name.split(".")):
                return f"importing private module {alias.name!r} is not allowed"
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            return "relative imports are not allowed"
        if any(part.startswith("_") for part in (node.module or "").split(".")):
            return f"importing from private module {node.module!r} is not allowed"
        for alias in node.names:
            if alias.name.startswith("_"):
                return f"importing private name {alias.name!r} is not allowed"
    elif isinstance(node, ast.MatchValue | ast.MatchClass):
        dotted = node.value if isinstance(node, ast.MatchValue) else node.cls
        while isinstance(dotted, ast.Attribute):
            if dotted.attr.startswith("_"):
                return f"matching against private name {dotted.attr!r} is not allowed"
            dotted = dotted.value
    if isinstance(node, ast.MatchClass):
        for attr in node.kwd_attrs:
            if bad_attribute(attr, denied) or (
                attr.startswith("_") and attr not in PUBLIC_UNDERSCORE
            ):
                return f"matching on attribute {attr!r} is not allowed"
    return None


class _Instrument(ast.NodeTransformer):
    """Adds the run-time checks described in the module docstring."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Store | ast.Del):
            # the object is still evaluated once, after the value, as Python does
            node.value = ast.copy_location(
                ast.Call(
                    func=ast.Name(WRITE_HELPER, ast.Load()),
                    args=[node.value, ast.Constant(node.attr)],
                    keywords=[],
                ),
                node.value,
            )
            return node
        if (
            isinstance(node.ctx, ast.Load)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            call = ast.Call(
                func=ast.Name(PRIVATE_HELPER, ast.Load()),
                args=[node.value, ast.Constant(node.attr)],
                keywords=[],
            )
            return ast.copy_location(call, node)
        return node

    def visit_MatchValue(self, node: ast.MatchValue) -> ast.AST:
        return node  # a dotted name the compiler needs as it is (no privates: checked)

    def visit_MatchClass(self, node: ast.MatchClass) -> ast.AST:
        node.patterns = [self.visit(p) for p in node.patterns]
        node.kwd_patterns = [self.visit(p) for p in node.kwd_patterns]
        return node

    def visit_Match(self, node: ast.Match) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        classes = [
            pattern.cls
            for case in node.cases
            for pattern in ast.walk(case.pattern)
            if isinstance(pattern, ast.MatchClass) and pattern.patterns
        ]
        if not classes:
            return node
        check = ast.Expr(
            ast.Call(
                func=ast.Name(MATCH_HELPER, ast.Load()),
                args=[_as_load(cls) for cls in classes],
                keywords=[],
            )
        )
        return [ast.copy_location(check, node), node]


def _as_load(expr: ast.expr) -> ast.expr:
    """A fresh copy of a dotted name, usable as an ordinary expression."""
    if isinstance(expr, ast.Attribute):
        return ast.Attribute(_as_load(expr.value), expr.attr, ast.Load())
    assert isinstance(expr, ast.Name)
    return ast.Name(expr.id, ast.Load())


def instrument(tree: ast.Module) -> ast.Module:
    """The checked tree with run-time checks added (see the module docstring)."""
    checked: ast.Module = ast.fix_missing_locations(_Instrument().visit(tree))
    return checked
