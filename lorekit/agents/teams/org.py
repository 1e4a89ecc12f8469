"""Who is on the team and who may command whom.

S-Agents compares four shapes of team. They differ only in the command
relation, so an :class:`Organization` is a list of agents plus a set of
directed edges ``commander -> subordinate``:

- ``solo``: one agent, no edges.
- ``chain`` (CoA): a relay; each agent may command only the next one.
- ``graph`` (GoA): anyone may command anyone, so delegation loops can happen
  (only the run's time limit bounds them).
- ``tree`` (ToA): a root leader commands its leaves; leaves may talk but never
  command. Every agent has at most one commander (in-degree <= 1), checked when
  the organization is built, so a worker never gets two bosses.

Commands are checked by the receiver: a command from an agent that is not one
of its commanders is refused, and the refusal goes back to the sender as a
message (see :meth:`Organization.refusal`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from lorekit import yamlio

OrgKind = Literal["solo", "chain", "graph", "tree"]
KINDS: tuple[OrgKind, ...] = ("solo", "chain", "graph", "tree")
Role = Literal["leader", "worker"]


class OrgError(ValueError):
    """An organization spec that cannot be built; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """One member: its name, its model role and the world player it controls."""

    name: str
    role: Role
    player: str


@dataclass(frozen=True, slots=True)
class Organization:
    """Agents and the command relation between them."""

    kind: OrgKind
    agents: tuple[AgentSpec, ...]
    edges: frozenset[tuple[str, str]]

    def __post_init__(self) -> None:
        names = [a.name for a in self.agents]
        if not names:
            raise OrgError("an organization needs at least one agent")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise OrgError(f"agent names must be unique; repeated: {', '.join(dup)}")
        players = [a.player for a in self.agents]
        dup = sorted({p for p in players if players.count(p) > 1})
        if dup:
            raise OrgError(f"each agent needs its own player; shared: {', '.join(dup)}")
        for name in names:
            if not _NAME.fullmatch(name):
                raise OrgError(
                    f"agent name {name!r} cannot be addressed ('tell NAME to ...'); "
                    "use letters, digits, _ or -, starting with a letter"
                )
        for spec in self.agents:
            match = _PLAYER.fullmatch(spec.player)
            if match is None or int(match.group(1)) > len(names):
                raise OrgError(
                    f"agent {spec.name} plays {spec.player!r}, but a team of {len(names)} plays "
                    f"players p1..p{len(names)}"
                )
        known = set(names)
        for a, b in sorted(self.edges):
            if a not in known or b not in known:
                missing = a if a not in known else b
                raise OrgError(f"command edge {a} -> {b} names unknown agent {missing!r}")
            if a == b:
                raise OrgError(f"agent {a!r} cannot command itself")
        if self.kind == "tree":
            _check_tree(names, self.edges)
        if self.kind == "chain":
            _check_chain(names, self.edges)

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.agents]

    def agent(self, name: str) -> AgentSpec:
        for a in self.agents:
            if a.name == name:
                return a
        raise KeyError(f"no agent {name!r} in this organization (agents: {', '.join(self.names)})")

    def by_player(self, player: str) -> str:
        """The agent controlling ``player`` (or ``player`` itself when none does)."""
        for a in self.agents:
            if a.player == player:
                return a.name
        return player

    def may_command(self, sender: str, target: str) -> bool:
        return (sender, target) in self.edges

    def subordinates(self, name: str) -> list[str]:
        """Whom ``name`` may command, in member order."""
        return [b for b in self.names if (name, b) in self.edges]

    def commanders(self, name: str) -> list[str]:
        """Who may command ``name``, in member order."""
        return [a for a in self.names if (a, name) in self.edges]

    def parent(self, name: str) -> str | None:
        """The single commander of ``name`` when it has exactly one."""
        bosses = self.commanders(name)
        return bosses[0] if len(bosses) == 1 else None

    def refusal(self, sender: str, target: str) -> str | None:
        """Why ``target`` refuses a command from ``sender``; None when allowed."""
        if self.may_command(sender, target):
            return None
        bosses = self.commanders(target)
        who = ", ".join(bosses) if bosses else "nobody"
        return (
            f"{target} refuses the command from {sender}: in this {self.kind} organization "
            f"only {who} may command {target}; ask them, or send a plain message instead"
        )

    def describe(self) -> str:
        """The team in a few lines, for prompts."""
        lines = []
        for a in self.agents:
            subs = self.subordinates(a.name)
            cmd = f"may command {', '.join(subs)}" if subs else "commands nobody"
            lines.append(f"- {a.name} ({a.role}, player {a.player}): {cmd}")
        return "\n".join(lines)


