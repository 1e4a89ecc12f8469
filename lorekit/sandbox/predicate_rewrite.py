"""Rewrites a checked predicate so that its run-time guards are called.

See :mod:`lorekit.sandbox.predicate_runtime` for what the guards do. The
rewrite is careful to leave the common path alone: comparisons, boolean
logic, subscripts, ``.get`` and arithmetic with a numeric literal compile to
exactly the bytecode Python would produce, and a predicate without loops gets
no step budget at all.
"""

from __future__ import annotations

import ast
from typing import TypeVar

from lorekit.sandbox.predicate_rules import CONSTANT_TIME_METHODS, SAFE_METHODS, is_numeric_literal

_BOX = "_sb_box"
#: Builtins that copy their argument: charged by its length wherever they run.
_COPYING = frozenset({"dict", "frozenset", "list", "set", "sorted", "tuple"})
#: Builtins that scan their argument: charged by its length inside loops.
_SCANNING = frozenset({"all", "any", "float", "int", "max", "min", "sum"})
#: Methods that build a value as big as their receiver, and those that only scan it.
_COPYING_METHODS = frozenset(
    {"split", "rsplit", "lower", "upper", "casefold", "strip", "lstrip", "rstrip",
     "intersection", "difference"}
)  # fmt: skip
_SCANNING_METHODS = SAFE_METHODS - CONSTANT_TIME_METHODS - _COPYING_METHODS
_Node = TypeVar("_Node", bound=ast.AST)


def _call(helper: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(helper, ast.Load()), list(args), [])


def _float_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is float


