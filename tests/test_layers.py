"""The package's layers, read from its own imports (DESIGN.md, docs/architecture.md).

The core's imports point down: cli -> eval -> agents -> graph/sandbox -> envs
-> config -> llm (with the small helpers ``registry``, ``yamlio``, ``extras``,
``ids``, ... at the bottom). The methods (ADaPT, AgentKit, SPRING, AutoManual,
S-Agents, the laws) sit on top of the whole core: the core never imports a
method, not even by import string (methods reach it through their plugin
registrations), and no method imports another. No two packages import each
other, directly or through others, and no module circle exists inside a
package unless listed in ``_ALLOWED_CIRCLES`` with the reason.

Every import counts: at module level, inside functions (a deferred import is
still a dependency, it only fails later) and under ``if TYPE_CHECKING:`` (a
type is part of a module's interface; a type that must point up is a sign the
piece belongs lower, and a protocol can say what is needed instead). The
source is parsed with ``ast``; nothing of LoreKit is imported, except by the
one test that checks what importing the registries pulls in, in a subprocess.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

METHODS: dict[str, str] = {
    "adapt": "lorekit.agents.adapt",
    "agentkit": "lorekit.agents.agentkit",
    "spring": "lorekit.agents.spring",
    "automanual": "lorekit.agents.automanual",
    "teams": "lorekit.agents.teams",
    "laws": "lorekit.laws",
}
"""Each method's piece name and package: one package per method, above the core."""

RANKS: dict[str, int] = {
    "lorekit": 6,  # the package's __init__: its version and the façade lorekit.evaluate
    "registry": 0,  # names -> import strings; imports nothing of LoreKit
    "lazyexports": 0,  # package attributes loaded on first use
    "llm": 0,
    "yamlio": 0,
    "extras": 0,
    "ids": 0,
    "tables": 0,  # rich tables that fit the terminal (any layer prints them)
    "progress": 0,  # progress bars on stderr for long library calls
    "jsonscan": 0,  # linear scans for JSON in model answers
    "textsafe": 0,  # model text made safe for terminals and SQLite
    "cachedir": 0,  # the user's cache folder (what can always be made again)
    "experiments": 0,  # data only: the published tables as YAML (lorekit reproduce)
    "config": 1,  # model settings: builds llm objects from YAML
    "envs": 2,
    "graph": 3,
    "sandbox": 3,
    "agents": 4,  # the agent contract, views, the oracle and random agents
    "eval": 5,
    "cli": 6,  # lorekit/cli/ and __main__.py: the command line's shell and shared options
    **dict.fromkeys(METHODS, 7),  # the methods, each owning its agent, view, commands
}
"""Layer of each piece of ``lorekit``; an import may not name a higher one."""

_ALLOWED_CIRCLES: dict[frozenset[str], str] = {}
"""Module circles inside one package that are one idea split for size, with the reason.
None today: every package's modules form a DAG."""


_GENERIC_AGENT_MODULES = frozenset(
    {"lorekit.agents", "lorekit.agents.base", "lorekit.agents.views", "lorekit.agents.registry"}
)
"""What of ``lorekit.agents`` the harness may import: the registry (which names agents
by import string), the agent contract and the view protocol."""


@dataclass(frozen=True)
class Import:
    """One import statement's target, resolved to a module of the tree."""

    source: str  # importing module, dotted
    path: str  # importing file, relative to the repository root
    line: int
    target: str  # imported module, dotted


