"""Resolving Python hooks named in a YAML spec, and the branch hook the spec builds.

A spec names a hook either by dotted path (``mypkg.hooks.remember``, imported
like any module) or by a file next to the spec (``hooks.py:remember``), so an
example directory needs no package and no change to ``sys.path``. Hooks are
code the spec's author wrote; model output is never imported or executed.

A hook file is loaded again when its content changed since it was last
loaded, so loading a spec again in the same process (a notebook, a
long-running server) picks up an edited hook; an unchanged file is reused.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
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


def resolve_hook(ref: str, base_dir: Path) -> Any:
    """The object ``ref`` names (``pkg.mod.attr`` or ``file.py:attr`` relative to ``base_dir``)."""
    if ":" in ref:
        file_part, _, attr = ref.partition(":")
        path = (base_dir / file_part).resolve()
        if not path.is_file():
            raise HookError(f"no file {path} (from {ref!r})")
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
