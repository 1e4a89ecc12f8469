"""Resolving Python hooks named in a YAML spec, and the branch hook the spec builds.

A spec names a hook either by dotted path (``mypkg.hooks.remember``, imported
like any module) or by a file next to the spec (``hooks.py:remember``), so an
example directory needs no package and no change to ``sys.path``. Hooks are
code the spec's author wrote; model output is never imported or executed.

Hooks run with the user's rights, so where they may come from is limited: a
hook file must lie inside the spec's folder (after resolving symlinks and
``..``), and a dotted module must be part of LoreKit or lie inside that folder,
unless an allow-list names its folder or package (``graph run
--allow-hooks``). A spec from elsewhere cannot make LoreKit import
``/tmp/anything.py``. ``load=False`` checks the references without importing
anything (``graph show`` only draws).

A hook file is loaded again when its content changed since it was last
loaded, so loading a spec again in the same process (a notebook, a
long-running server) picks up an edited hook; an unchanged file is reused.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lorekit.graph.errors import HOOK_FILE_MODULE
from lorekit.graph.errors import hook_name as hook_name
from lorekit.graph.graph import Graph
from lorekit.graph.node import AfterQuery, NodeContext

_STAMP = "__lorekit_hook_digest__"
_FILE_MODULE = HOOK_FILE_MODULE


class HookError(ImportError):
    """A hook reference that cannot be resolved; the message says why."""


_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")

BUILT_IN = "lorekit"
"""Hooks in LoreKit's own modules (its agents' specs) are always allowed."""


class HookRef:
    """A hook named by a spec but not imported (``load=False``); calling it is a bug."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        self.__qualname__ = ref
        self.__module__ = ""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise HookError(f"hook {self.ref!r} was not loaded (the spec was read without hooks)")


def _split_allow(allow: Sequence[str | Path]) -> tuple[list[Path], list[str]]:
    """An allow-list as folders (existing directories) and package names."""
    folders: list[Path] = []
    packages: list[str] = []
    for entry in allow:
        text = str(entry)
        if isinstance(entry, Path) or "/" in text or Path(text).is_dir():
            folders.append(Path(text).expanduser().resolve())
        else:
            packages.append(text)
    return folders, packages


def _inside(path: Path, folders: Sequence[Path]) -> bool:
    return any(path == f or path.is_relative_to(f) for f in folders)


def _module_origin(name: str) -> str | None:
    """The file (or "built-in", "frozen") module ``name`` would load from, found
    without running any of its code, not even its parent packages'; None if none."""
    import importlib.machinery

    loaded = sys.modules.get(name)
    if loaded is not None:
        return getattr(loaded, "__file__", None) or "built-in"
    parts = name.split(".")
    try:
        found = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    for i in range(1, len(parts)):
        if found is None or found.submodule_search_locations is None:
            return None
        found = importlib.machinery.PathFinder.find_spec(
            ".".join(parts[: i + 1]), list(found.submodule_search_locations)
        )
    if found is None:
        return None
    return found.origin or "namespace"


def _check_module(ref: str, mod_name: str, base: Path, allow: Sequence[str | Path]) -> None:
    """Refuse a dotted hook module that is neither LoreKit's, inside ``base`` nor allowed."""
    if not _MODULE.fullmatch(mod_name):
        raise HookError(f"{ref!r} is neither 'package.module.name' nor 'file.py:name'")
    folders, packages = _split_allow(allow)
    for package in (BUILT_IN, *packages):
        if mod_name == package or mod_name.startswith(package + "."):
            return
    origin = _module_origin(mod_name)
    if origin is None:
        raise HookError(f"cannot import {mod_name!r}: no module named {mod_name!r}")
    path = Path(origin).resolve() if origin not in ("built-in", "frozen", "namespace") else None
    if path is not None and _inside(path, [base, *folders]):
        return
    where = f" ({path})" if path is not None else ""
    raise HookError(
        f"hook module {mod_name!r}{where} is outside the spec's folder {base}; hooks load "
        "only from there or LoreKit (allow it with --allow-hooks "
        f"{mod_name.partition('.')[0]} or a folder)"
    )