def _check_chain(names: Sequence[str], edges: Iterable[tuple[str, str]]) -> None:
    """A chain is one line: each agent commands at most one and has at most one
    commander, and following the commands never comes back (no cycle)."""
    nxt: dict[str, str] = {}
    prev: dict[str, str] = {}
    for a, b in sorted(edges):
        if a in nxt or b in prev:
            who = a if a in nxt else b
            raise OrgError(f"in a chain each agent commands one and obeys one; {who} breaks it")
        nxt[a], prev[b] = b, a
    for start in names:
        seen, at = [start], start
        while at in nxt:
            at = nxt[at]
            if at == start:
                raise OrgError(f"a chain has no cycle: {' -> '.join([*seen, start])}")
            seen.append(at)


def _check_tree(names: Sequence[str], edges: Iterable[tuple[str, str]]) -> None:
    parents: dict[str, str] = {}
    for a, b in sorted(edges):
        if b in parents:
            raise OrgError(
                f"in a tree each agent has at most one commander; {b} has "
                f"{parents[b]} and {a} (drop one of those edges)"
            )
        parents[b] = a
    roots = [n for n in names if n not in parents]
    if len(roots) != 1:
        raise OrgError(
            f"a tree needs exactly one root (an agent nobody commands); found {len(roots)}: "
            f"{', '.join(roots) or 'none (there is a cycle)'}"
        )
    for n in names:
        seen = {n}
        while n in parents:
            n = parents[n]
            if n in seen:
                raise OrgError(f"a tree cannot have a command cycle (through {n})")
            seen.add(n)


_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_PLAYER = re.compile(r"p([1-9][0-9]*)")


def _players(count: int) -> list[str]:
    return [f"p{i + 1}" for i in range(count)]


def _with_roles(kind: OrgKind, names: list[str], edges: set[tuple[str, str]]) -> Organization:
    """Agents that command someone plan for others, so they play ``leader``."""
    bosses = {a for a, _ in edges}
    agents = tuple(
        AgentSpec(n, "leader" if n in bosses else "worker", p)
        for n, p in zip(names, _players(len(names)), strict=True)
    )
    return Organization(kind, agents, frozenset(edges))


def build_org(kind: str, *, leaves: int | None = None, size: int | None = None) -> Organization:
    """A standard organization.

    ``tree`` has one leader and ``leaves`` workers (default 2). ``chain`` and
    ``graph`` have ``size`` agents (default 3, the same head count as a tree
    with two leaves). ``solo`` is one agent.
    """
    if kind not in KINDS:
        raise OrgError(f"unknown organization {kind!r}; choose one of {', '.join(KINDS)}")
    if kind == "solo":
        if (leaves or 0) > 0 or (size or 1) != 1:
            raise OrgError("a solo organization has exactly one agent; drop leaves/size")
        return _with_roles("solo", ["agent"], set())
    if kind == "tree":
        if size is not None:
            raise OrgError("a tree's size is set by leaves (the number of workers), not size")
        n = 2 if leaves is None else leaves
        if n < 1:
            raise OrgError(f"a tree needs at least one leaf, got leaves={n}")
        workers = [f"worker{i + 1}" for i in range(n)]
        return _with_roles("tree", ["leader", *workers], {("leader", w) for w in workers})
    if leaves is not None:
        raise OrgError(f"leaves applies to tree organizations only; give {kind} a size")
    n = 3 if size is None else size
    if n < 2:
        raise OrgError(f"a {kind} needs at least two agents, got size={n}")
    names = [f"agent{i + 1}" for i in range(n)]
    if kind == "chain":
        edges = {(names[i], names[i + 1]) for i in range(n - 1)}
    else:
        edges = {(a, b) for a in names for b in names if a != b}
    return _with_roles(cast(OrgKind, kind), names, edges)


