"""Execution orders: how a plan's steps combine, e.g. ``((Step 1 OR Step 2) AND Step 3)``.

A planner writes the order as text; :func:`parse_execution_order` turns it into
a small tree of :class:`StepRef`, :class:`AllOf` (AND) and :class:`AnyOf` (OR).
AND binds tighter than OR, as in boolean algebra and in most programming
languages, so ``Step 1 OR Step 2 AND Step 3`` means ``Step 1 OR (Step 2 AND
Step 3)``; brackets override that. The published ADaPT code splits the order
on one operator per level and so loses mixed orders; a real parser does not.

Malformed orders raise :class:`OrderError` whose message is written for the
planner: it is sent back verbatim so the planner can fix its answer.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

_TOKEN = re.compile(
    r"\s*+(?:(?P<open>\()|(?P<close>\))|(?P<and>and\b|&&|&)|(?P<or>or\b|\|\||\|)"
    r"|(?:step\s*+(?:#\s*+)?+)?+(?P<num>\d++)\b)",
    re.IGNORECASE,
)
MAX_DEPTH = 20
"""Deepest bracket nesting accepted: plans have a few steps, and the parser recurses."""
MAX_CHARS = 2_000
"""Longest order accepted; a plan of at most a few dozen steps needs far less."""
_MAX_DIGITS = 6


class OrderError(ValueError):
    """An execution order that cannot be used; the message says why, for the planner."""


@dataclass(frozen=True, slots=True)
class StepRef:
    """A leaf: run plan step ``index`` (1-based)."""

    index: int


@dataclass(frozen=True, slots=True)
class AllOf:
    """AND: every child must succeed; evaluation stops at the first failure."""

    children: tuple[OrderNode, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """OR: one child must succeed; evaluation stops at the first success."""

    children: tuple[OrderNode, ...]


OrderNode = StepRef | AllOf | AnyOf


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, position) triples; anything unknown is an error naming it."""
    tokens: list[tuple[str, str, int]] = []
    pos = 0
    end = len(text.rstrip())
    while pos < end:
        match = _TOKEN.match(text, pos)
        if match is None or match.lastgroup is None:
            start = pos + len(text[pos:]) - len(text[pos:].lstrip())
            words = text[start : start + 80].split()
            bad = words[0] if words else text[start : start + 80]
            raise OrderError(
                f"unexpected {bad!r} at character {start + 1}; an execution order uses only "
                "'Step <n>', AND, OR and brackets, e.g. ((Step 1 OR Step 2) AND Step 3)"
            )
        kind = match.lastgroup
        tokens.append((kind, match.group(kind), match.start(kind)))
        pos = match.end()
    return tokens


class _Parser:
    """Recursive descent over: or := and (OR and)* ; and := atom (AND atom)* ;
    atom := step | '(' or ')'."""

    def __init__(self, tokens: list[tuple[str, str, int]], n_steps: int | None) -> None:
        self.tokens = tokens
        self.i = 0
        self.n_steps = n_steps
        self.seen: set[int] = set()
        self.depth = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def where(self) -> str:
        if self.i < len(self.tokens):
            _, text, pos = self.tokens[self.i]
            return f"{text!r} at character {pos + 1}"
        return "the end of the order"

    def parse_or(self) -> OrderNode:
        parts = [self.parse_and()]
        while self.peek() == "or":
            self.i += 1
            parts.append(self.parse_and())
        return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))

    def parse_and(self) -> OrderNode:
        parts = [self.parse_atom()]
        while self.peek() == "and":
            self.i += 1
            parts.append(self.parse_atom())
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def parse_atom(self) -> OrderNode:
        kind = self.peek()
        if kind == "num":
            _, text, _ = self.tokens[self.i]
            if len(text) > _MAX_DIGITS:
                raise OrderError(
                    f"step number {text[:12]}... is too long; steps are numbered 1, 2, 3"
                )
            self.i += 1
            return self.step(int(text))
        if kind == "open":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise OrderError(f"brackets nest more than {MAX_DEPTH} deep; write a flatter order")
            self.i += 1
            inner = self.parse_or()
            self.depth -= 1
            if self.peek() != "close":
                raise OrderError(f"expected ')' but found {self.where()}; brackets must balance")
            self.i += 1
            return inner
        raise OrderError(f"expected 'Step <n>' or '(' but found {self.where()}")

    def step(self, index: int) -> StepRef:
        if index < 1:
            raise OrderError(f"Step {index} does not exist; steps are numbered from 1")
        if self.n_steps is not None and index > self.n_steps:
            raise OrderError(
                f"Step {index} does not exist; the plan has {self.n_steps} step"
                + ("" if self.n_steps == 1 else "s")
            )
        if index in self.seen:
            raise OrderError(f"Step {index} appears more than once; use each step at most once")
        self.seen.add(index)
        return StepRef(index)


