"""Declarative graphs: a YAML format a non-programmer can write and read.

```yaml
name: planner
system: You are a careful agent.
database:            # initial values; null means "must be given at run time"
  goal: null
  plan: "(no plan yet)"
nodes:
  gate:
    prompt: "Plan: {plan}\nDoes it need to change? Answer yes or no."
    output: choice
    choices: [yes, no]
  plan:
    prompt: "Goal: {goal}. Write a plan."
    output: json
    schema: {type: object, required: [steps]}
    writes: [{key: plan, value: output.steps}]
branches:
  - gate: gate
    when: yes
    run: [plan]      # skipped (reusing the last plan) unless the gate says yes
```

Every read (a ``{placeholder}`` or a ``context`` key) must be declared under
``database`` or written by a node, and each branch node is made to depend on
its gate. Errors name the file, the line, the node and the field.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from lorekit import yamlio
from lorekit.graph.errors import CycleError, GraphError
from lorekit.graph.graph import Graph, as_roles
from lorekit.graph.hooks import BranchHook, HookError, resolve_hook
from lorekit.graph.layout import Layout
from lorekit.graph.locate import Locator
from lorekit.graph.node import DepMode, Node, Write
from lorekit.graph.schema import check_schema
from lorekit.graph.spec_model import GraphSpecModel, NodeSpec, SpecError
from lorekit.llm.base import LLM
from lorekit.llm.roles import Roles


@dataclass(slots=True)
class GraphSpec:
    """A validated spec: nodes in evaluation-preference order, ready to build."""

    name: str
    source: str
    description: str
    system: str | None
    max_retries: int
    database: dict[str, Any]
    nodes: list[Node]
    gate_edges: list[tuple[str, str, str]] = field(default_factory=list)
    locator: Locator | None = None

    @property
    def required(self) -> list[str]:
        """Database keys declared with no value: they must be set at run time."""
        return [k for k, v in self.database.items() if v is None]

    def build(self, roles: Roles | LLM | Mapping[str, LLM] | None = None) -> Graph:
        """A fresh :class:`Graph` of this spec (one per agent, since graphs hold state)."""
        graph = Graph(
            as_roles(roles) if roles is not None else None,
            name=self.name,
            system=self.system,
            max_retries=self.max_retries,
        )
        for node in self.nodes:
            graph.add_node(node)
        for gate, dst, label in self.gate_edges:
            graph.add_edge(gate, dst, mode="hidden", label=label)
        return graph

    def initial_db(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The database for a first pass: declared values, then ``values`` over them."""
        db = {k: copy.deepcopy(v) for k, v in self.database.items() if v is not None}
        db.update(values or {})
        missing = [k for k in self.required if db.get(k) is None]
        if missing:
            pos = self.locator.position(("database", missing[0])) if self.locator else None
            where = f"{self.source}:{pos[0]}:{pos[1]}" if pos else self.source
            raise SpecError(
                f"{where}: database: no value for {', '.join(map(repr, missing))} "
                f"(declared without a value; set it, e.g. --set {missing[0]}=...)"
            )
        return db


