"""A node of an agent graph: one prompt, its dependencies, and what to do with the answer.

A node is plain data (a frozen dataclass) so a graph can be copied, compared,
rendered and rebuilt from a YAML spec without surprises. What it does at run
time is decided by a few optional callables: ``compose`` (build the messages),
``parser`` (turn the answer into a value, or reject it) and ``after_query``
(update the database or the graph once the value is accepted).

What those callables receive lives here too, since the node's fields name
them: :class:`ComposeInput` for ``compose`` and :class:`NodeContext` for
``after_query``, whose ``graph`` is seen through the :class:`PassGraph`
protocol (the graph module builds on this one, not the other way round).
:class:`NodeFailure` is defined in :mod:`lorekit.graph.errors` and re-exported.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Protocol

from lorekit.graph.errors import FailureKind as FailureKind
from lorekit.graph.errors import GraphError, MissingValueError
from lorekit.graph.errors import NodeFailure as NodeFailure
from lorekit.graph.schema import check_schema
from lorekit.graph.values import lookup, render_value

if TYPE_CHECKING:
    from lorekit.llm.base import MessageLike

DepMode = Literal["qa", "short", "hidden"]
"""How a dependency appears in a node's prompt: its question and answer (``qa``),
its result only (``short``, the "shorthand" option), or not at all (``hidden``:
an ordering constraint only, e.g. a gate before the nodes it controls)."""

OutputKind = Literal["text", "json", "choice", "regex"]
WriteMode = Literal["set", "append", "extend", "merge"]
DepOverflow = Literal["keep_end", "keep_start", "keep_both", "summarize"]
"""What to do with a dependency answer longer than ``max_dep_chars``: keep its end
(what AgentKit's shrinking keeps), its start, both ends, or have a model summarise it."""
JsonTake = Literal["whole", "last"]

Parser = Callable[[str], Any]
"""Answer text -> value; raises :class:`AfterQueryError` to ask the model again."""
AfterQuery = Callable[["NodeContext", Any], "Any | Awaitable[Any]"]
"""``(context, parsed output) -> result``; may update ``context.db`` and edit the graph."""
ComposeFn = Callable[["ComposeInput"], "Sequence[MessageLike] | str"]

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_VALUE = re.compile(r"^output(\.[\w-]+)*$")
_REF = re.compile(r"\{\{([^{}]*)\}\}|\{(@?)([A-Za-z_][\w-]*(?:\.[\w-]+)*)\}")


@dataclass(frozen=True, slots=True)
class Ref:
    """One ``{placeholder}`` of a template: a database path or (``@``) a node result."""

    name: str
    path: tuple[str, ...]
    node: bool

    @property
    def text(self) -> str:
        return ("@" if self.node else "") + ".".join((self.name, *self.path))


@lru_cache(maxsize=4096)
def template_refs(template: str) -> tuple[Ref, ...]:
    """The placeholders of a template, in order. ``{{x}}`` is a literal ``{x}``, and
    braces around anything that is not a name (JSON examples) are left alone."""
    out = []
    for m in _REF.finditer(template):
        if m.group(1) is None:
            name, *path = m.group(3).split(".")
            out.append(Ref(name, tuple(path), m.group(2) == "@"))
    return tuple(out)


def substitute(template: str, value_of: Callable[[Ref], str]) -> str:
    """Fill a template's placeholders with ``value_of(ref)``."""
    if "{" not in template:
        return template

    def one(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return "{" + m.group(1) + "}"
        name, *path = m.group(3).split(".")
        return value_of(Ref(name, tuple(path), m.group(2) == "@"))

    return _REF.sub(one, template)


@dataclass(frozen=True, slots=True)
class Write:
    """A declared database write: after the node succeeds, put ``value`` at ``key``.

    ``value`` is ``output`` or a path into it (``output.steps``). ``mode``:
    ``set`` replaces, ``append`` adds one item to a list, ``extend`` adds many,
    ``merge`` updates a mapping. A ``None`` value writes nothing, so a hook can
    say "nothing to record" by returning ``None``.
    """

    key: str
    value: str = "output"
    mode: WriteMode = "set"

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not _KEY.match(self.key):
            raise GraphError(
                f"write key {self.key!r} is not a plain name (a letter or _, then letters, "
                "digits, _ or -)",
                field="writes",
            )
        if not isinstance(self.value, str) or not _VALUE.match(self.value):
            raise GraphError(
                f"write value must be 'output' or a field path into it such as "
                f"'output.steps', got {self.value!r}",
                field="writes",
            )

    def apply(self, db: MutableMapping[str, Any], output: Any) -> None:
        value = output
        for part in self.value.split(".")[1:]:
            if not isinstance(value, Mapping) or part not in value:
                raise GraphError(f"write to {self.key!r}: the output has no field {self.value!r}")
            value = value[part]
        if value is None:
            return
        if self.mode == "set":
            db[self.key] = value
            return
        current = db.setdefault(self.key, {} if self.mode == "merge" else [])
        if self.mode == "merge":
            if not isinstance(current, MutableMapping) or not isinstance(value, Mapping):
                raise GraphError(f"merge into {self.key!r} needs two mappings")
            current.update(value)
        elif not isinstance(current, list):
            raise GraphError(f"{self.mode} into {self.key!r} needs a list there")
        elif self.mode == "append":
            current.append(value)
        else:
            if not isinstance(value, list | tuple):
                raise GraphError(f"extend {self.key!r} needs a list value")
            current.extend(value)


@dataclass(frozen=True, slots=True)
class Node:
    """One prompt node. See the module docstring; fields are keyword-friendly.

    ``output`` picks the default parser: ``text`` (the answer, stripped),
    ``json`` (validated against ``schema`` when given), ``choice`` (one of
    ``choices``) or ``regex`` (``pattern``). ``parser`` overrides it.
    ``context`` lists database keys shown as a block before the dependencies.
    ``max_retries`` of ``None`` uses the graph's default.

    Database access of Python code is declared, like the prompt's: the hook and a
    custom compose see only ``hook_reads`` (plus the prompt's reads) and may write
    only ``hook_writes`` (plus the declared ``writes``); see :mod:`lorekit.graph.access`.
    ``max_dep_chars`` bounds how much of each dependency's answer the prompt
    shows (``dep_overflow`` says how to shorten it; ``summarize`` asks the
    ``summary_role`` model, default the node's role). ``json_take="last"`` makes
    a JSON output take the last JSON value of an answer that holds several.
    ``when`` names a database key: the node joins a pass only while that key holds
    something (see :func:`present`); otherwise it is left out of the pass, edges and
    all, so its dependents are asked without it. This is how a spec declares a
    dynamic node, one that exists only while an earlier answer asks for it.
    """

    key: str
    prompt: str
    deps: tuple[str, ...] = ()
    role: str = "default"
    system: str | None = None
    output: OutputKind = "text"
    schema: Mapping[str, Any] | None = None
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    parser: Parser | None = None
    compose: ComposeFn | None = None
    after_query: AfterQuery | None = None
    writes: tuple[Write, ...] = ()
    context: tuple[str, ...] = ()
    shorthand: bool = False
    dep_modes: Mapping[str, DepMode] = field(default_factory=dict)
    max_retries: int | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    description: str = ""
    hook_reads: tuple[str, ...] = ()
    hook_writes: tuple[str, ...] = ()
    max_dep_chars: int | None = None
    dep_overflow: DepOverflow = "keep_end"
    summary_role: str | None = None
    json_take: JsonTake = "whole"
    when: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not _KEY.match(self.key):
            raise GraphError(
                f"node key {self.key!r} must start with a letter or _ and hold only "
                "letters, digits, _ and -",
                node=str(self.key),
                field="key",
            )
        where = f"node {self.key!r}"

        def bad(field: str, message: str) -> GraphError:
            return GraphError(f"{where}: {message}", node=self.key, field=field)

        for name in ("deps", "context", "hook_reads", "hook_writes"):
            if isinstance(getattr(self, name), str):
                raise bad(name, f"{name} must be a sequence of keys, not a string")
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "choices", tuple(self.choices))
        object.__setattr__(self, "writes", tuple(self.writes))
        if len(set(self.deps)) != len(self.deps):
            raise bad("deps", f"deps list a node twice: {list(self.deps)}")
        if self.key in self.deps:
            raise bad("deps", "a node cannot depend on itself")
        for name in ("hook_reads", "hook_writes"):
            for k in getattr(self, name):
                if not isinstance(k, str) or not _KEY.match(k):
                    raise bad(name, f"{k!r} is not a plain database key")
        if self.when is not None and (not isinstance(self.when, str) or not _KEY.match(self.when)):
            raise bad("when", f"when must name a plain database key, got {self.when!r}")
        if self.max_retries is not None and self.max_retries < 0:
            raise bad("max_retries", f"max_retries must be >= 0, got {self.max_retries}")
        if self.max_dep_chars is not None and self.max_dep_chars < 100:
            raise bad("max_dep_chars", f"max_dep_chars must be >= 100, got {self.max_dep_chars}")
        if self.dep_overflow not in ("keep_end", "keep_start", "keep_both", "summarize"):
            raise bad(
                "dep_overflow", "dep_overflow must be keep_end, keep_start, keep_both or summarize"
            )
        if self.json_take not in ("whole", "last"):
            raise bad("json_take", "json_take must be 'whole' or 'last'")
        if self.output == "choice" and not self.choices:
            raise bad("choices", "output 'choice' needs a list of choices")
        if self.output == "regex" and not self.pattern:
            raise bad("pattern", "output 'regex' needs a pattern")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise bad("pattern", f"pattern is not a valid regex: {exc}") from None
        if self.schema is not None:
            try:
                check_schema(self.schema)
            except GraphError as exc:
                raise bad("schema", str(exc)) from None
        for dep, mode in self.dep_modes.items():
            if mode not in ("qa", "short", "hidden"):
                raise bad("dep_modes", f"dep_modes[{dep!r}] must be qa, short or hidden")
        for ref in self.refs:
            if ref.node and ref.name not in self.deps:
                raise bad("prompt", f"the prompt reads '@{ref.name}', which is not a dependency")

    @property
    def refs(self) -> tuple[Ref, ...]:
        """Placeholders of the prompt and the system text."""
        refs = template_refs(self.prompt)
        return refs + template_refs(self.system) if self.system else refs

    @property
    def reads(self) -> frozenset[str]:
        """Top-level database keys read while composing: the prompt's placeholders,
        ``context`` and ``hook_reads`` (what the race check orders)."""
        prompt = frozenset(r.name for r in self.refs if not r.node)
        when = frozenset([self.when]) if self.when else frozenset()
        return prompt | frozenset(self.context) | frozenset(self.hook_reads) | when

    def reads_with(self, system: str | None) -> frozenset[str]:
        """:attr:`reads` plus the placeholders of the graph's ``system`` text, which
        the node's prompt shows when it has no system text of its own."""
        if self.system is not None or not system:
            return self.reads
        return self.reads | frozenset(r.name for r in template_refs(system) if not r.node)

    @property
    def write_keys(self) -> frozenset[str]:
        """Top-level database keys the node writes: declared ``writes`` and ``hook_writes``."""
        return frozenset(w.key for w in self.writes) | frozenset(self.hook_writes)

    def dep_mode(self, dep: str) -> DepMode:
        mode = self.dep_modes.get(dep)
        if mode is not None:
            return mode
        return "short" if self.shorthand else "qa"


class PassGraph(Protocol):
    """The graph as a hook sees it during a pass: its name and its temporary edits
    (:class:`~lorekit.graph.graph.Graph` implements it)."""

    @property
    def name(self) -> str: ...

    def skip_temporary(self, keys: Iterable[str]) -> None: ...

    def add_temporary_node(
        self, node: Node, *, dependents: Sequence[str] = (), prepend: bool = False
    ) -> None: ...

    def add_temporary_edge(
        self, src: str, dst: str, *, mode: DepMode | None = None, prepend: bool = False
    ) -> None: ...

    def remove_temporary_edge(self, src: str, dst: str) -> None: ...


@dataclass(slots=True)
class NodeContext:
    """What an after-query hook gets besides the parsed output.

    ``db`` is a view of the shared database holding exactly the keys the node
    declares (:class:`~lorekit.graph.access.DbView`): undeclared reads and
    writes raise ``AccessError``; writes take effect only if the hook returns
    (hooks run one at a time, in the sequential order). ``results`` are this
    pass's results so far.
    The edit helpers are the graph's dynamic API.
    """

    key: str
    node: Node
    db: MutableMapping[str, Any]
    graph: PassGraph
    answer: str
    attempt: int
    results: Mapping[str, Any]

    def skip(self, keys: Iterable[str]) -> None:
        self.graph.skip_temporary(keys)

    def add_node(
        self, node: Node, *, dependents: Sequence[str] = (), prepend: bool = False
    ) -> None:
        self.graph.add_temporary_node(node, dependents=dependents, prepend=prepend)

    def add_edge(
        self, src: str, dst: str, *, mode: DepMode | None = None, prepend: bool = False
    ) -> None:
        self.graph.add_temporary_edge(src, dst, mode=mode, prepend=prepend)

    def remove_edge(self, src: str, dst: str) -> None:
        self.graph.remove_temporary_edge(src, dst)


@dataclass(frozen=True, slots=True)
class DepView:
    """A dependency as the composing node sees it."""

    key: str
    question: str
    result: Any
    mode: DepMode
    shown: str | None = None
    """The answer as shortened for this node (``max_dep_chars``), if it was too long."""

    @property
    def answer(self) -> str:
        return self.shown if self.shown is not None else render_value(self.result)


@dataclass(frozen=True, slots=True)
class ComposeInput:
    """Everything a compose function may use. ``db`` is a read-only view of the
    database holding exactly the keys the node declares (its placeholders,
    ``context`` and ``hook_reads``); reading another key raises ``AccessError``,
    and nested values are read-only copies. Writes belong in after-query hooks,
    which run in order."""

    node: Node
    db: Mapping[str, Any]
    deps: tuple[DepView, ...]
    system: str | None = None

    def fill(self, template: str) -> str:
        """``template`` with its placeholders filled (same rules as the node prompt)."""
        results = {d.key: d.result for d in self.deps}
        key = self.node.key

        def value_of(ref: Ref) -> str:
            if ref.node:
                if ref.name not in results:
                    raise MissingValueError(key, ref.text, "is not a dependency with a result")
                found, value = lookup(results[ref.name], ref.path)
            else:
                found, value = lookup(self.db, (ref.name, *ref.path))
            if not found:
                why = "is not in the database" if not ref.node else "is not in that result"
                raise MissingValueError(key, ref.text, why)
            if value is None:
                raise MissingValueError(key, ref.text, "is None in the database")
            return render_value(value)

        return substitute(template, value_of)
