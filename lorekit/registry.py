"""One registry for everything LoreKit looks up by name, open to outside packages.

Envs, agents, the views of agents' notes, envs' run summaries, scripted test
models, replay readers, CLI commands: every kind of named part is an
:class:`Entry` here, naming its object by import string
(``"package.module:attribute"``, resolved with :func:`pkgutil.resolve_name`
only when the part is used). Listing parts therefore imports none of them:
``lorekit --help``, ``lorekit envs list`` and ``lorekit agents list`` stay
fast, and a part whose optional dependencies are missing costs nothing until
it is asked for.

Parts arrive through one entry-point group, :data:`ENTRY_POINT_GROUP`. Each
entry point names a function ``register(registry)`` that adds its parts::

    # pyproject.toml of an outside package
    [project.entry-points."lorekit.plugins"]
    tiny = "tiny_plugin:register"

    # tiny_plugin/__init__.py
    def register(registry):
        registry.add_env("coin", "tiny_plugin.env:CoinEnv", "guess a coin")
        registry.add_agent("first-choice", "tiny_plugin.agent:FirstChoiceAgent",
                           "plays untried offered actions in order", needs_model=False)

LoreKit's own core and methods register through the same group (its
``pyproject.toml``), so an outside package is seen by every command exactly as
a built-in method is, after a plain ``pip install``. The entry points are read
once, on the first lookup. Code may also add parts directly
(``REGISTRY.add_agent(...)``), e.g. in a script or a test.

This module imports nothing of LoreKit, so every layer may use it.
"""

from __future__ import annotations

import pkgutil
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from types import MappingProxyType
from typing import Any, Final

ENTRY_POINT_GROUP: Final = "lorekit.plugins"
"""The entry-point group every plugin, LoreKit's own parts included, registers through."""

KINDS: Final = {
    "env": "environments (`lorekit envs list`, `lorekit run ENV`)",
    "agent": "agents (`lorekit agents list`, `lorekit run ENV --agent NAME`)",
    "view": "views of agents' episode notes (`lorekit show`, `lorekit report`)",
    "summary": "run-level figures of an env's runs (the report's env sections)",
    "scripted": "scripted test models per (env, agent) (`--simulate`)",
    "lore": "game knowledge an agent may be told, by kind (`context=KIND:ARG`)",
    "replay": "readers of published result files (`lorekit reproduce replay`)",
    "tables": "tables a plugin keeps in the run store's file, by name prefix (`lorekit runs rm`)",
    "command": "commands of the `lorekit` command line",
}
"""Every kind of part, and where a user meets it."""


class Unset:
    """The type of :data:`UNSET`: an option left out, where None means something."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset()


class RegistryError(Exception):
    """A name nobody registered, or a bad registration."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class RegistrationError(RegistryError, ValueError):
    """A registration that cannot be taken: a bad name, kind or import string, a taken name."""


class UnknownPart(RegistryError, LookupError):
    """A lookup of a name that no registration provides; the message lists the known names."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One registered part: its kind, name, object (an import string or the object
    itself), a one-line description, and what is particular to its kind (``meta``:
    an env's ``execution``, an agent's ``needs_model``, a command's ``help``, ...).

    ``origin`` is who registered it: the entry point (``distribution:name``), or
    ``"code"`` for a direct call."""

    kind: str
    name: str
    target: Any
    description: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    origin: str = "code"

    @property
    def target_name(self) -> str:
        """The import string, or the qualified name of an object registered directly."""
        if isinstance(self.target, str):
            return self.target
        module = getattr(self.target, "__module__", "?")
        return f"{module}:{getattr(self.target, '__qualname__', repr(self.target))}"

    def load(self) -> Any:
        """The object itself (an import string is imported now, then kept by the caller)."""
        if not isinstance(self.target, str):
            return self.target
        return pkgutil.resolve_name(self.target)


@dataclass(frozen=True, slots=True)
class StoreTables:
    """Tables a plugin keeps in the run store's own file (the target of a ``tables``
    entry): every table whose name starts with ``prefix``, each row tied to a run by
    its column ``run_column`` (a table without that column is the plugin's own
    bookkeeping, kept as it is)."""

    prefix: str
    run_column: str = "run_id"


