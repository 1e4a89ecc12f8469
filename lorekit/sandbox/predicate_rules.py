"""The static rules of the predicate language, checked before anything compiles.

A reward predicate reads a game state and answers with a bool or a number.
It needs comparisons, boolean logic, small arithmetic, lookups in the state,
loops over the state's collections and ``len``/``min``/``max``/``sum``/
``any``/``all``. The rules below allow exactly that much, so that a predicate
cannot *say* anything that runs forever or builds a value of unbounded size:

- no ``while``, ``lambda``, nested ``def``, recursion or calling a value held
  in a variable: the only calls are safe builtins, ``allowed_names`` and
  methods, so every loop is a ``for`` over something that already exists;
- loops and comprehensions nest at most ``max_loop_depth`` deep;
- methods of builtin types are allowlisted to those whose cost and result are
  bounded by their receiver (``get``, ``count``, ``lower``, ``split``...);
  calling ``replace``, ``join``, ``ljust``, ``to_bytes``, ``format`` and
  friends is refused (reading an attribute of that name is not: a bound
  method held in a variable can never be called);
- builtins can only be called (``key=len`` and ``isinstance(x, int)`` aside),
  and ``round``/``sum`` take only literal ``ndigits``/``start``;
- f-string format specs are literal with small widths; no ``%`` on strings
  (checked at run time), no ``*x``/``**x`` unpacking, no ``:=``;
- a loop may not put a value back inside a new container built from its own
  previous value (``acc = [acc]``): that would nest without bound and crash
  C code that recurses on nesting (hashing, for one);
- literal defaults only, of immutable, hashable types; the syntax tree is at
  most ``max_nodes`` nodes and ``max_depth`` deep, measured without recursion
  so that 900 nested ``not`` are rejected rather than crash the checker.

Every rejection names the line and the construct and says what is allowed,
because the reader is usually a model that will rewrite the predicate.
"""

from __future__ import annotations

import ast
import re
import types
from collections.abc import Iterator
from typing import Any

from lorekit.sandbox.errors import PredicateRejected

SAFE_BUILTINS = (
    "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "float", "frozenset", "int",
    "isinstance", "len", "list", "max", "min", "range", "reversed", "round", "set", "sorted",
    "str", "sum", "tuple", "zip",
)  # fmt: skip
TYPE_NAMES = frozenset({"bool", "dict", "float", "frozenset", "int", "list", "set", "str", "tuple"})
KEY_FUNCTIONS = frozenset({"abs", "bool", "float", "int", "len", "str"})
#: Methods of builtin types a predicate may call: cost and result bounded by the receiver.
SAFE_METHODS = frozenset({
    "get", "keys", "values", "items",  # dict
    "count", "index",  # str, list, tuple
    "lower", "upper", "casefold", "strip", "lstrip", "rstrip", "startswith", "endswith",
    "find", "rfind", "split", "rsplit", "isdigit", "isalpha", "isalnum", "isspace",
    "isdecimal", "isnumeric", "islower", "isupper",  # str
    "issubset", "issuperset", "isdisjoint", "intersection", "difference",  # set
    "is_integer", "bit_length",  # numbers
})  # fmt: skip
#: Safe methods whose cost does not grow with the receiver (not charged in loops).
CONSTANT_TIME_METHODS = frozenset(
    {"get", "keys", "values", "items", "startswith", "endswith", "is_integer", "bit_length"}
)
DATA_ATTRIBUTES = frozenset({"real", "imag", "numerator", "denominator", "start", "stop", "step"})
_BUILTIN_TYPES: tuple[type, ...] = (
    str, bytes, bytearray, list, tuple, dict, set, frozenset, int, float, complex, bool, range,
    slice, type(None), memoryview, type({}.keys()), type({}.values()), type({}.items()),
    enumerate, zip, reversed, map, filter, type(iter([])), type(iter("")), types.GeneratorType,
    type, object,
)  # fmt: skip
#: Public attributes of builtin types; outside SAFE_METHODS/DATA_ATTRIBUTES they are refused.
BUILTIN_TYPE_ATTRIBUTES = frozenset(
    name for cls in _BUILTIN_TYPES for name in dir(cls) if not name.startswith("_")
)
_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.For, ast.Return, ast.Pass,
               ast.Break, ast.Continue, ast.Expr)  # fmt: skip
_EXPRESSIONS = (
    ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Dict, ast.Set, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.GeneratorExp, ast.Compare, ast.Call, ast.FormattedValue, ast.JoinedStr,
    ast.Constant, ast.Attribute, ast.Subscript, ast.Name, ast.List, ast.Tuple, ast.Slice,
)  # fmt: skip
_SUPPORT = (ast.arguments, ast.arg, ast.keyword, ast.comprehension, ast.expr_context,
            ast.boolop, ast.operator, ast.unaryop, ast.cmpop)  # fmt: skip
