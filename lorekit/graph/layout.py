"""The structure of a graph (nodes, ordered dependencies, edge styles) and its checks.

A :class:`Layout` is copied for each pass and for each edit: an edit is made
on a copy, the copy is checked, and only a copy that passes replaces the
original. That is how every safeguard raises before anything changes, and
why reverting a pass's temporary changes is simply dropping its copy (the
permanent layout, including the order of each node's dependencies, was never
touched).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lorekit.graph.errors import CycleError, GraphError, RaceError
from lorekit.graph.node import DepMode, Node, template_refs

Edge = tuple[str, str]


@dataclass(slots=True)
class Layout:
    """Nodes in insertion order (which is also the sequential evaluation order
    among ready nodes), each node's dependencies in prompt order, per-edge
    display modes and labels, and the pass-only marks (temporary, skipped)."""

    nodes: dict[str, Node] = field(default_factory=dict)
    deps: dict[str, list[str]] = field(default_factory=dict)
    modes: dict[Edge, DepMode] = field(default_factory=dict)
    labels: dict[Edge, str] = field(default_factory=dict)
    temporary: set[str] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)

    def copy(self) -> Layout:
        return Layout(
            dict(self.nodes),
            {k: list(v) for k, v in self.deps.items()},
            dict(self.modes),
            dict(self.labels),
            set(self.temporary),
            set(self.skipped),
        )

    def mode(self, src: str, dst: str) -> DepMode:
        return self.modes.get((src, dst)) or self.nodes[dst].dep_mode(src)

    def edges(self) -> list[Edge]:
        return [(d, k) for k in self.nodes for d in self.deps[k]]

    def dependents(self, key: str) -> list[str]:
        return [k for k, ds in self.deps.items() if key in ds]

    def ancestors(self, key: str) -> set[str]:
        seen: set[str] = set()
        stack = list(self.deps.get(key, ()))
        while stack:
            k = stack.pop()
            if k not in seen:
                seen.add(k)
                stack.extend(self.deps.get(k, ()))
        return seen

    def descendants(self, key: str) -> set[str]:
        below: dict[str, list[str]] = {}
        for k, ds in self.deps.items():
            for d in ds:
                below.setdefault(d, []).append(k)
        seen: set[str] = set()
        stack = list(below.get(key, ()))
        while stack:
            k = stack.pop()
            if k not in seen:
                seen.add(k)
                stack.extend(below.get(k, ()))
        return seen

    # -- checks ---------------------------------------------------------------

    def check_known(self) -> None:
        for key, ds in self.deps.items():
            for d in ds:
                if d not in self.nodes:
                    raise GraphError(
                        f"node {key!r} depends on an unknown node {d!r} "
                        f"(known: {', '.join(self.nodes) or 'none'})"
                    )

    def check_acyclic(self) -> None:
        """Raise with the cycle spelled out (``a -> b -> a``) if there is one."""
        state: dict[str, int] = {}  # 1 = on the path, 2 = done
        for root in self.nodes:
            if state.get(root):
                continue
            path: list[str] = []
            stack: list[tuple[str, Iterable[str]]] = [(root, iter(self.deps[root]))]
            state[root] = 1
            path.append(root)
            while stack:
                key, it = stack[-1]
                nxt = next(iter(it), None)
                if nxt is None:
                    stack.pop()
                    path.pop()
                    state[key] = 2
                elif state.get(nxt) == 1:
                    cycle = [*path[path.index(nxt) :], nxt]
                    raise CycleError(cycle)
                elif not state.get(nxt):
                    state[nxt] = 1
                    path.append(nxt)
                    stack.append((nxt, iter(self.deps[nxt])))

    def check_reachable(self, has_result: Callable[[str], bool]) -> None:
        """A skipped node reuses its last result; one that has none leaves the nodes
        depending on it with nothing to read, so they could never run (unless they
        are skipped as well)."""
        for key in self.skipped:
            if has_result(key):
                continue
            waiting = [d for d in self.dependents(key) if d not in self.skipped]
            if waiting:
                raise GraphError(
                    f"node {key!r} is skipped and has no earlier result, so "
                    f"{', '.join(repr(w) for w in waiting)} would be left unreachable"
                )

    def check_races(self, system_reads: frozenset[str] = frozenset()) -> None:
        """A node's prompt may read a database key written in the same pass only by
        one of its ancestors (or descendants, which then run after it). Otherwise
        what it reads would depend on timing, and a concurrent pass could differ
        from a sequential one; the fix is an edge that orders the two nodes."""
        races = self.find_races(system_reads, first_only=True)
        if races:
            raise races[0]

    def find_races(
        self, system_reads: frozenset[str] = frozenset(), *, first_only: bool = False
    ) -> list[RaceError]:
        """Every (reader, key) pair that races with an unordered writer (see
        :meth:`check_races`); ``system_reads`` are the graph system text's keys."""
        writers: dict[str, list[str]] = {}
        for key, node in self.nodes.items():
            for w in node.write_keys:
                writers.setdefault(w, []).append(key)
        found: list[RaceError] = []
        if not writers:
            return found
        ancestors: dict[str, set[str]] = {}

        def anc(k: str) -> set[str]:
            if k not in ancestors:
                ancestors[k] = self.ancestors(k)
            return ancestors[k]

        for key, node in self.nodes.items():
            reads = node.reads | system_reads if node.system is None else node.reads
            for name in sorted(reads):
                for w in writers.get(name, ()):
                    if w != key and w not in anc(key) and key not in anc(w):
                        found.append(RaceError(key, w, name, _read_field(node, name)))
                        if first_only:
                            return found
                        break
        return found


def _read_field(node: Node, name: str) -> str:
    """Which field of ``node`` makes it read ``name`` (for the error's location)."""
    if any(r.name == name and not r.node for r in template_refs(node.prompt)):
        return "prompt"
    if name in node.context:
        return "context"
    if name in node.hook_reads:
        return "hook_reads"
    return "system"