def check_target(target: Any, what: str) -> None:
    """Refuse an import string that is not ``package.module:attribute``."""
    if isinstance(target, str):
        module, sep, attribute = target.partition(":")
        if not sep or not module or not attribute or any(c.isspace() for c in target):
            raise RegistrationError(
                f"{what}: an import string is 'package.module:attribute', got {target!r}"
            )
    elif target is None:
        raise RegistrationError(f"{what}: nothing to register")


class Registry:
    """Named parts by kind; see the module's docstring.

    Lookups read the entry points once (``plugins=True``); a registry made with
    ``plugins=False`` holds only what is added to it (tests)."""

    def __init__(self, *, plugins: bool = True) -> None:
        self._entries: dict[str, dict[str, Entry]] = {kind: {} for kind in KINDS}
        self._plugins_pending = plugins
        self._loading = False
        self._lock = threading.RLock()
        self.plugin_errors: list[str] = []
        """One line per plugin that could not be loaded (also printed once on stderr)."""
        self.plugins_loaded: list[str] = []
        """The entry points loaded, as ``distribution:name``, in load order."""

    # -- adding ------------------------------------------------------------------------

    def add(
        self,
        kind: str,
        name: str,
        target: Any,
        description: str = "",
        *,
        replace: bool = False,
        **meta: Any,
    ) -> Entry:
        """Register ``target`` as the ``kind`` part called ``name``.

        Taking a name already registered is an error unless ``replace`` is set
        (a plugin cannot silently shadow a built-in part)."""
        if kind not in KINDS:
            raise RegistrationError(f"unknown kind {kind!r}; kinds: {', '.join(KINDS)}")
        if not isinstance(name, str) or not name or name != name.strip():
            raise RegistrationError(
                f"a {kind} name must be non-empty text without spaces around it: {name!r}"
            )
        check_target(target, f"{kind} {name!r}")
        with self._lock:
            table = self._entries[kind]
            old = table.get(name)
            if old is not None and not replace:
                raise RegistrationError(
                    f"{kind} {name!r} is already registered (by {old.origin}, {old.target_name}); "
                    "pass replace=True to override"
                )
            entry = Entry(
                kind, name, target, description, MappingProxyType(dict(meta)), self._origin
            )
            table[name] = entry
            return entry

    def snapshot(self) -> dict[str, dict[str, Entry]]:
        """A copy of every table (the plugins read first), for :meth:`restore`."""
        self._ensure_plugins()
        with self._lock:
            return {kind: dict(table) for kind, table in self._entries.items()}

    def restore(self, state: Mapping[str, Mapping[str, Entry]]) -> None:
        """Put the tables back as :meth:`snapshot` found them (tests that register parts)."""
        with self._lock:
            self._entries = {kind: dict(state.get(kind, {})) for kind in KINDS}

    def remove(self, kind: str, name: str) -> None:
        """Forget a part (tests; a plugin taking back a registration)."""
        with self._lock:
            self._entries.get(kind, {}).pop(name, None)

    def add_env(
        self,
        name: str,
        target: Any,
        description: str,
        *,
        execution: str | None = None,
        extra: str | None = None,
        expert: bool | None = None,
        max_steps: int | Unset | None = UNSET,
        replace: bool = False,
    ) -> Entry:
        """An environment: ``target`` is its class or factory (keyword arguments are
        its options). ``execution`` (inline, thread, process) overrides the class's
        own; ``extra`` names the pip extra it needs; ``expert`` says whether its
        built-in expert plays (``--agent oracle``). ``max_steps`` (a whole number, or
        None for no cap) hands the step cap and the rules after an episode's end to
        the core (:mod:`lorekit.envs.episodes`): the env then writes only its own
        dynamics, and ``max_steps`` becomes an option of every such env."""
        if (
            not isinstance(max_steps, Unset)
            and max_steps is not None
            and (isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1)
        ):
            raise RegistrationError(
                f"env {name!r}: max_steps must be a whole number >= 1 or None, got {max_steps!r}"
            )
        rules = {} if isinstance(max_steps, Unset) else {"max_steps": max_steps}
        if execution is not None and execution not in ("inline", "thread", "process"):
            raise RegistrationError(
                f"env {name!r}: execution must be one of inline, thread, process, got {execution!r}"
            )
        return self.add(
            "env", name, target, description, replace=replace,
            execution=execution, extra=extra, expert=expert, **rules,
        )  # fmt: skip

    def add_agent(
        self,
        name: str,
        target: Any,
        description: str,
        *,
        needs_model: bool = True,
        extra: str | None = None,
        replace: bool = False,
        **meta: Any,
    ) -> Entry:
        """An agent: ``target`` is its class or factory (keyword arguments are its options).

        ``meta`` holds what commands may want to know without building it:
        ``prompt_order`` (how its prompts share a stable prefix, for the cost
        estimate's report on prompt caching), ``tests_with_build`` (its runs test
        with what a build made, e.g. AutoManual's manual), and for an agent that
        makes builds ``build_variants`` (the variants an experiment's ``builds:``
        may name) with ``build`` (an import string of the function that plays one
        for ``lorekit reproduce``: :class:`lorekit.cli.reproduce_build.BuildMaker`)."""
        return self.add(
            "agent", name, target, description, replace=replace, needs_model=needs_model,
            extra=extra, **meta,
        )  # fmt: skip

    def add_view(self, name: str, target: Any, *, order: int = 100, replace: bool = False) -> Entry:
        """A view of agents' notes (a :class:`lorekit.agents.views.NotesView`). ``lorekit
        show`` prints the views that claim an episode's notes by ``order``, then in
        registration order (LoreKit's own use 10-40, so a plugin's come after)."""
        return self.add("view", name, target, replace=replace, order=order)

    def add_summary(self, env: str, target: Any, *, replace: bool = False) -> Entry:
        """An env's run summary: ``(store, run_id, notes) -> RunSummary | None``."""
        return self.add("summary", env, target, replace=replace)

    def add_scripted(
        self,
        env: str,
        agent: str,
        target: Any,
        description: str,
        *,
        takes_env: bool = False,
        replace: bool = False,
    ) -> Entry:
        """Scripted models answering ``agent`` on ``env``: ``target`` makes either the
        run's :class:`Roles` from the env's options (``takes_env``) or one answer function
        serving every role."""
        return self.add(
            "scripted", scripted_key(env, agent), target, description,
            replace=replace, env=env, agent=agent, takes_env=takes_env,
        )  # fmt: skip

    def add_tables(
        self, prefix: str, description: str, *, run_column: str = "run_id", replace: bool = False
    ) -> Entry:
        """Tables named ``prefix...`` that a plugin keeps in the run store's file (AutoManual's
        rules, by build). The store then takes a file holding only such tables for an
        empty one (so either side may create the file first), and deleting a run removes
        their rows whose ``run_column`` is the run's id."""
        for what, text in (("prefix", prefix), ("run_column", run_column)):
            if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
                raise RegistrationError(
                    f"tables {prefix!r}: {what} must be letters, digits and _ (not first), "
                    f"got {text!r}"
                )
        target = StoreTables(prefix, run_column)
        return self.add("tables", prefix, target, description, replace=replace)

    def add_command(self, name: str, target: Any, help: str, *, replace: bool = False) -> Entry:
        """A ``lorekit NAME`` command (a click command or group); ``help`` is the first
        paragraph of its own help, shown by ``lorekit --help`` without importing it."""
        return self.add("command", name, target, help, replace=replace, help=help)

    # -- looking up --------------------------------------------------------------------

    def get(self, kind: str, name: str) -> Entry:
        """The entry ``name`` of ``kind``; :class:`UnknownPart` lists the known names."""
        table = self._table(kind)
        entry = table.get(name)
        if entry is None:
            known = ", ".join(sorted(table)) or "(none)"
            raise UnknownPart(f"unknown {_singular(kind)} {name!r}; known: {known}")
        return entry

    def find(self, kind: str, name: str) -> Entry | None:
        """The entry, or None."""
        return self._table(kind).get(name)

    def names(self, kind: str) -> list[str]:
        """The names of ``kind``, sorted."""
        return sorted(self._table(kind))

    def entries(self, kind: str) -> list[Entry]:
        """The entries of ``kind`` in registration order (views are asked in this order)."""
        return list(self._table(kind).values())

    def load(self, kind: str, name: str) -> Any:
        """The object registered as ``name`` (imported now)."""
        return self.get(kind, name).load()

    def __contains__(self, key: tuple[str, str]) -> bool:
        kind, name = key
        return name in self._table(kind)

    def __iter__(self) -> Iterator[Entry]:
        self._ensure_plugins()
        for table in self._entries.values():
            yield from list(table.values())

    def _table(self, kind: str) -> dict[str, Entry]:
        if kind not in KINDS:
            raise RegistryError(f"unknown kind {kind!r}; kinds: {', '.join(KINDS)}")
        self._ensure_plugins()
        return self._entries[kind]

    # -- plugins -----------------------------------------------------------------------

    _origin: str = "code"

    def _ensure_plugins(self) -> None:
        if not self._plugins_pending or self._loading:
            return
        with self._lock:
            if not self._plugins_pending or self._loading:
                return
            self._loading = True
            try:
                found = plugin_entry_points()
                for ep, dist in found:
                    self.load_plugin(ep.load, f"{dist}:{ep.name}", ep)
                if not any(dist == "lorekit" for _, dist in found):
                    line = (
                        "lorekit: LoreKit's own parts are not registered: its package metadata "
                        f"lists no {ENTRY_POINT_GROUP!r} entry points (an install older than "
                        "the plugin registry, or a source tree that was never installed); "
                        "reinstall it: pip install -e ."
                    )
                    self.plugin_errors.append(line)
                    print(line, file=sys.stderr)
            finally:
                self._loading = False
                self._plugins_pending = False

    def load_plugin(self, loader: Callable[[], Any], origin: str, ep: Any = None) -> None:
        """Run one plugin's ``register(registry)``; a failure is kept as one line in
        :attr:`plugin_errors` (and printed once) so a broken plugin cannot stop the
        others or LoreKit's own parts."""
        previous = self._origin
        self._origin = origin
        try:
            register = loader()
            if not callable(register):
                raise RegistryError(
                    f"entry point {getattr(ep, 'value', '?')} is not a function register(registry)"
                )
            register(self)
            self.plugins_loaded.append(origin)
        except Exception as error:  # a plugin's own bug: report, keep going
            line = f"lorekit: plugin {origin} failed to load: {type(error).__name__}: {error}"
            self.plugin_errors.append(line)
            print(line, file=sys.stderr)
        finally:
            self._origin = previous


