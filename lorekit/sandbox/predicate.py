"""``compile_predicate``: small pure functions from model text, checked and fast.

Reward predicates are called millions of times, so they cannot pay for a
process round trip. Instead the source must pass a strict syntax allowlist,
and only then is the *checked tree* (never the text) compiled and bound to a
namespace holding nothing but safe builtins and the caller's names. No
statement of the source runs at definition time: the function object is built
directly from its code object, with literal defaults only.

The rules (all checked before anything is compiled):

- exactly one top-level ``def``, no decorators; no nested ``def``/``class``;
- statements: assignment, ``if``, ``for``, ``return``, ``pass``, ``break``,
  ``continue`` and expressions; no ``while``, ``try``, ``with``, ``raise``,
  ``import``, ``global``, ``yield``, ``await``, ``del``;
- every name read is a parameter, a local, a safe builtin or one of
  ``allowed_names``; no name or attribute starts with ``_``; no ``format``,
  frame or generator internals; no calls to the function itself;
- bounded work: ``range`` yields at most ``max_range`` items, loops and
  comprehensions nest at most ``max_loop_depth`` deep, ``*``, ``**`` and
  ``<<`` are checked at run time so ``"a" * 10**9`` or ``2 ** 10**9`` fail
  fast instead of eating memory, padding methods (``center``, ``zfill``...)
  are unavailable.
"""

from __future__ import annotations

import ast
import builtins
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lorekit.sandbox.errors import PredicateError, PredicateRejected
from lorekit.sandbox.policy import DENIED_ATTRIBUTES

SAFE_BUILTINS = (
    "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float",
    "frozenset", "int", "isinstance", "len", "list", "map", "max", "min", "reversed",
    "round", "set", "sorted", "str", "sum", "tuple", "zip",
)  # fmt: skip
_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})
_STATEMENTS = (ast.Assign, ast.AugAssign, ast.If, ast.For, ast.Return, ast.Pass, ast.Break,
               ast.Continue, ast.Expr)  # fmt: skip
_EXPRESSIONS = (
    ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Lambda, ast.IfExp, ast.Dict, ast.Set, ast.ListComp,
    ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Compare, ast.Call, ast.FormattedValue,
    ast.JoinedStr, ast.Constant, ast.Attribute, ast.Subscript, ast.Starred, ast.Name, ast.List,
    ast.Tuple, ast.Slice,
)  # fmt: skip
_SUPPORT = (ast.arguments, ast.arg, ast.keyword, ast.comprehension, ast.expr_context,
            ast.boolop, ast.operator, ast.unaryop, ast.cmpop)  # fmt: skip
_ALLOWED = _STATEMENTS + _EXPRESSIONS + _SUPPORT
_GUARDED_OPS = {ast.Mult: "_sb_mul", ast.Pow: "_sb_pow", ast.LShift: "_sb_lshift"}


@dataclass(frozen=True)
class PredicateLimits:
    """Bounds that keep one predicate call short."""

    max_range: int = 10_000
    max_loop_depth: int = 2
    max_sequence: int = 100_000
    max_exponent: int = 256
    max_shift: int = 4_096
    max_nodes: int = 2_000
    max_source_chars: int = 20_000


class Predicate:
    """A compiled predicate; call it like the function it was written as."""

    __slots__ = ("_filename", "function", "name", "params", "source")

    def __init__(self, function: Callable[..., Any], source: str, filename: str) -> None:
        self.function = function
        self.name: str = function.__name__
        self.params: tuple[str, ...] = function.__code__.co_varnames[
            : function.__code__.co_argcount
        ]
        self.source = source
        self._filename = filename

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.function(*args, **kwargs)
        except Exception as exc:
            line = None
            tb = exc.__traceback__
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == self._filename:
                    line = tb.tb_lineno
                tb = tb.tb_next
            raise PredicateError(
                f"{self.name} failed: {exc}", line=line, exc_type=type(exc).__name__
            ) from exc

    def __repr__(self) -> str:
        return f"<Predicate {self.name}({', '.join(self.params)})>"