def modules(root: Path) -> dict[str, Path]:
    """Dotted name -> file of every module under ``root/lorekit``."""
    found = {}
    for path in sorted((root / "lorekit").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _nearest(name: str, known: Mapping[str, Path]) -> str | None:
    """The module ``name`` refers to: itself, or the package that holds the attribute."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


_IMPORT_STRING = re.compile(r"(lorekit(?:\.\w+)*)(?::\w+(?:\.\w+)*)?")
"""A string that is only a module path (``lorekit.agents.teams.team:run_team`` or
``lorekit.envs.builtin``), as registries and lazy loaders hold them."""


def import_strings(path: Path, root: Path) -> list[Import]:
    """The modules a file names in import strings (loaded with importlib later)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    rel = path.relative_to(root).as_posix()
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _IMPORT_STRING.fullmatch(node.value)
            if match and "." in match.group(1):
                out.append(Import(rel, rel, node.lineno, match.group(1)))
    return out


def imports_of(module: str, path: Path, known: Mapping[str, Path], root: Path) -> list[Import]:
    """Every lorekit import of one file, wherever it stands in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    rel = path.relative_to(root).as_posix()
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            # ``from pkg import sub`` imports the submodule when there is one
            names = [
                f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in known else stem
                for alias in node.names
            ]
        for name in dict.fromkeys(names):
            if name == "lorekit" or name.startswith("lorekit."):
                target = _nearest(name, known)
                if target is not None and target != module:
                    out.append(Import(module, rel, node.lineno, target))
    return out


@cache
def all_imports(root: Path = ROOT) -> list[Import]:
    known = modules(root)
    return [imp for mod, path in known.items() for imp in imports_of(mod, path, known, root)]


def piece(module: str) -> str:
    """The piece a module belongs to (a key of RANKS): a method's package, else the
    top-level piece."""
    for name, package in METHODS.items():
        if module == package or module.startswith(package + "."):
            return name
    parts = module.split(".")
    if len(parts) == 1:
        return "lorekit"
    if parts[1] == "__main__" or parts[1] == "cli" or parts[1].startswith("cli_"):
        return "cli"
    return parts[1]


def circles(edges: Iterable[tuple[str, str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one member (Tarjan, iterative)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = set()
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    members.add(top)
                    if top == node:
                        break
                if len(members) > 1:
                    found.append(frozenset(members))
    return found


def upward(imports: Iterable[Import]) -> list[str]:
    """Each import that names a higher layer (or a piece RANKS does not know)."""
    bad = []
    for imp in imports:
        src, dst = piece(imp.source), piece(imp.target)
        if src not in RANKS or dst not in RANKS:
            bad.append(f"{imp.path}:{imp.line}: {imp.target} (unranked piece: add it to RANKS)")
        elif RANKS[dst] > RANKS[src]:
            bad.append(
                f"{imp.path}:{imp.line}: imports {imp.target} "
                f"({src}, layer {RANKS[src]} -> {dst}, layer {RANKS[dst]})"
            )
    return bad


def _where(imports: Iterable[Import], members: frozenset[str]) -> str:
    """The imports that close a circle, as ``file:line -> target`` lines."""
    return "\n".join(
        f"  {imp.path}:{imp.line} -> {imp.target}"
        for imp in imports
        if imp.source in members and imp.target in members
    )


# ---------------------------------------------------------------------------- the tests


def test_the_scanner_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A guard for the guard: deferred, TYPE_CHECKING and relative imports all count."""
    pkg = tmp_path / "lorekit" / "envs"
    pkg.mkdir(parents=True)
    (tmp_path / "lorekit" / "__init__.py").write_text("")
    (tmp_path / "lorekit" / "eval.py").write_text("")
    (pkg / "__init__.py").write_text("from . import base\n")
    (pkg / "base.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from lorekit.eval import Thing\n"
        "def later():\n"
        "    import lorekit.envs.other\n"
        "    from ..eval import x\n"
    )
    (pkg / "other.py").write_text("from lorekit.envs.base import later\n")
    found = {(i.source, i.target, i.line) for i in all_imports(tmp_path)}
    assert found == {
        ("lorekit.envs", "lorekit.envs.base", 1),
        ("lorekit.envs.base", "lorekit.eval", 3),
        ("lorekit.envs.base", "lorekit.envs.other", 5),
        ("lorekit.envs.base", "lorekit.eval", 6),
        ("lorekit.envs.other", "lorekit.envs.base", 1),
    }
    assert circles((i.source, i.target) for i in all_imports(tmp_path)) == [
        frozenset({"lorekit.envs.base", "lorekit.envs.other"})
    ]
    assert len(upward(all_imports(tmp_path))) == 2  # envs -> eval, twice
    (tmp_path / "lorekit" / "eval.py").write_text(
        '"""Docs may mention lorekit.agents.teams."""\n'
        'LOAD = "lorekit.agents.teams.team:run_team"\n'
        'OK = "lorekit.agents.base:Agent"\n'
    )
    assert specific_agents_named_by_eval(tmp_path) == [
        "lorekit/eval.py:2: lorekit.agents.teams.team"
    ]


def test_every_piece_of_lorekit_has_a_layer() -> None:
    pieces = {piece(m) for m in modules(ROOT)}
    assert pieces <= set(RANKS), f"give these a layer in RANKS: {sorted(pieces - set(RANKS))}"


def test_imports_point_down_the_layers() -> None:
    imports = all_imports()
    bad = upward(imports)
    assert not bad, "imports that run up the layers:\n" + "\n".join(bad)


def test_only_the_command_line_and_the_methods_import_the_cli() -> None:
    """The CLI's shared pieces (options, errors, prepare) serve the methods' own
    commands; nothing else of the core imports the CLI."""
    bad = [
        f"{i.path}:{i.line}: imports {i.target}"
        for i in all_imports()
        if piece(i.target) == "cli" and piece(i.source) != "cli" and piece(i.source) not in METHODS
    ]
    assert not bad, "only lorekit/cli, __main__.py and the methods may import the CLI:\n" + (
        "\n".join(bad)
    )


def method_imports(root: Path = ROOT) -> list[str]:
    """Where a module imports (or names by import string) a method it is not part of."""
    known = modules(root)
    found = list(all_imports(root))
    found += [i for m, p in known.items() for i in import_strings(p, root)]
    bad = []
    for imp in found:
        source = piece(imp.source) if imp.source in known else piece(_module_of(imp.path))
        target = piece(imp.target)
        if target in METHODS and source != target:
            bad.append(f"{imp.path}:{imp.line}: {source} names {imp.target} ({target})")
    return sorted(set(bad))


def _module_of(path: str) -> str:
    parts = list(Path(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_the_core_never_names_a_method_and_methods_never_name_each_other() -> None:
    bad = method_imports()
    assert not bad, (
        "a method is reached only through its plugin registration; a module named one it "
        "is not part of:\n" + "\n".join(bad)
    )


def test_no_circle_between_packages() -> None:
    imports = all_imports()
    edges = {
        (piece(i.source), piece(i.target)) for i in imports if piece(i.source) != piece(i.target)
    }
    found = circles(edges)
    detail = []
    for members in found:
        for i in imports:
            a, b = piece(i.source), piece(i.target)
            if a != b and a in members and b in members:
                detail.append(f"  {i.path}:{i.line} -> {i.target}")
    assert not found, f"packages that import each other: {found}\n" + "\n".join(detail)


def test_no_circle_between_modules() -> None:
    imports = all_imports()
    found = [
        members
        for members in circles((i.source, i.target) for i in imports)
        if members not in _ALLOWED_CIRCLES
    ]
    message = "\n\n".join(
        f"modules that import each other: {sorted(m)}\n{_where(imports, m)}" for m in found
    )
    assert not found, message


def specific_agents_named_by_eval(root: Path = ROOT) -> list[str]:
    """Where ``lorekit/eval`` imports a specific agent or names one in an import string."""
    known = modules(root)
    named = [i for i in all_imports(root) if i.source.startswith("lorekit.eval")]
    named += [
        i for m, p in known.items() if m.startswith("lorekit.eval") for i in import_strings(p, root)
    ]
    return sorted(
        f"{i.path}:{i.line}: {i.target}"
        for i in named
        if (i.target == "lorekit.agents" or i.target.startswith("lorekit.agents."))
        and i.target not in _GENERIC_AGENT_MODULES
    )


def test_eval_imports_no_specific_agent() -> None:
    bad = specific_agents_named_by_eval()
    assert not bad, "the harness must not know specific agents:\n" + "\n".join(bad)


_HEAVY = ("crafter", "selenium", "ray", "torch", "numpy", "stable_baselines3", "textworld")

_PROBE = """
import sys
import lorekit, lorekit.agents, lorekit.envs
print("\\n".join(sorted(sys.modules)))
"""


def test_importing_the_registries_imports_no_specific_agent_or_env() -> None:
    """``import lorekit.agents, lorekit.envs`` must stay cheap: the registries name
    their entries by import string, so no agent or env package (nor a heavy
    third-party module) is loaded until one is made."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, check=True
    )
    loaded = set(proc.stdout.split())
    assert "lorekit.agents" in loaded and "lorekit.envs" in loaded
    env_packages = {
        f"lorekit.envs.{p.name}" for p in (ROOT / "lorekit" / "envs").iterdir() if p.is_dir()
    }
    allowed_agents = _GENERIC_AGENT_MODULES | {"lorekit.agents.react_grammar"}
    specific = sorted(
        m
        for m in loaded
        if (m.startswith("lorekit.agents.") and m not in allowed_agents)
        or any(m == p or m.startswith(p + ".") for p in env_packages)
        or m == "lorekit.envs.builtin"
    )
    heavy = sorted(m for m in _HEAVY if m in loaded)
    assert not specific, f"importing the registries loaded {specific}"
    assert not heavy, f"importing the registries loaded heavy modules {heavy}"


@pytest.mark.parametrize("name", sorted(RANKS))
def test_ranked_pieces_exist(name: str) -> None:
    """A layer named in RANKS that no longer exists is a stale rule."""
    known = modules(ROOT)
    assert any(piece(m) == name for m in known), f"RANKS names {name!r}, which is gone"