def _literal(node: ast.AST) -> bool:
    """A constant or a display of constants: comparing with it costs its own size."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(isinstance(e, ast.Constant) for e in node.elts)
    return False


def _size(nodes: list[ast.AST]) -> int:
    """How many expressions and statements one pass over ``nodes`` evaluates, at most."""
    return sum(1 for root in nodes for n in ast.walk(root) if isinstance(n, ast.expr | ast.stmt))


_GUARDS = {
    ast.Add: "_sb_add", ast.Sub: "_sb_sub", ast.Mult: "_sb_mul", ast.Pow: "_sb_pow",
    ast.LShift: "_sb_lshift", ast.RShift: "_sb_rshift", ast.Mod: "_sb_mod",
    ast.FloorDiv: "_sb_floordiv", ast.Div: "_sb_truediv", ast.BitOr: "_sb_or",
    ast.BitXor: "_sb_xor", ast.BitAnd: "_sb_and",
}  # fmt: skip


def _guard_for(node: ast.BinOp, in_loop: bool) -> str | None:
    """The guard a binary operation needs, or ``None`` when it cannot blow up.

    Outside loops an operation runs once, so only growth matters: ``+`` can
    double a string or list (unless an operand is a number literal), ``*``,
    ``**`` and ``<<`` can make huge values, ``%`` on a string is printf
    formatting, and ``//``/``/`` of two variables can be a quadratic division
    of the caller's huge integers. ``-``, ``|``, ``^``, ``&`` and ``>>`` add at
    most a bit or the operands' items. Inside loops every operation is guarded
    so that big integers pay for their size. A float literal operand makes the
    result a float (or an error), which is always cheap.
    """
    op, left, right = node.op, node.left, node.right
    helper = _GUARDS.get(type(op))
    if helper is None:
        return None
    if isinstance(op, ast.Mod):
        return None if is_numeric_literal(left) else helper
    if _float_literal(left) or _float_literal(right):
        return None
    if in_loop:
        return helper
    numeric = is_numeric_literal(left) or is_numeric_literal(right)
    if isinstance(op, ast.Add | ast.FloorDiv | ast.Div):
        return None if numeric else helper
    if isinstance(op, ast.Mult | ast.Pow | ast.LShift):
        return helper
    return None


class Rewriter(ast.NodeTransformer):
    """Inserts guard calls; ``in_loop`` says whether code runs once per loop turn."""

    def __init__(self, max_steps: int) -> None:
        self.max_steps = max_steps
        self.in_loop = False
        self.uses_box = False

    def box(self) -> ast.expr:
        return ast.Name(_BOX, ast.Load()) if self.in_loop else ast.Constant(None)

    def _loop_iter(self, iterable: ast.expr, weight: int) -> ast.Call:
        self.uses_box = True
        return _call("_sb_loop", ast.Name(_BOX, ast.Load()), ast.Constant(weight), iterable)

    def rewrite(self, func: ast.FunctionDef) -> ast.FunctionDef:
        """The function with guards inserted, a step budget if it loops, and its
        body wrapped so that any exception leaves it as a ``PredicateError``
        (``_sb_fail`` builds it); ``try`` costs nothing until something raises."""
        head: list[ast.stmt] = func.body[:1] if ast.get_docstring(func) is not None else []
        body: list[ast.stmt] = []
        for statement in func.body[len(head) :]:
            new = self.visit(statement)
            body.extend(new if isinstance(new, list) else [new])
        if self.uses_box:
            budget = ast.List([ast.Constant(self.max_steps)], ast.Load())
            head.append(ast.Assign([ast.Name(_BOX, ast.Store())], budget))
        fail = ast.Raise(_call("_sb_fail", ast.Name("_sb_exc", ast.Load())), None)
        handler = ast.ExceptHandler(ast.Name("_sb_exception", ast.Load()), "_sb_exc", [fail])
        func.body = [*head, ast.Try(body or [ast.Pass()], [handler], [], [])]
        return func

    # -- statements --------------------------------------------------------------
    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        assert isinstance(node.target, ast.Name)  # the checker allows names only
        load = ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target)
        binop = ast.copy_location(ast.BinOp(load, node.op, node.value), node)
        assign = ast.copy_location(ast.Assign([node.target], binop), node)
        return self.visit_Assign(assign)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        assert node.value is not None
        return self.visit_Assign(ast.copy_location(ast.Assign([node.target], node.value), node))

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        node.value = self.visit(node.value)
        return node

    def visit_For(self, node: ast.For) -> ast.AST:
        weight = 1 + _size(list(node.body))
        iterable = self.visit(node.iter)
        outer, self.in_loop = self.in_loop, True
        body: list[ast.stmt] = []
        for statement in node.body:
            new = self.visit(statement)
            body.extend(new if isinstance(new, list) else [new])
        node.body = body
        self.in_loop = outer
        node.iter = ast.copy_location(self._loop_iter(iterable, weight), node.iter)
        return node

    # -- comprehensions ------------------------------------------------------------
    def _generators(self, generators: list[ast.comprehension], results: list[ast.expr]) -> None:
        outer = self.in_loop
        for i, generator in enumerate(generators):
            later: list[ast.AST] = [*generator.ifs, *generators[i + 1 :], *results]
            weight = 1 + _size(later)
            self.in_loop = outer if i == 0 else True  # the first iterable runs outside
            iterable = self.visit(generator.iter)
            generator.iter = ast.copy_location(self._loop_iter(iterable, weight), iterable)
            self.in_loop = True
            generator.ifs = [self.visit(condition) for condition in generator.ifs]

    def _comprehension(self, node: _Node) -> _Node:
        assert isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp)
        outer = self.in_loop
        self._generators(node.generators, [node.elt])
        node.elt = self.visit(node.elt)
        self.in_loop = outer
        return node

    visit_ListComp = visit_SetComp = visit_GeneratorExp = _comprehension

    def visit_DictComp(self, node: ast.DictComp) -> ast.AST:
        outer = self.in_loop
        self._generators(node.generators, [node.key, node.value])
        node.key, node.value = self.visit(node.key), self.visit(node.value)
        self.in_loop = outer
        return node

    # -- expressions -----------------------------------------------------------------
    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        helper = _guard_for(node, self.in_loop)
        if helper is None:
            return node
        return ast.copy_location(_call(helper, self.box(), node.left, node.right), node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        self.generic_visit(node)
        if not any(isinstance(v, ast.FormattedValue) for v in node.values):
            return node
        return ast.copy_location(_call("_sb_text", self.box(), node), node)

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.AST:
        node.value = self.visit(node.value)  # the spec is a literal: leave it be
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        # Copies are charged everywhere (a few hundred straight-line copies of a
        # big argument would add up); scans only inside loops, where they repeat.
        if isinstance(func, ast.Name) and (
            func.id in _COPYING or (self.in_loop and func.id in _SCANNING)
        ):
            node.args = [self._cost(arg) for arg in node.args]
        elif isinstance(func, ast.Attribute) and (
            func.attr in _COPYING_METHODS or (self.in_loop and func.attr in _SCANNING_METHODS)
        ):
            func.value = self._cost(func.value)  # and its arguments: a.issubset(b) reads b
            node.args = [self._cost(arg) for arg in node.args]
        if isinstance(func, ast.Name) and func.id == "str":  # repr can double escapes
            return ast.copy_location(_call("_sb_text", self.box(), node), node)
        return node

    def _cost(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.DictComp):
            return node  # charged by its own loops
        if _literal(node):
            return node
        self.uses_box = True
        return ast.copy_location(_call("_sb_cost", ast.Name(_BOX, ast.Load()), node), node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.slice, ast.Slice):  # a copy: charged like list()
            return self._cost(node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if not self.in_loop:
            return node
        operands = [node.left, *node.comparators]
        for i, op in enumerate(node.ops):
            left, right = operands[i], operands[i + 1]
            if isinstance(op, ast.In | ast.NotIn):
                if not _literal(right):
                    self.uses_box = True
                    box = ast.Name(_BOX, ast.Load())
                    operands[i + 1] = ast.copy_location(_call("_sb_scan", box, right), right)
            elif not isinstance(op, ast.Is | ast.IsNot) and not (_literal(left) or _literal(right)):
                operands[i] = self._cost(left)
        node.left, node.comparators = operands[0], operands[1:]
        return node