def _reject(node: ast.AST | None, reason: str) -> PredicateRejected:
    return PredicateRejected(reason, line=getattr(node, "lineno", None))


class _Checker(ast.NodeVisitor):
    """Walks the function body enforcing the allowlist and collecting names."""

    def __init__(self, limits: PredicateLimits, known: set[str], own_name: str) -> None:
        self.limits, self.known, self.own_name = limits, known, own_name
        self.loads: list[ast.Name] = []
        self.stores: set[str] = set()
        self.depth = 0

    def generic_visit(self, node: ast.AST) -> None:
        if not isinstance(node, _ALLOWED):
            raise _reject(node, f"{type(node).__name__} is not allowed in a predicate")
        super().generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id.startswith("_"):
            raise _reject(node, f"name {node.id!r} is not allowed (leading underscore)")
        if isinstance(node.ctx, ast.Store):
            self.stores.add(node.id)
        else:
            self.loads.append(node)

    def visit_arg(self, node: ast.arg) -> None:
        if node.arg.startswith("_"):
            raise _reject(node, f"parameter {node.arg!r} is not allowed (leading underscore)")
        self.stores.add(node.arg)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = node.attr
        if name.startswith("_") or name in DENIED_ATTRIBUTES or name in _PADDING_METHODS:
            raise _reject(node, f"attribute {name!r} is not allowed in a predicate")
        if isinstance(node.ctx, ast.Store | ast.Del):
            raise _reject(node, "predicates may not set attributes")
        self.visit(node.value)

    def _loop(self, node: ast.AST) -> None:
        self.depth += 1
        if self.depth > self.limits.max_loop_depth:
            raise _reject(node, f"loops nest deeper than {self.limits.max_loop_depth}")
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise _reject(node, "for ... else is not allowed in a predicate")
        saved = self.depth
        self._loop(node)
        self.depth = saved

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> None:
        saved = self.depth
        for generator in node.generators:  # loops first: the element runs inside them
            self.visit(generator)
        self.visit(node.elt)
        self.depth = saved

    def visit_DictComp(self, node: ast.DictComp) -> None:
        saved = self.depth
        for generator in node.generators:
            self.visit(generator)
        self.visit(node.key)
        self.visit(node.value)
        self.depth = saved

    visit_ListComp = visit_SetComp = visit_GeneratorExp = _comprehension

    def visit_comprehension(self, node: ast.comprehension) -> None:
        if node.is_async:
            raise _reject(node.iter, "async comprehensions are not allowed")
        self._loop(node)

    def check_names(self) -> None:
        for node in self.loads:
            if node.id == self.own_name:
                raise _reject(node, "a predicate may not call itself")
            if node.id not in self.stores and node.id not in self.known:
                raise _reject(node, f"unknown name {node.id!r}")


class _GuardOps(ast.NodeTransformer):
    """Routes ``*``, ``**`` and ``<<`` through run-time size checks."""

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        helper = _GUARDED_OPS.get(type(node.op))
        if helper is None or _float_constant(node.left) or _float_constant(node.right):
            return node
        call = ast.Call(ast.Name(helper, ast.Load()), [node.left, node.right], [])
        return ast.copy_location(call, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if type(node.op) not in _GUARDED_OPS or _float_constant(node.value):
            return self.generic_visit(node)
        if not isinstance(node.target, ast.Name):
            raise _reject(node, "use 'x = x * y' instead of an augmented '*=', '**=' or '<<='")
        load = ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target)
        binop = ast.copy_location(ast.BinOp(load, node.op, node.value), node)
        value = self.visit_BinOp(binop)
        assert isinstance(value, ast.expr)
        return ast.copy_location(ast.Assign([node.target], value), node)


def _float_constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, float)