ALLOWED_NODES = _STATEMENTS + _EXPRESSIONS + _SUPPORT
ALLOWED_SUMMARY = (
    "a predicate may use assignments, if, for over a collection or a small range, return, "
    "comparisons, and/or/not, arithmetic, subscripts, comprehensions, and calls of "
    f"builtins ({', '.join(SAFE_BUILTINS)}), of allowed names and of methods"
)
ADVICE = {
    "Lambda": "write the expression inline, e.g. any(x > 0 for x in items)",
    "While": "loop with 'for x in <collection>' or 'for i in range(<small n>)'",
    "FunctionDef": "write one function and inline its helpers",
    "AsyncFunctionDef": "write one plain function and inline its helpers",
    "ClassDef": "predicates cannot define classes",
    "NamedExpr": "assign on a line of its own",
    "Starred": "pass items one by one; '*x' unpacking is not allowed",
    "Delete": "predicates cannot change values",
    "Assert": "return False instead",
    "Raise": "return False instead",
    "Try": "check with 'in' or '.get(key, default)' instead of catching errors",
}
_SPEC = re.compile(
    r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d+)?[_,]?(?:\.(?P<precision>\d+))?[bcdeEfFgGnosxX%]?"
)


def reject(node: ast.AST | None, reason: str) -> PredicateRejected:
    """The rejection for ``node``, pinned to its line."""
    return PredicateRejected(reason, line=getattr(node, "lineno", None))


def check_shape(tree: ast.AST, max_nodes: int, max_depth: int) -> None:
    """Count nodes and nesting depth with an explicit stack (no recursion)."""
    count, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > max_nodes:
            raise reject(node, f"the predicate has more than {max_nodes:,} syntax nodes")
        if depth > max_depth:
            raise reject(
                node, f"expressions nest deeper than {max_depth} levels; split them with "
                "intermediate variables",
            )  # fmt: skip
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def literal_defaults(
    args: ast.arguments, max_int_bits: int
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Default values, evaluated as literals and checked to be immutable and hashable."""
    positional_args = [*args.posonlyargs, *args.args]
    named = positional_args[len(positional_args) - len(args.defaults) :]
    pairs = list(zip(named, args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    values: dict[str, Any] = {}
    for arg, node in pairs:
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise reject(node, f"default values must be literals ({arg.arg!r})") from None
        if not _immutable(value, max_int_bits):
            raise reject(
                node, f"the default of {arg.arg!r} must be a number, string, bytes, bool, None "
                "or a tuple of these (a list, dict or set default is shared between calls)",
            )  # fmt: skip
        try:
            hash(value)
        except TypeError:
            raise reject(node, f"the default of {arg.arg!r} is not hashable") from None
        values[arg.arg] = value
    positional = tuple(values[a.arg] for a, _ in pairs[: len(args.defaults)])
    keyword = {a.arg: values[a.arg] for a, _ in pairs[len(args.defaults) :]}
    return positional, keyword


def _immutable(value: Any, max_int_bits: int) -> bool:
    if isinstance(value, tuple | frozenset):
        return all(_immutable(item, max_int_bits) for item in value)
    if isinstance(value, int):
        return value.bit_length() <= max_int_bits
    return value is None or isinstance(value, float | complex | str | bytes)


def is_literal_int(node: ast.AST, bound: int) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) <= bound


def is_numeric_literal(node: ast.AST) -> bool:
    """A number written in the source (``3``, ``-1.5``): it cannot grow a value."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex)


def store_names(target: ast.AST) -> Iterator[ast.Name]:
    """Names bound by an assignment target (a name or a tuple/list of them)."""
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from store_names(element)


def check_format_spec(node: ast.FormattedValue, max_width: int) -> None:
    """Format specs must be literal, with widths and precisions up to ``max_width``."""
    spec = node.format_spec
    if spec is None:
        return
    assert isinstance(spec, ast.JoinedStr)
    if not all(isinstance(v, ast.Constant) for v in spec.values):
        raise reject(node, "computed format specs (f'{x:>{n}}') are not allowed; use a literal one")
    text = "".join(str(v.value) for v in spec.values if isinstance(v, ast.Constant))
    match = _SPEC.fullmatch(text)
    if match is None:
        raise reject(node, f"format spec {text!r} is not a standard one")
    for part in ("width", "precision"):
        if match[part] is not None and int(match[part]) > max_width:
            raise reject(node, f"format {part} {match[part]} is over the limit of {max_width}")
