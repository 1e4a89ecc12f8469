"""The agent graph: build it, edit it during a pass, evaluate it.

Evaluation order. Among the nodes whose dependencies are done, the sequential
order picks the one added first (temporary nodes count as added last). A
concurrent pass starts every node's model call as soon as its dependencies
are done, but *commits* nodes (runs their after-query hooks, applies their
database writes and graph edits, records their results) in exactly that
sequential order. Hence, as long as a prompt reads only database keys written
by the node's ancestors (checked for declared reads and writes), a concurrent
pass gives the same results, database and traces as ``sequential=True``.

Dynamic edits. During a pass, only an after-query hook may edit the graph, and
only nodes downstream of its own node (or nodes it added): those have not
started in either mode, so an edit can never race with a running node. Edits
are temporary: they are reverted when the pass ends. Temporary edits made
outside a pass apply to the next pass.

The pass itself runs in :mod:`lorekit.graph.run`, below this module: the
runner sees the graph through the small :class:`~lorekit.graph.run.PassHost`
protocol. :class:`NodeContext` lives with the node (:mod:`lorekit.graph.node`)
and is re-exported here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from typing import Any

from lorekit.graph.errors import GraphError
from lorekit.graph.layout import Layout
from lorekit.graph.node import DepMode, Node, template_refs
from lorekit.graph.node import NodeContext as NodeContext
from lorekit.graph.run import PassRunner, PassState
from lorekit.graph.trace import PassReport
from lorekit.llm.base import LLM
from lorekit.llm.roles import Roles


def as_roles(models: Roles | LLM | Mapping[str, LLM]) -> Roles:
    return models if isinstance(models, Roles) else Roles(models)


class Graph:
    """A DAG of prompt nodes. See the module docstring for order and edits.

    ``roles`` maps each node's ``role`` to a model (a single model serves all);
    ``system`` is the default system text; ``max_retries`` the default number
    of re-asks after a rejected answer.
    """

    def __init__(
        self,
        roles: Roles | LLM | Mapping[str, LLM] | None = None,
        *,
        name: str = "graph",
        system: str | None = None,
        max_retries: int = 2,
    ) -> None:
        if max_retries < 0:
            raise GraphError(f"max_retries must be >= 0, got {max_retries}")
        self.name = name
        self.system = system
        self.max_retries = max_retries
        self.roles = as_roles(roles) if roles is not None else None
        self._base = Layout()
        self._next: Layout | None = None
        self._pass: PassState | None = None
        self._last: dict[str, tuple[str, Any]] = {}
        self._checked_version = -1
        self._version = 0
        self.last_report: PassReport | None = None

    # -- reading --------------------------------------------------------------

    @property
    def nodes(self) -> Mapping[str, Node]:
        """The nodes as the current (or next) pass sees them."""
        return self._view().nodes

    def deps(self, key: str) -> tuple[str, ...]:
        """``key``'s dependencies in prompt order, as the current (or next) pass sees them."""
        view = self._view()
        if key not in view.nodes:
            raise GraphError(f"unknown node {key!r}")
        return tuple(view.deps[key])

    def layout(self, *, permanent: bool = True) -> Layout:
        """A copy of the permanent structure (or of what the next pass will use)."""
        return (self._base if permanent else self._view()).copy()

    def last_result(self, key: str) -> Any:
        """The result ``key`` produced in its latest pass (what a skip reuses)."""
        if key not in self._last:
            raise KeyError(f"node {key!r} has no result yet")
        return self._last[key][1]

    @property
    def system_reads(self) -> frozenset[str]:
        """Database keys the graph's system text reads (for nodes without their own)."""
        if not self.system:
            return frozenset()
        return frozenset(r.name for r in template_refs(self.system) if not r.node)

    @property
    def in_pass(self) -> bool:
        return self._pass is not None

    def _view(self) -> Layout:
        if self._pass is not None:
            return self._pass.layout
        return self._next if self._next is not None else self._base

    # -- permanent structure ----------------------------------------------------

    def add_node(self, node: Node | str, prompt: str | None = None, **fields: Any) -> Node:
        """Add a node (a :class:`Node`, or a key, a prompt and Node fields)."""
        self._refuse_in_pass("add_node")
        if isinstance(node, str):
            if prompt is None:
                raise GraphError(f"node {node!r} needs a prompt")
            node = Node(node, prompt, **fields)
        elif prompt is not None or fields:
            raise GraphError("give either a Node or a key with fields, not both")
        self._change_permanent(lambda lay: _insert(lay, node))
        return node

    def add_edge(
        self,
        src: str,
        dst: str,
        *,
        mode: DepMode | None = None,
        label: str | None = None,
        prepend: bool = False,
    ) -> None:
        """Make ``dst`` depend on ``src``: last in ``dst``'s prompt order, or first
        with ``prepend``."""
        self._refuse_in_pass("add_edge")
        self._change_permanent(lambda lay: _link(lay, src, dst, mode, label, prepend))

    def _refuse_in_pass(self, what: str) -> None:
        if self._pass is not None:
            raise GraphError(
                f"{what} changes the graph for good and is refused during a pass; "
                "use the temporary API (add_temporary_node, ...)"
            )

    def _change_permanent(self, edit: Callable[[Layout], None]) -> None:
        for attr in ("_base", "_next"):
            current: Layout | None = getattr(self, attr)
            if current is None:
                continue
            trial = current.copy()
            edit(trial)
            trial.check_known()
            trial.check_acyclic()
            setattr(self, attr, trial)
        self._version += 1

    # -- temporary edits ----------------------------------------------------------

    def add_temporary_node(
        self, node: Node, *, dependents: Sequence[str] = (), prepend: bool = False
    ) -> None:
        """Add ``node`` for this pass (or the next one); ``dependents`` will depend on it
        (``prepend``: as their first dependency in prompt order, else their last)."""
        for d in dependents:
            self._check_editable(d)

        def edit(lay: Layout) -> None:
            _insert(lay, node)
            lay.temporary.add(node.key)
            for d in dependents:
                _link(lay, node.key, d, None, None, prepend)

        self._change_temporary(edit)
        if self._pass is not None:
            self._pass.added_by_editor.add(node.key)

    def add_temporary_edge(
        self, src: str, dst: str, *, mode: DepMode | None = None, prepend: bool = False
    ) -> None:
        """Make ``dst`` depend on ``src`` for this pass: last in ``dst``'s prompt
        order, or first with ``prepend``."""
        self._check_editable(dst)
        self._change_temporary(lambda lay: _link(lay, src, dst, mode, None, prepend))

    def remove_temporary_edge(self, src: str, dst: str) -> None:
        """Drop ``dst``'s dependency on ``src`` for this pass; it comes back, in its
        original prompt position, when the pass ends."""
        self._check_editable(dst)

        def edit(lay: Layout) -> None:
            if dst not in lay.nodes or src not in lay.deps[dst]:
                raise GraphError(f"there is no edge {src!r} -> {dst!r} to remove")
            if any(r.node and r.name == src for r in lay.nodes[dst].refs):
                raise GraphError(f"node {dst!r} reads '@{src}' in its prompt; the edge must stay")
            lay.deps[dst].remove(src)

        self._change_temporary(edit)

    def skip_temporary(self, keys: Iterable[str]) -> None:
        """Skip these nodes in this pass: they are not queried and reuse their last result."""
        keys = [keys] if isinstance(keys, str) else list(keys)
        for k in keys:
            self._check_editable(k)

        def edit(lay: Layout) -> None:
            for k in keys:
                if k not in lay.nodes:
                    raise GraphError(f"cannot skip unknown node {k!r}")
                lay.skipped.add(k)

        self._change_temporary(edit)

    def _check_editable(self, key: str) -> None:
        st = self._pass
        if st is None:
            return
        if key in st.committed:
            raise GraphError(f"cannot edit node {key!r}: it was already evaluated in this pass")
        if st.editor is None:
            raise GraphError("during a pass only after-query hooks may edit the graph")
        if key in st.added_by_editor or key not in st.layout.nodes:
            return
        if key not in st.layout.descendants(st.editor):
            raise GraphError(
                f"node {st.editor!r} cannot edit {key!r}: an after-query may only edit nodes "
                "downstream of its own node, since any other node may already be running"
            )

    def _change_temporary(self, edit: Callable[[Layout], None]) -> None:
        trial = self._view().copy()
        edit(trial)
        trial.check_known()
        trial.check_acyclic()
        trial.check_reachable(self._has_result)
        if self._pass is not None:
            trial.check_races(self.system_reads)
            self._pass.layout = trial
        else:
            self._next = trial

    def _has_result(self, key: str) -> bool:
        st = self._pass
        return key in self._last or (st is not None and key in st.results)

    def discard_temporary(self) -> None:
        """Drop temporary edits made outside a pass (they would apply to the next one)."""
        self._refuse_in_pass("discard_temporary")
        self._next = None

    # -- evaluation ---------------------------------------------------------------

    def check(self) -> None:
        """Check what the next pass would run: known deps, no cycle, no race, no
        unreachable node. ``evaluate`` calls it; call it early to fail fast."""
        lay = self._view()
        lay.check_known()
        lay.check_acyclic()
        lay.check_reachable(self._has_result)
        lay.check_races(self.system_reads)

    async def evaluate(
        self,
        db: MutableMapping[str, Any] | None = None,
        *,
        roles: Roles | LLM | Mapping[str, LLM] | None = None,
        sequential: bool = False,
        raise_on_failure: bool = True,
    ) -> dict[str, Any]:
        """Run one pass and return each node's result (in commit order).

        A node that fails for good maps to a :class:`NodeFailure`; with
        ``raise_on_failure`` (the default) the pass still finishes every node
        that does not depend on a failure, then raises :class:`NodeFailedError`.
        The trace of the pass is ``self.last_report``.
        """
        if self._pass is not None:
            raise GraphError(f"graph {self.name!r} is already evaluating a pass")
        models = as_roles(roles) if roles is not None else self.roles
        if models is None:
            raise GraphError(f"graph {self.name!r} has no models: pass roles= to Graph or evaluate")
        if self._next is not None or self._checked_version != self._version:
            self.check()
            if self._next is None:
                self._checked_version = self._version
        layout = (self._next or self._base).copy()
        self._next = None
        state = PassState(layout)
        self._pass = state
        report = PassReport(self.name, sequential)
        t0 = time.perf_counter()
        try:
            runner = PassRunner(self, state, db if db is not None else {}, models, report)
            return await runner.run(sequential=sequential, raise_on_failure=raise_on_failure)
        finally:
            report.wall_s = time.perf_counter() - t0
            self.last_report = report
            self._pass = None  # reverts every temporary change

    # -- used by the pass runner ---------------------------------------------------

    def _remember(self, key: str, question: str, result: Any) -> None:
        self._last[key] = (question, result)

    def _last_entry(self, key: str) -> tuple[str, Any] | None:
        return self._last.get(key)


def _insert(lay: Layout, node: Node) -> None:
    if node.key in lay.nodes:
        raise GraphError(f"duplicate node key {node.key!r}")
    lay.nodes[node.key] = node
    lay.deps[node.key] = list(node.deps)


def _link(
    lay: Layout,
    src: str,
    dst: str,
    mode: DepMode | None,
    label: str | None,
    prepend: bool = False,
) -> None:
    for k in (src, dst):
        if k not in lay.nodes:
            raise GraphError(f"edge {src!r} -> {dst!r} names an unknown node {k!r}")
    if src == dst:
        raise GraphError(f"edge {src!r} -> {dst!r} would make a node depend on itself")
    if src in lay.deps[dst]:
        raise GraphError(f"node {dst!r} already depends on {src!r}")
    if prepend:
        lay.deps[dst].insert(0, src)
    else:
        lay.deps[dst].append(src)
    if mode is not None:
        lay.modes[(src, dst)] = mode
    if label is not None:
        lay.labels[(src, dst)] = label