def scripted_key(env: str, agent: str) -> str:
    """The name scripted models for ``agent`` on ``env`` are registered under."""
    return f"{agent}@{env}"


def _singular(kind: str) -> str:
    return {"lore": "lore kind", "replay": "replay format", "summary": "run summary"}.get(
        kind, kind
    )


def plugin_entry_points() -> list[tuple[Any, str]]:
    """The group's entry points with their distribution's name: LoreKit's own first
    (its core's, named ``core-*``, before its methods', each sorted by name), then
    every other distribution's, sorted by distribution and name, so loading (and
    the order views are asked in) is deterministic.

    A distribution installed twice on the path (an editable install beside a
    wheel) is read once: the first one on ``sys.path`` wins, as for imports."""
    own: list[tuple[Any, str]] = []
    others: list[tuple[Any, str]] = []
    seen: set[str] = set()
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if not name or name in seen:
            continue
        seen.add(name)
        for ep in dist.entry_points:
            if ep.group == ENTRY_POINT_GROUP:
                (own if name == "lorekit" else others).append((ep, name))
    own.sort(key=lambda pair: (not pair[0].name.startswith("core-"), pair[0].name))
    others.sort(key=lambda pair: (pair[1], pair[0].name))
    return own + others


REGISTRY: Final = Registry()
"""The registry every command and library call uses."""
