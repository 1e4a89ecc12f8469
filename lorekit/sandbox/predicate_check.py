"""The checker: walks a predicate's body and enforces ``predicate_rules``.

It runs after :func:`~lorekit.sandbox.predicate_rules.check_shape` has bounded
the tree's depth, so its recursion is shallow whatever the source is.
"""

from __future__ import annotations

import ast

from lorekit.sandbox.policy import DENIED_ATTRIBUTES
from lorekit.sandbox.predicate_rules import (
    ADVICE,
    ALLOWED_NODES,
    ALLOWED_SUMMARY,
    BUILTIN_TYPE_ATTRIBUTES,
    DATA_ATTRIBUTES,
    KEY_FUNCTIONS,
    SAFE_BUILTINS,
    SAFE_METHODS,
    TYPE_NAMES,
    check_format_spec,
    is_literal_int,
    is_numeric_literal,
    reject,
)

_CALLABLE = SAFE_METHODS | DATA_ATTRIBUTES
_METHOD_LIST = ", ".join(sorted(SAFE_METHODS))


class Checker(ast.NodeVisitor):
    """Enforces the allowlist on one function; raises ``PredicateRejected``."""

    def __init__(
        self, *, own_name: str, allowed: set[str], max_loop_depth: int, max_int_bits: int,
        max_format_width: int,
    ) -> None:  # fmt: skip
        self.own_name, self.allowed = own_name, allowed
        self.max_loop_depth, self.max_int_bits = max_loop_depth, max_int_bits
        self.max_format_width = max_format_width
        self.loads: list[ast.Name] = []
        self.stores: set[str] = set()
        self.depth = 0
        self.value_ok: set[int] = set()  # ids of builtin names allowed as values

    # -- structure -----------------------------------------------------------
    def generic_visit(self, node: ast.AST) -> None:
        if not isinstance(node, ALLOWED_NODES):
            kind = type(node).__name__
            advice = ADVICE.get(kind, ALLOWED_SUMMARY)
            raise reject(node, f"{kind} is not allowed in a predicate; {advice}")
        super().generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self._bind(node, node.arg, "parameter")

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target)
        self.visit(node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.MatMult):
            raise reject(node, "'@' is not allowed in a predicate")
        self._target(node.target)
        self.visit(node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None or not isinstance(node.target, ast.Name):
            raise reject(node, "write 'name = value' (annotations are ignored)")
        self._target(node.target)
        self.visit(node.value)

    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise reject(node, "for ... else is not allowed in a predicate")
        self.visit(node.iter)  # evaluated outside the loop
        self._enter_loop(node)
        self._target(node.target)
        for statement in node.body:
            self.visit(statement)
        self.depth -= 1

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> None:
        saved = self.depth
        for generator in node.generators:
            self.visit(generator)
        self.visit(node.elt)
        self.depth = saved

    visit_ListComp = visit_SetComp = visit_GeneratorExp = _comprehension

    def visit_DictComp(self, node: ast.DictComp) -> None:
        saved = self.depth
        for generator in node.generators:
            self.visit(generator)
        self.visit(node.key)
        self.visit(node.value)
        self.depth = saved

    def visit_comprehension(self, node: ast.comprehension) -> None:
        if node.is_async:
            raise reject(node.iter, "async comprehensions are not allowed")
        self.visit(node.iter)
        self._enter_loop(node.iter)
        self._target(node.target)
        for condition in node.ifs:
            self.visit(condition)

    def _enter_loop(self, node: ast.AST) -> None:
        self.depth += 1
        if self.depth > self.max_loop_depth:
            raise reject(
                node, f"loops and comprehensions nest deeper than {self.max_loop_depth}; "
                "loop over fewer levels",
            )  # fmt: skip

    def _target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            raise reject(target, "predicates may not set attributes")
        if isinstance(target, ast.Subscript):
            raise reject(
                target, "predicates may not change a collection (x[...] = ...); build a new "
                "value with a comprehension instead",
            )  # fmt: skip
        if isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._target(element)
            return
        if not isinstance(target, ast.Name):
            self.generic_visit(target)  # Starred and the like: rejected with advice
            return
        self._bind(target, target.id, "name")

    def _bind(self, node: ast.AST, name: str, what: str) -> None:
        if name.startswith("_") and name != "_":
            raise reject(node, f"{what} {name!r} is not allowed (leading underscore)")
        if name in SAFE_BUILTINS or name in self.allowed or name == self.own_name:
            raise reject(node, f"{what} {name!r} would hide the builtin or allowed name; rename it")
        self.stores.add(name)

    # -- expressions -----------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        if node.id.startswith("_") and node.id != "_":
            raise reject(node, f"name {node.id!r} is not allowed (leading underscore)")
        if node.id in SAFE_BUILTINS and id(node) not in self.value_ok:
            raise reject(
                node, f"builtin {node.id!r} may only be called (or be a key= or isinstance "
                "type argument)",
            )  # fmt: skip
        self.loads.append(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if type(node.value) is int and node.value.bit_length() > self.max_int_bits:
            raise reject(node, f"integer literal over {self.max_int_bits} bits")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult):
            raise reject(node, "'@' is not allowed in a predicate")
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        if any(key is None for key in node.keys):
            raise reject(node, "'**' unpacking in a dict is not allowed; merge with '|'")
        self.generic_visit(node)

    def visit_FormattedValue(self, node: ast.FormattedValue) -> None:
        check_format_spec(node, self.max_format_width)
        self.visit(node.value)

    def visit_Attribute(self, node: ast.Attribute, *, called: bool = False) -> None:
        name = node.attr
        if name.startswith("_") or name in DENIED_ATTRIBUTES:
            raise reject(node, f"attribute {name!r} is not allowed in a predicate")
        if not isinstance(node.ctx, ast.Load):
            raise reject(node, "predicates may not set attributes")
        # Only *calling* a method can cost anything, and a bound method held in a
        # variable cannot be called (calls of values are refused), so the method
        # allowlist applies to calls; reading `book.title` or `state.items` is fine.
        if called and name in BUILTIN_TYPE_ATTRIBUTES and name not in _CALLABLE:
            raise reject(
                node, f"method {name!r} is not allowed in a predicate (it can build values of "
                f"unbounded size or change a value); allowed methods: {_METHOD_LIST}",
            )  # fmt: skip
        self.visit(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if any(k.arg is None for k in node.keywords):
            raise reject(node, "'**' unpacking in a call is not allowed; pass keywords by name")
        if isinstance(func, ast.Attribute):
            self.visit_Attribute(func, called=True)
            strip = func.attr in ("strip", "lstrip", "rstrip")
            if strip and not all(isinstance(a, ast.Constant) for a in node.args):
                raise reject(
                    node,
                    f"{func.attr}() takes only literal characters, as in "
                    f"x.{func.attr}(' .') (its cost is their number times x's length)",
                )
        elif isinstance(func, ast.Name) and func.id == self.own_name:
            raise reject(node, "a predicate may not call itself")
        elif isinstance(func, ast.Name) and func.id in SAFE_BUILTINS:
            self.value_ok.add(id(func))
            self._builtin_call(func.id, node)
            self.visit(func)
        elif isinstance(func, ast.Name) and func.id not in self.allowed:
            if func.id in self.stores:
                raise reject(
                    node, f"{func.id!r} is a value, not a function a predicate may call; "
                    "pass helper functions in allowed_names",
                )  # fmt: skip
            raise reject(node, f"unknown name {func.id!r}; {ALLOWED_SUMMARY}")
        elif not isinstance(func, ast.Name):
            self.visit(func)  # a lambda gets its own, more useful, message
            raise reject(node, "only builtins, allowed names and methods can be called")
        else:
            self.visit(func)
        for arg in node.args:
            self.visit(arg)
        for keyword in node.keywords:
            self.visit(keyword.value)

    def _builtin_call(self, name: str, node: ast.Call) -> None:
        args, keywords = node.args, {k.arg: k.value for k in node.keywords}
        if name == "round":
            ndigits = args[1] if len(args) > 1 else keywords.get("ndigits")
            if ndigits is not None and not is_literal_int(ndigits, 300):
                raise reject(node, "round()'s ndigits must be a whole-number literal (-300..300)")
        elif name == "sum":
            start = args[1] if len(args) > 1 else keywords.get("start")
            if start is not None and not is_numeric_literal(start):
                raise reject(node, "sum()'s start must be a number literal; sum numbers only")
        elif name in ("min", "max", "sorted"):
            key = keywords.get("key")
            if key is not None:
                if not isinstance(key, ast.Name) or (
                    key.id not in KEY_FUNCTIONS and key.id not in self.allowed
                ):
                    raise reject(
                        node, f"{name}()'s key must be one of {', '.join(sorted(KEY_FUNCTIONS))} "
                        "or a function from allowed_names",
                    )  # fmt: skip
                self.value_ok.add(id(key))
        elif name == "isinstance" and len(args) == 2:
            types_arg = args[1]
            for element in types_arg.elts if isinstance(types_arg, ast.Tuple) else [types_arg]:
                if isinstance(element, ast.Name) and element.id in TYPE_NAMES:
                    self.value_ok.add(id(element))

    def check_names(self) -> None:
        """Every name read is a parameter, a local, a builtin or an allowed name."""
        for node in self.loads:
            if node.id == self.own_name:
                raise reject(node, "a predicate may not refer to itself")
            known = node.id in self.stores or node.id in self.allowed
            if not known and node.id not in SAFE_BUILTINS:
                raise reject(node, f"unknown name {node.id!r}")