def _runtime_helpers(limits: PredicateLimits) -> dict[str, Any]:
    sized = (str, bytes, list, tuple)

    def bounded_range(*args: int) -> range:
        r = range(*args)
        if len(r) > limits.max_range:
            raise ValueError(f"range of {len(r)} items exceeds the limit of {limits.max_range}")
        return r

    def mul(a: Any, b: Any) -> Any:
        for seq, times in ((a, b), (b, a)):
            if (
                isinstance(seq, sized)
                and isinstance(times, int)
                and len(seq) * times > limits.max_sequence
            ):
                raise ValueError(f"repetition longer than {limits.max_sequence} items")
        return a * b

    def power(a: Any, b: Any) -> Any:
        big = isinstance(a, int) and isinstance(b, int) and abs(b) > limits.max_exponent
        if big and abs(a) > 1:
            raise ValueError(f"exponent {b} exceeds the limit of {limits.max_exponent}")
        return a**b

    def lshift(a: Any, b: Any) -> Any:
        if isinstance(b, int) and b > limits.max_shift:
            raise ValueError(f"shift by {b} exceeds the limit of {limits.max_shift}")
        return a << b

    return {"range": bounded_range, "_sb_mul": mul, "_sb_pow": power, "_sb_lshift": lshift}


def _literal_defaults(args: ast.arguments) -> tuple[tuple[Any, ...], dict[str, Any]]:
    try:
        positional = tuple(ast.literal_eval(d) for d in args.defaults)
        keyword = {
            a.arg: ast.literal_eval(d)
            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
            if d is not None
        }
    except ValueError:
        raise _reject(args, "default values must be literals") from None
    return positional, keyword


def compile_predicate(
    source: str,
    allowed_names: Mapping[str, Any] | None = None,
    *,
    limits: PredicateLimits | None = None,
) -> Predicate:
    """Check ``source`` (one ``def``) against the allowlist and compile it.

    ``allowed_names`` are extra globals the predicate may read (constants,
    trusted helper functions). Raises :class:`PredicateRejected` with the line
    of the first offending construct; calls that fail raise :class:`PredicateError`.
    """
    limits = limits or PredicateLimits()
    names = dict(allowed_names or {})
    if not isinstance(source, str):
        raise TypeError("source must be a string")
    if len(source) > limits.max_source_chars:
        raise PredicateRejected(f"source longer than {limits.max_source_chars} characters")
    bad = [n for n in names if not n.isidentifier() or n.startswith("_")]
    if bad:
        raise ValueError(f"allowed_names must be public identifiers: {bad}")
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        raise PredicateRejected(f"syntax error: {exc.msg}", line=exc.lineno) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise PredicateRejected(f"cannot parse: {exc}") from None
    if sum(1 for _ in ast.walk(tree)) > limits.max_nodes:
        raise PredicateRejected(f"the predicate has more than {limits.max_nodes} syntax nodes")
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise _reject(tree.body[0] if tree.body else None, "source must be exactly one 'def'")
    func = tree.body[0]
    if func.decorator_list:
        raise _reject(func, "decorators are not allowed")
    if func.name.startswith("_"):
        raise _reject(func, f"function name {func.name!r} is not allowed")
    for arg in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs,
                func.args.vararg, func.args.kwarg):  # fmt: skip
        if arg is not None:
            arg.annotation = None  # annotations would be evaluated: drop them
    func.returns = None
    defaults, kwdefaults = _literal_defaults(func.args)
    checker = _Checker(limits, {*SAFE_BUILTINS, "range", *names}, func.name)
    checker.visit(func.args)
    for statement in func.body:
        checker.visit(statement)
    checker.check_names()
    tree = ast.fix_missing_locations(_GuardOps().visit(tree))
    filename = f"<predicate {func.name}>"
    module_code = compile(tree, filename, "exec")
    code = next(c for c in module_code.co_consts if isinstance(c, types.CodeType))
    namespace: dict[str, Any] = {"__builtins__": {}, "__name__": "predicate"}
    namespace.update({name: getattr(builtins, name) for name in SAFE_BUILTINS})
    namespace.update(_runtime_helpers(limits))
    namespace.update(names)
    function = types.FunctionType(code, namespace, func.name, defaults or None)
    if kwdefaults:
        function.__kwdefaults__ = kwdefaults
    return Predicate(function, source, filename)
