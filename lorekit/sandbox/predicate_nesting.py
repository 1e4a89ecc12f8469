"""Loops that nest a value inside itself, found before they run.

A loop such as ``t = (t,)`` or ``z = zip(z)`` makes a value one level deeper
every turn. Nothing about its *size* looks alarming (one tuple per turn), but
CPython recurses in C on nesting when it hashes a tuple or iterates nested
``zip`` objects, and at a depth of a few hundred thousand that overflows the C
stack and kills the process. The predicate language has no other way to
build nesting that grows with the number of loop turns: no mutation, no
recursion, comprehensions cannot carry values between turns. So it is enough
to look at the assignments inside each ``for`` loop.

Each assignment contributes edges ``source -> target`` with a *depth change*:
``+1`` when ``source``'s value becomes an element of a new container
(``[s]``, ``(s, x)``, ``{k: s}``, ``zip(s)``, a comprehension's element),
``0`` when it is passed through whole (``s``, ``s + t``, ``s[1:]``,
``list(s)``, ``a if c else s``), ``-1`` when an element of it is taken
(``s[0]``, ``for x in s``, ``a, b = s``). Results that are scalars or
strings (comparisons, ``len``, arithmetic on the parts, f-strings, method
results such as ``count`` or ``lower``) carry nothing. A cycle whose depth
changes add up to more than zero nests without bound and is refused;
``pos = (pos[0] + 1, pos[1])`` (total 0) is fine.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from lorekit.sandbox.predicate_rules import reject, store_names

_WRAPPING_CALLS = frozenset({"zip", "enumerate"})
_PASSING_CALLS = frozenset({"list", "tuple", "set", "frozenset", "sorted", "reversed", "dict",
                            "min", "max"})  # fmt: skip
_PASSING_METHODS = frozenset({"get", "keys", "values", "items", "intersection", "difference"})
Edge = tuple[str, str, int, ast.AST]


def flows(node: ast.AST, depth: int = 0) -> Iterator[tuple[str, int]]:
    """(name, depth change) for every name whose value flows into ``node``'s value."""
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Load):
            yield node.id, depth
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        for element in node.elts:
            yield from flows(element, depth + 1)
    elif isinstance(node, ast.Dict):
        for part in (*node.keys, *node.values):
            if part is not None:
                yield from flows(part, depth + 1)
    elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for element in elements:
            yield from flows(element, depth + 1)
        for generator in node.generators:
            yield from flows(generator.iter, depth)  # elements (-1) put in a container (+1)
    elif isinstance(node, ast.IfExp):
        yield from flows(node.body, depth)
        yield from flows(node.orelse, depth)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from flows(value, depth)
    elif isinstance(node, ast.BinOp):  # containers: + * | ^ - keep their elements' depth
        yield from flows(node.left, depth)
        yield from flows(node.right, depth)
    elif isinstance(node, ast.Subscript):
        taken = 0 if isinstance(node.slice, ast.Slice) else -1
        yield from flows(node.value, depth + taken)
    elif isinstance(node, ast.Call):
        yield from _call_flows(node, depth)


def _call_flows(node: ast.Call, depth: int) -> Iterator[tuple[str, int]]:
    func = node.func
    if isinstance(func, ast.Name) and func.id in _WRAPPING_CALLS:
        for arg in node.args:
            yield from flows(arg, depth + 1)
    elif isinstance(func, ast.Name) and func.id in _PASSING_CALLS:
        for arg in node.args:
            yield from flows(arg, depth)
        if func.id == "dict":
            for keyword in node.keywords:
                yield from flows(keyword.value, depth + 1)
    elif isinstance(func, ast.Attribute) and func.attr in _PASSING_METHODS:
        yield from flows(func.value, depth)
        for arg in node.args:
            yield from flows(arg, depth)


def _edges(loop: ast.For) -> Iterator[Edge]:
    """Every flow between names made by the assignments inside ``loop``'s body."""
    for statement in loop.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, ast.AugAssign | ast.AnnAssign) and node.value is not None:
                pairs = [(node.target, node.value), (node.target, node.target)]
            elif isinstance(node, ast.For):
                pairs = [(node.target, ast.Subscript(node.iter, ast.Constant(0), ast.Load()))]
            else:
                continue
            for target, value in pairs:
                unpacked = -1 if isinstance(target, ast.Tuple | ast.List) else 0
                for name, change in flows(value):
                    for bound in store_names(target):
                        yield name, bound.id, change + unpacked, node


def check_nesting(func: ast.FunctionDef) -> None:
    """Refuse a loop whose assignments nest a value deeper on every turn."""
    for loop in (n for n in ast.walk(func) if isinstance(n, ast.For)):
        edges = list(_edges(loop))
        names = {e[0] for e in edges} | {e[1] for e in edges}
        deepest = dict.fromkeys(names, 0)
        for _ in range(len(names) + 1):  # Bellman-Ford for the longest paths
            grown = None
            for source, target, change, node in edges:
                if deepest[source] + change > deepest[target]:
                    deepest[target] = deepest[source] + change
                    grown = (source, target, node)
            if grown is None:
                break
        else:
            assert grown is not None
            source, target, node = grown
            raise reject(
                node, f"{target!r} is put inside a new container built from {source!r} on every "
                "turn of the loop, so its nesting grows without bound; collect values with a "
                "comprehension or keep the parts in separate names",
            )  # fmt: skip
