"""``compile_predicate``: small pure functions from model text, checked, total and fast.

Reward predicates are written by a model from mined laws and called on every
step of reinforcement learning, so they cannot pay for a process round trip;
and since they run in-process, a predicate must not be able to hang or
exhaust memory. The route:

1. The source must be one ``def`` in a deliberately small language (see
   :mod:`lorekit.sandbox.predicate_rules`): no ``while``, no lambdas or
   recursion, ``for`` only over existing collections and small ranges, a
   short list of builtins and of methods whose cost is bounded by their
   receiver, literal format specs, bounded syntax depth and size.
2. The *checked tree* (never the text) is rewritten so that the few operators
   that can grow values go through size guards, and loops charge a per-call
   step budget (:mod:`lorekit.sandbox.predicate_runtime`).
3. It is compiled and bound to a namespace holding only safe builtins, the
   guards and the caller's names. No statement runs at definition time: the
   function object is built from its code object, with literal defaults.

Together these make every call total: it returns, raises
:class:`PredicateError`, or stops with a :class:`PredicateError` saying which
limit it hit, in time and memory bounded by :class:`PredicateLimits` and the
size of the arguments (which the caller supplies and trusts).
"""

from __future__ import annotations

import ast
import builtins
import types
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lorekit.sandbox.errors import PredicateError, PredicateRejected
from lorekit.sandbox.predicate_check import Checker
from lorekit.sandbox.predicate_nesting import check_nesting
from lorekit.sandbox.predicate_rewrite import Rewriter
from lorekit.sandbox.predicate_rules import (
    SAFE_BUILTINS,
    check_shape,
    literal_defaults,
    reject,
)
from lorekit.sandbox.predicate_runtime import BudgetExceeded, runtime_helpers

__all__ = ["SAFE_BUILTINS", "Predicate", "PredicateLimits", "compile_predicate"]


@dataclass(frozen=True)
class PredicateLimits:
    """Bounds on what a predicate may say and on what one call may do.

    ``max_steps`` is the per-call budget: entering a loop costs its item count
    times the size of its body, and inside loops every operation that scans a
    collection costs that collection's length. ``max_sequence`` bounds every
    string, list, tuple, set or dict a predicate *grows* (with ``+``, ``*``,
    ``|``, ``^``, f-strings, ``str()``); ``max_int_bits`` every integer it
    makes with ``+ - * ** << | ^``.
    """

    max_range: int = 10_000
    max_loop_depth: int = 2
    max_sequence: int = 10_000
    max_int_bits: int = 4_096
    max_exponent: int = 256
    max_shift: int = 4_096
    max_steps: int = 1_000_000
    max_format_width: int = 100
    max_nodes: int = 2_000
    max_depth: int = 60
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
        # compile_predicate's predicates skip this: their class calls the function
        # directly, and the function turns its own errors into PredicateError.
        try:
            return self.function(*args, **kwargs)
        except Exception as exc:
            raise as_predicate_error(exc, self.name, self._filename) from None

    def __repr__(self) -> str:
        return f"<Predicate {self.name}({', '.join(self.params)})>"


def as_predicate_error(exc: Exception, name: str, filename: str) -> PredicateError:
    """The typed error for an exception raised while calling predicate ``name``.

    The line is the last one of the predicate's own code in the traceback; a
    limit stop reads "stopped", any other exception "failed" with its type.
    """
    if isinstance(exc, PredicateError) and not isinstance(exc, BudgetExceeded):
        return exc
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    if isinstance(exc, BudgetExceeded):
        error = PredicateError(f"{name} stopped: {exc.message}", line=line)
    else:
        text = _describe(exc)
        error = PredicateError(f"{name} failed: {text}", line=line, exc_type=type(exc).__name__)
        error.__cause__ = exc
    error.__suppress_context__ = True
    return error