def load_spec(
    path: str | Path, *, allow_hooks: Sequence[str | Path] = (), load_hooks: bool = True
) -> GraphSpec:
    """Read, validate and resolve a YAML graph spec.

    Hooks resolve inside the spec's folder, LoreKit, or ``allow_hooks`` (folders
    or package names); ``load_hooks=False`` checks them without importing any
    (to draw the graph)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"{p}: no such spec file") from None
    except OSError as exc:
        raise SpecError(f"{p}: cannot read: {exc}") from None
    except UnicodeDecodeError:
        raise SpecError(f"{p}: not a text (UTF-8) file") from None
    return parse_spec(
        text,
        source=str(p),
        base_dir=p.resolve().parent,
        default_name=p.stem,
        allow_hooks=allow_hooks,
        load_hooks=load_hooks,
    )


def parse_spec(
    text: str,
    *,
    source: str = "<spec>",
    base_dir: Path | None = None,
    default_name: str = "graph",
    allow_hooks: Sequence[str | Path] = (),
    load_hooks: bool = True,
) -> GraphSpec:
    """Validate spec text; ``base_dir`` is where ``file.py:hook`` references are found
    (and the folder hooks must lie in; see :func:`load_spec`)."""
    try:
        root, data = yamlio.compose_and_load(text, source=source)
    except yaml.YAMLError as err:
        raise SpecError(yamlio.describe_error(err, source)) from None
    if not isinstance(data, dict):
        raise SpecError(f"{source}: expected a mapping with 'nodes' at the top level")
    loc = Locator(source, root)
    try:
        model = GraphSpecModel.model_validate(data)
    except ValidationError as err:
        lines = [loc.where(tuple(e["loc"]), e["msg"]) for e in err.errors()]
        raise SpecError("\n".join(lines), lines) from None
    builder = _Builder(model, loc, base_dir or Path.cwd(), default_name)
    builder.allow_hooks, builder.load_hooks = tuple(allow_hooks), load_hooks
    return builder.build()


_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_WRITE_VALUE = re.compile(r"^output(\.[\w-]+)*$")


__all__ = ["GraphSpec", "GraphSpecModel", "NodeSpec", "SpecError", "load_spec", "parse_spec"]


class _Builder:
    """Turns a validated model into nodes, collecting every problem it finds
    (each with its file:line:column) before raising one :class:`SpecError`."""

    def __init__(self, model: GraphSpecModel, loc: Locator, base_dir: Path, name: str) -> None:
        self.m = model
        self.loc = loc
        self.base_dir = base_dir
        self.allow_hooks: tuple[str | Path, ...] = ()
        self.load_hooks = True
        self.name = model.name or name
        self.errors: list[str] = []
        self.order: list[tuple[int, int]] = []

    def error(self, path: tuple[Any, ...], message: str) -> None:
        line = self.loc.where(path, message)
        if line not in self.errors:
            self.errors.append(line)
            self.order.append(self.loc.position(path) or (0, 0))

    def raise_errors(self) -> None:
        """Raise every problem found so far, in the order of the file."""
        if self.errors:
            ranked = sorted(zip(self.order, range(len(self.errors)), self.errors, strict=True))
            lines = [line for _, _, line in ranked]
            raise SpecError("\n".join(lines), lines)

    def build(self) -> GraphSpec:
        m = self.m
        keys = list(m.nodes)
        for key, ns in m.nodes.items():
            if not _KEY.match(key):
                self.error(
                    ("nodes", key),
                    f"node key {key!r} must start with a letter or _ and hold only "
                    "letters, digits, _ and -",
                )
            for field_name in ("deps", "hidden"):
                for i, dep in enumerate(getattr(ns, field_name)):
                    if dep not in m.nodes:
                        self.error(
                            ("nodes", key, field_name, i),
                            f"unknown node {dep!r} (nodes: {', '.join(keys)})",
                        )
            # `hidden` alone makes a dependency (an ordering edge); `shorthand` only
            # styles one that `deps` lists
            styled = ns.shorthand if isinstance(ns.shorthand, list) else []
            for dep in styled:
                if dep in m.nodes and dep not in ns.deps:
                    self.error(
                        ("nodes", key, "shorthand"),
                        f"{dep!r} is styled but not a dep (list it under deps)",
                    )
            self._writes(key, ns)
        branches = self._branches()
        built = {key: self._node(key, ns, branches.get(key)) for key, ns in m.nodes.items()}
        nodes = {k: n for k, n in built.items() if n is not None}
        self._check_reads(nodes)
        for key, node in nodes.items():
            for ref in node.refs:
                if ref.node and ref.name in nodes and nodes[ref.name].when:
                    self.error(
                        ("nodes", key, "prompt"),
                        f"reads '@{ref.name}', a node with 'when' that may be left out of a "
                        "pass; list it under deps instead",
                    )
        self.raise_errors()
        edges = self._gate_edges()
        lay = Layout()
        for key in keys:
            lay.nodes[key] = nodes[key]
            lay.deps[key] = list(nodes[key].deps)
        for gate, dst, _ in edges:
            if gate not in lay.deps[dst]:
                lay.deps[dst].append(gate)
        system = m.system.strip() if m.system else None
        try:
            lay.check_acyclic()
        except CycleError as exc:
            self.error(("nodes", exc.cycle[0], "deps"), str(exc))
        else:
            reads = Graph(name=self.name, system=system).system_reads
            for race in lay.find_races(reads):
                self.error(("nodes", race.reader, race.field or "prompt"), str(race))
        self.raise_errors()
        order = _stable_topo(lay)
        return GraphSpec(
            self.name,
            self.loc.source,
            m.description,
            system,
            m.max_retries,
            dict(m.database),
            [nodes[k] for k in order],
            [(g, d, label) for g, d, label in edges if g not in nodes[d].deps],
            self.loc,
        )

    def _writes(self, key: str, ns: NodeSpec) -> None:
        for i, w in enumerate(ns.writes):
            wkey, value = (w, "output") if isinstance(w, str) else (w.key, w.value)
            path = ("nodes", key, "writes", i)
            if not _KEY.match(wkey):
                self.error(
                    (*path, "key") if not isinstance(w, str) else path,
                    f"write key {wkey!r} is not a plain database key (a letter or _, "
                    "then letters, digits, _ or -)",
                )
            if not _WRITE_VALUE.match(value):
                self.error(
                    (*path, "value"),
                    f"write value {value!r} must be 'output' or a field of it such as "
                    "'output.steps'",
                )

    def _hook(self, key: str, field_name: str, ref: str | None) -> Any:
        if ref is None:
            return None
        try:
            return resolve_hook(ref, self.base_dir, allow=self.allow_hooks, load=self.load_hooks)
        except HookError as exc:
            self.error(("nodes", key, field_name), str(exc))
            return None

    def _node(self, key: str, ns: NodeSpec, branch: BranchHook | None) -> Node | None:
        path = ("nodes", key)
        ok = True
        if ns.output == "choice" and not ns.choices:
            self.error((*path, "choices"), "output 'choice' needs a list of choices")
            ok = False
        if ns.output == "regex" and not ns.pattern:
            self.error((*path, "pattern"), "output 'regex' needs a pattern")
            ok = False
        if ns.json_schema is not None:
            try:
                check_schema(ns.json_schema)
            except GraphError as exc:
                self.error((*path, "schema"), str(exc))
                ok = False
        modes: dict[str, DepMode] = {d: "hidden" for d in ns.hidden}
        if isinstance(ns.shorthand, list):
            modes.update({d: "short" for d in ns.shorthand})
        after = self._hook(key, "after_query", ns.after_query)
        parser = self._hook(key, "parser", ns.parser)
        compose = self._hook(key, "compose", ns.compose)
        if branch is not None:
            branch.inner = after
            after = branch
        if not ok or not _KEY.match(key):
            return None
        try:
            writes = [
                Write(w) if isinstance(w, str) else Write(w.key, w.value, w.mode) for w in ns.writes
            ]
        except GraphError:
            return None  # reported by _writes
        try:
            return Node(
                key,
                ns.prompt.strip(),
                tuple(dict.fromkeys([*ns.deps, *ns.hidden])),
                role=ns.role,
                system=ns.system.strip() if ns.system else None,
                output=ns.output,
                schema=ns.json_schema,
                choices=tuple(ns.choices),
                pattern=ns.pattern,
                parser=parser,
                compose=compose,
                after_query=after,
                writes=tuple(writes),
                context=tuple(ns.context),
                shorthand=ns.shorthand is True,
                dep_modes=modes,
                max_retries=ns.max_retries,
                temperature=ns.temperature,
                max_tokens=ns.max_tokens,
                description=ns.description,
                hook_reads=tuple(ns.hook_reads),
                hook_writes=tuple(ns.hook_writes),
                max_dep_chars=ns.max_dep_chars,
                dep_overflow=ns.dep_overflow,
                summary_role=ns.summary_role,
                json_take=ns.json_take,
                when=ns.when,
            )
        except GraphError as exc:
            text = str(exc).removeprefix(f"node {key!r}: ")
            field_name = exc.field if exc.field and exc.field != "key" else None
            self.error((*path, field_name) if field_name else path, text)
            return None

    def _branches(self) -> dict[str, BranchHook]:
        hooks: dict[str, BranchHook] = {}
        seen: set[str] = set()
        for i, b in enumerate(self.m.branches):
            gate = self.m.nodes.get(b.gate)
            if gate is None:
                self.error(("branches", i, "gate"), f"unknown node {b.gate!r}")
                continue
            values = [b.when] if isinstance(b.when, str) else list(b.when)
            if gate.output == "choice" and gate.choices:  # no choices: the node check says so
                allowed = {c.lower() for c in gate.choices}
                for v in values:
                    if v.lower() not in allowed:
                        self.error(
                            ("branches", i, "when"),
                            f"{v!r} is not one of the gate's choices {gate.choices}",
                        )
            for field_name, keys in (("run", b.run), ("otherwise", b.otherwise)):
                for k in keys:
                    if k not in self.m.nodes or k == b.gate:
                        why = "the gate itself" if k == b.gate else "an unknown node"
                        self.error(("branches", i, field_name), f"{k!r} is {why}")
                    elif k in seen:
                        self.error(("branches", i, field_name), f"{k!r} is in two branch lists")
                    seen.add(k)
            entry = (frozenset(v.lower() for v in values), tuple(b.run), tuple(b.otherwise))
            hooks.setdefault(b.gate, BranchHook([])).branches.append(entry)
        return hooks

    def _gate_edges(self) -> list[tuple[str, str, str]]:
        edges = []
        for b in self.m.branches:
            values = b.when if isinstance(b.when, str) else "/".join(b.when)
            edges += [(b.gate, k, f"if {values}") for k in b.run]
            edges += [(b.gate, k, f"unless {values}") for k in b.otherwise]
        return edges

    def _check_reads(self, nodes: Mapping[str, Node]) -> None:
        written = {
            w if isinstance(w, str) else w.key for ns in self.m.nodes.values() for w in ns.writes
        }
        written |= {k for ns in self.m.nodes.values() for k in ns.hook_writes}
        declared = set(self.m.database) | written
        for key, node in nodes.items():
            for name in sorted(node.reads):
                if name not in declared:
                    field_name = (
                        "context"
                        if name in node.context
                        else "hook_reads"
                        if name in node.hook_reads
                        else "prompt"
                    )
                    self.error(
                        ("nodes", key, field_name),
                        f"reads {name!r}, which is neither declared under 'database' "
                        "nor written by a node",
                    )


def _stable_topo(lay: Layout) -> list[str]:
    """Topological order that keeps the file's order wherever the dependencies allow."""
    done: set[str] = set()
    out: list[str] = []
    while len(out) < len(lay.nodes):
        for key in lay.nodes:
            if key not in done and all(d in done for d in lay.deps[key]):
                done.add(key)
                out.append(key)
                break
    return out