def parse_execution_order(text: str, n_steps: int | None = None) -> OrderNode:
    """Parse an order such as ``((Step 1 OR Step 2) AND Step 3)`` into a tree.

    ``n_steps`` (the plan's length) makes references past the end an error.
    Accepts ``Step 3``, ``step #3`` or a bare ``3``, ``AND``/``&&``/``&`` and
    ``OR``/``||``/``|`` in any case, and a trailing period or backticks.
    """
    cleaned = text.strip().strip("`").strip().rstrip(".").strip()
    if not cleaned:
        raise OrderError("the execution order is empty; write e.g. Step 1 AND Step 2")
    if len(cleaned) > MAX_CHARS:
        raise OrderError(
            f"the execution order has {len(cleaned)} characters, more than {MAX_CHARS}; "
            "write a short one, e.g. ((Step 1 OR Step 2) AND Step 3)"
        )
    parser = _Parser(_tokenize(cleaned), n_steps)
    node = parser.parse_or()
    if parser.i != len(parser.tokens):
        extra = parser.where()
        hint = "an unmatched ')'" if parser.peek() == "close" else "a missing AND or OR"
        raise OrderError(f"unexpected {extra} ({hint}?)")
    return node


def format_order(node: OrderNode) -> str:
    """Canonical text of an order: every compound part bracketed."""
    if isinstance(node, StepRef):
        return f"Step {node.index}"
    word = " AND " if isinstance(node, AllOf) else " OR "
    return "(" + word.join(format_order(c) for c in node.children) + ")"


def step_indices(node: OrderNode) -> list[int]:
    """The steps an order mentions, left to right."""
    if isinstance(node, StepRef):
        return [node.index]
    return [i for c in node.children for i in step_indices(c)]


def evaluate(node: OrderNode, run: Callable[[int], bool]) -> bool:
    """Run steps left to right with short-circuits: AND stops at the first
    failure, OR at the first success. ``run(index)`` plays one step."""
    if isinstance(node, StepRef):
        return run(node.index)
    if isinstance(node, AllOf):
        return all(evaluate(c, run) for c in node.children)
    return any(evaluate(c, run) for c in node.children)


async def evaluate_async(
    node: OrderNode,
    run: Callable[[int], Awaitable[bool]],
    stop: Callable[[], bool | None] = lambda: None,
) -> bool:
    """:func:`evaluate` for async step runners.

    ``stop()`` is asked after every step; a non-None answer ends the whole
    evaluation with that result (the episode ended, so nothing else may run).
    """

    class _Stopped(Exception):
        def __init__(self, result: bool) -> None:
            self.result = result

    async def walk(n: OrderNode) -> bool:
        if isinstance(n, StepRef):
            ok = await run(n.index)
            verdict = stop()
            if verdict is not None:
                raise _Stopped(verdict)
            return ok
        want_all = isinstance(n, AllOf)
        for child in n.children:
            ok = await walk(child)
            if ok != want_all:
                return ok
        return want_all

    try:
        return await walk(node)
    except _Stopped as stopped:
        return stopped.result