def resolve_hook(
    ref: str, base_dir: Path, *, allow: Sequence[str | Path] = (), load: bool = True
) -> Any:
    """The object ``ref`` names (``pkg.mod.attr`` or ``file.py:attr`` relative to ``base_dir``).

    The hook must lie inside ``base_dir`` (or be LoreKit's, or be in a folder or
    package of ``allow``); ``load=False`` checks that and returns a
    :class:`HookRef` without importing anything."""
    base = base_dir.resolve()
    if ":" in ref:
        file_part, _, attr = ref.partition(":")
        path = (base_dir / file_part).resolve()
        folders, _ = _split_allow(allow)
        if not _inside(path, [base, *folders]):
            raise HookError(
                f"hook file {path} (from {ref!r}) is outside the spec's folder {base}; "
                "hook files load only from there (allow another folder with --allow-hooks DIR)"
            )
        if not path.is_file():
            raise HookError(f"no file {path} (from {ref!r})")
        if not load:
            return HookRef(ref)
        digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
        name = f"lorekit_spec_hooks_{path.stem}_{digest}"
        try:
            content = hashlib.sha1(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise HookError(f"cannot read {path}: {exc.strerror or exc}") from None
        module = sys.modules.get(name)
        if module is None or getattr(module, _STAMP, None) != content:
            loader_spec = importlib.util.spec_from_file_location(name, path)
            if loader_spec is None or loader_spec.loader is None:
                raise HookError(f"cannot load {path} as a Python module")
            module = importlib.util.module_from_spec(loader_spec)
            try:
                loader_spec.loader.exec_module(module)
            except Exception as exc:
                raise HookError(f"importing {path} failed: {type(exc).__name__}: {exc}") from exc
            setattr(module, _STAMP, content)
            sys.modules[name] = module
    else:
        mod_name, _, attr = ref.rpartition(".")
        if not mod_name:
            raise HookError(f"{ref!r} is neither 'package.module.name' nor 'file.py:name'")
        _check_module(ref, mod_name, base, allow)
        if not load:
            return HookRef(ref)
        try:
            module = importlib.import_module(mod_name)
            module = _fresh(module)
        except ImportError as exc:
            raise HookError(f"cannot import {mod_name!r}: {exc}") from exc
        except Exception as exc:
            raise HookError(f"importing {mod_name!r} failed: {type(exc).__name__}: {exc}") from exc
    if not attr or not hasattr(module, attr):
        raise HookError(f"{ref!r}: the module has no attribute {attr!r}")
    obj = getattr(module, attr)
    if not callable(obj):
        raise HookError(f"{ref!r} is not callable")
    return obj


_SEEN: dict[str, str] = {}  # module name -> digest of its source when a spec last used it


def _fresh(module: Any) -> Any:
    """``module``, reloaded if its source file changed since a spec last resolved a hook
    in it (a package module of the user's own project, edited in a notebook)."""
    file = getattr(module, "__file__", None)
    if not file or not str(file).endswith(".py"):
        return module
    try:
        digest = hashlib.sha1(Path(file).read_bytes()).hexdigest()
    except OSError:
        return module
    name = module.__name__
    known = _SEEN.get(name)
    _SEEN[name] = digest
    if known is not None and known != digest:
        module = importlib.reload(module)
    return module


class BranchHook:
    """After-query of a gate node: skip one set of nodes or the other by its answer.

    ``branches`` are ``(values, run, otherwise)``: when the gate's result (as
    lower-case text) is one of ``values`` the ``otherwise`` nodes are skipped,
    else the ``run`` nodes are. Skipped nodes reuse their last result. A user
    hook of the gate, if any, runs first and its result is what is tested.

    A node that has no result yet (its branch never ran) and that a node which
    does run depends on is run anyway: skipping it would leave nothing to
    reuse. So a gate that says "keep the plan" on the very first pass still
    gets a plan made, without the spec having to trick it into saying "yes".
    """

    branch_gate = True
    """Marks a gate for :func:`~lorekit.graph.errors.hook_name`, which names its inner hook."""

    def __init__(
        self,
        branches: Sequence[tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]],
        inner: AfterQuery | None = None,
    ) -> None:
        self.branches = list(branches)
        self.inner = inner

    async def __call__(self, ctx: NodeContext, output: Any) -> Any:
        result = output
        if self.inner is not None:
            out = self.inner(ctx, output)
            result = await out if inspect.isawaitable(out) else out
        value = str(result).strip().lower()
        graph = ctx.graph
        if not isinstance(graph, Graph):
            raise TypeError(f"a branch gate needs a Graph, got {type(graph).__name__}")
        for values, run, otherwise in self.branches:
            skip = skippable(graph, otherwise if value in values else run)
            if skip:
                ctx.skip(skip)
        return result


def skippable(graph: Graph, keys: Sequence[str]) -> list[str]:
    """The nodes of ``keys`` a branch can skip: each has a result to reuse, or every
    node depending on it is skipped too (see :class:`BranchHook`)."""
    lay = graph.layout(permanent=False)
    skip = list(keys)
    changed = True
    while changed:
        changed = False
        for key in list(skip):
            if graph._has_result(key):
                continue
            if any(d not in skip and d not in lay.skipped for d in lay.dependents(key)):
                skip.remove(key)
                changed = True
    return skip
