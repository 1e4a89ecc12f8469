"""Typed errors of the graph engine.

Two families, on purpose. :class:`GraphError` is a mistake in how a graph is
built or edited (a cycle, an unknown node, an edit that would race); it is
raised before anything changes, so the graph is left as it was. The others
describe a pass that ran: :class:`AfterQueryError` is how a parser or hook
tells the model what was wrong with its answer, and :class:`NodeFailedError`
reports nodes that still failed after their retries (each a
:class:`NodeFailure`, the typed result a failed node leaves). The bottom of
the graph engine: it imports no other graph module at run time.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lorekit.llm.ask import ParseError

if TYPE_CHECKING:
    from lorekit.graph.trace import PassReport

FailureKind = Literal["after_query", "model", "upstream", "hook"]

HOOK_FILE_MODULE = "lorekit_spec_hooks_"
"""Prefix of the module names a spec's file hooks are loaded under (see :mod:`.hooks`)."""


class GraphError(ValueError):
    """The graph cannot be built, edited or evaluated as asked.

    ``node`` and ``field`` say where the problem is, when it is one node's
    (a spec loader turns them into ``file:line:column``).
    """

    def __init__(self, message: str, *, node: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.node = node
        self.field = field


class CycleError(GraphError):
    """An edge (or a dependency list) would close a cycle; ``cycle`` spells it out."""

    def __init__(self, cycle: Sequence[str]) -> None:
        self.cycle = list(cycle)
        super().__init__(
            "the graph would have a cycle: " + " <- ".join(self.cycle),
            node=self.cycle[0],
            field="deps",
        )


class RaceError(GraphError):
    """A node reads a database key that an unordered node writes in the same pass."""

    def __init__(self, reader: str, writer: str, key: str, field: str = "prompt") -> None:
        self.reader, self.writer, self.key = reader, writer, key
        super().__init__(
            f"race on database key {key!r}: node {reader!r} reads it and node {writer!r} "
            "writes it, but neither depends on the other; add an edge between them so "
            "the order is defined",
            node=reader,
            field=field,
        )


class AccessError(GraphError):
    """A hook or compose touched a database key its node did not declare.

    Declared reads and writes are what the race check (and so the promise that a
    concurrent pass equals a sequential one) is built on; an undeclared access
    could race silently, so it is refused the moment it happens.
    """


class MissingValueError(GraphError, KeyError):
    """A prompt referenced a database value or node result that is not there.

    Raised instead of rendering the hole as ``None``: a prompt with a hole
    looks plausible to a model and produces confident nonsense.
    """

    def __init__(self, node: str, key: str, why: str = "is not in the database") -> None:
        self.key = key
        super().__init__(f"node {node!r}: the prompt reads {key!r}, which {why}", node=node)

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class AfterQueryError(ParseError):
    """An answer the node cannot use; ``feedback`` is shown to the model.

    Parsers and after-query hooks raise it. The node asks again with the
    feedback appended to the conversation, up to its retry limit. It is the
    graph's :class:`~lorekit.llm.ask.ParseError`, so a parser written for
    :func:`lorekit.llm.ask` works as a node's parser and the other way round.
    """

    def __init__(self, feedback: str) -> None:
        super().__init__(feedback)


class NodeFailedError(RuntimeError):
    """Some nodes of a pass failed for good (after their retries).

    Raised after every node that did not depend on a failure has finished, so
    ``results`` holds everything the pass could still compute and ``report``
    holds every node's trace, including the failed ones.
    """

    def __init__(
        self,
        failures: Sequence[NodeFailure],
        results: Mapping[str, Any],
        report: PassReport,
    ) -> None:
        self.failures = list(failures)
        self.results = dict(results)
        self.report = report
        first = self.failures[0]
        more = f" (and {len(self.failures) - 1} more)" if len(self.failures) > 1 else ""
        super().__init__(f"node {first.key!r} failed: {first.error}{more}")


@dataclass(frozen=True, slots=True)
class NodeFailure:
    """A node that produced no usable result in a pass: typed, never a placeholder string.

    ``kind`` is ``after_query`` (answers kept failing the parser or hook),
    ``model`` (the model call itself failed) or ``upstream`` (a dependency failed,
    so the node did not run).
    """

    key: str
    kind: FailureKind
    error: str
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return False

    def to_dict(self) -> dict[str, Any]:
        return {
            "failure": self.kind,
            "key": self.key,
            "error": self.error,
            "attempts": self.attempts,
        }


def hook_name(fn: Any) -> str:
    """How errors name a hook: ``hooks.py:learn`` for a spec's file hook, else
    ``module.qualname`` (the gate of a branch names its inner hook, if any)."""
    inner = getattr(fn, "inner", None)
    if getattr(fn, "branch_gate", False):
        return hook_name(inner) if inner is not None else "branch gate"
    qual = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None) or ""
    if module.startswith(HOOK_FILE_MODULE):
        file = getattr(sys.modules.get(module), "__file__", None)
        return f"{Path(file).name if file else module}:{qual}"
    return f"{module}.{qual}" if module else qual