def org_from_spec(spec: Mapping[str, Any] | str) -> Organization:
    """An organization from a spec: a mapping, or its YAML text.

    Standard shapes: ``{org: tree, leaves: 3}``, ``{org: chain, size: 4}``,
    ``{org: solo}``. A custom team lists its agents and edges::

        org: tree
        agents:
          - {name: boss, player: p1}
          - {name: digger, player: p2}
        commands: {boss: [digger]}

    Roles follow from the edges (anyone who commands is a ``leader``) unless an
    agent gives ``role`` itself.
    """
    if isinstance(spec, str):
        data = yamlio.safe_load(spec, source="organization spec")
        if isinstance(data, str):
            data = {"org": data}
    else:
        data = spec
    if not isinstance(data, Mapping):
        raise OrgError("an organization spec is a mapping such as {org: tree, leaves: 3}")
    allowed = {"org", "leaves", "size", "agents", "commands"}
    extra = sorted(set(data) - allowed)
    if extra:
        raise OrgError(
            f"unknown key(s) in organization spec: {', '.join(map(str, extra))}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )
    kind = data.get("org")
    if not isinstance(kind, str):
        raise OrgError(f"organization spec needs org: one of {', '.join(KINDS)}")
    if "agents" not in data:
        if "commands" in data:
            raise OrgError("commands needs an agents list in the same spec")
        return build_org(kind, leaves=_count(data, "leaves"), size=_count(data, "size"))
    if kind not in KINDS:
        raise OrgError(f"unknown organization {kind!r}; choose one of {', '.join(KINDS)}")
    return _custom(kind, data["agents"], data.get("commands") or {})


def load_org(path: str | Path) -> Organization:
    """An organization from a YAML file (see :func:`org_from_spec`)."""
    p = Path(path)
    if not p.is_file():
        raise OrgError(f"organization file {p} does not exist")
    return org_from_spec(p.read_text())


def _count(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise OrgError(f"{key} must be a whole number, got {value!r}")
    return value


def _custom(kind: OrgKind, agents: Any, commands: Any) -> Organization:
    if not isinstance(agents, list) or not agents:
        raise OrgError("agents must be a non-empty list of {name, player[, role]}")
    if not isinstance(commands, Mapping):
        raise OrgError("commands must map a commander to the list of agents it commands")
    edges: set[tuple[str, str]] = set()
    for boss, subs in commands.items():
        subs = [subs] if isinstance(subs, str) else subs
        if not isinstance(subs, list) or not all(isinstance(s, str) for s in subs):
            raise OrgError(f"commands[{boss}] must be a list of agent names")
        edges |= {(str(boss), s) for s in subs}
    bosses = {a for a, _ in edges}
    specs = []
    for i, entry in enumerate(agents):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise OrgError(f"agents[{i}] must be a mapping with a name")
        name = entry["name"]
        player = entry.get("player", f"p{i + 1}")
        role = entry.get("role", "leader" if name in bosses else "worker")
        if role not in ("leader", "worker"):
            raise OrgError(f"agent {name}: role must be leader or worker, got {role!r}")
        specs.append(AgentSpec(name, role, str(player)))
    if kind == "solo" and len(specs) != 1:
        raise OrgError(f"a solo organization has exactly one agent, got {len(specs)}")
    return Organization(kind, tuple(specs), frozenset(edges))