def _describe(exc: BaseException, limit: int = 300) -> str:
    """The exception's text, short: a KeyError's text is the repr of a whole key."""
    try:
        text = str(exc)
    except Exception:  # e.g. the repr of a deeply nested key recurses too far
        return type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def _parse(source: str, limits: PredicateLimits) -> ast.FunctionDef:
    if len(source) > limits.max_source_chars:
        raise PredicateRejected(f"source longer than {limits.max_source_chars:,} characters")
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        raise PredicateRejected(f"syntax error: {exc.msg}", line=exc.lineno) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise PredicateRejected(f"cannot parse: {exc}") from None
    check_shape(tree, limits.max_nodes, limits.max_depth)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise reject(tree.body[0] if tree.body else None, "source must be exactly one 'def'")
    func = tree.body[0]
    if func.decorator_list:
        raise reject(func, "decorators are not allowed")
    if func.name.startswith("_"):
        raise reject(func, f"function name {func.name!r} is not allowed")
    return func


def _check(func: ast.FunctionDef, names: set[str], limits: PredicateLimits) -> None:
    checker = Checker(
        own_name=func.name,
        allowed=names,
        max_loop_depth=limits.max_loop_depth,
        max_int_bits=limits.max_int_bits,
        max_format_width=limits.max_format_width,
    )
    checker.visit(func.args)
    for statement in func.body:
        checker.visit(statement)
    checker.check_names()
    check_nesting(func)


def compile_predicate(
    source: str,
    allowed_names: Mapping[str, Any] | None = None,
    *,
    limits: PredicateLimits | None = None,
) -> Predicate:
    """Check ``source`` (one ``def``) against the predicate language and compile it.

    ``allowed_names`` are extra globals the predicate may read and call
    (constants, classes for ``isinstance``, trusted helper functions): they
    and the arguments are trusted, so their own methods are the caller's
    responsibility. Raises :class:`PredicateRejected` naming the line and the
    construct; calls that fail or hit a limit raise :class:`PredicateError`.
    """
    limits = limits or PredicateLimits()
    if not isinstance(source, str):
        raise TypeError("source must be a string")
    names = dict(allowed_names or {})
    bad = [n for n in names if not n.isidentifier() or n.startswith("_")]
    if bad:
        raise ValueError(f"allowed_names must be public identifiers: {bad}")
    func = _parse(source, limits)
    for arg in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs,
                func.args.vararg, func.args.kwarg):  # fmt: skip
        if arg is not None:
            arg.annotation = None  # annotations would be evaluated: drop them
    func.returns = None
    defaults, kwdefaults = literal_defaults(func.args, limits.max_int_bits)
    filename = f"<predicate {func.name}>"
    try:
        _check(func, set(names), limits)
        module = ast.Module([Rewriter(limits.max_steps).rewrite(func)], type_ignores=[])
        with warnings.catch_warnings():  # "'int' object is not subscriptable" and such
            warnings.simplefilter("ignore", SyntaxWarning)
            module_code = compile(ast.fix_missing_locations(module), filename, "exec")
    except RecursionError:
        raise PredicateRejected("the predicate is nested too deeply to check") from None
    code = next(c for c in module_code.co_consts if isinstance(c, types.CodeType))
    namespace: dict[str, Any] = {"__builtins__": {}, "__name__": "predicate"}
    namespace.update({name: getattr(builtins, name) for name in SAFE_BUILTINS})
    namespace.update(
        runtime_helpers(
            max_sequence=limits.max_sequence,
            max_int_bits=limits.max_int_bits,
            max_steps=limits.max_steps,
            max_range=limits.max_range,
            max_exponent=limits.max_exponent,
            max_shift=limits.max_shift,
        )
    )
    name = func.name
    namespace["_sb_fail"] = lambda exc: as_predicate_error(exc, name, filename)
    namespace["_sb_exception"] = Exception
    namespace.update(names)
    function = types.FunctionType(code, namespace, func.name, defaults or None)
    if kwdefaults:
        function.__kwdefaults__ = kwdefaults
    # A class of its own whose __call__ *is* the function: calling the predicate
    # costs no more than calling the function (it handles its own errors).
    direct = type("Predicate", (Predicate,), {"__slots__": (), "__call__": staticmethod(function)})
    predicate: Predicate = direct(function, source, filename)
    return predicate
