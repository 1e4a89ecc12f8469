"""Name -> factory registry, so configs and the CLI can say ``textcraft``.

A factory is a callable or an import string (``"package.module:attribute"``).
Built-in envs are named by import string (their factories live in
:mod:`lorekit.envs.builtin`), so this module imports no env package:
``import lorekit.envs`` stays cheap, listing envs imports nothing, and an env
with heavy optional dependencies only costs something when it is made. Plugins
may register either form.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from lorekit.envs.base import Execution, TextEnv
from lorekit.extras import requires_extra

EnvFactory = Callable[..., TextEnv]


class UnknownEnvError(LookupError):
    """Raised by :func:`make` for a name nobody registered."""


_EXECUTIONS = ("inline", "thread", "process")


class _Entry:
    """One registered env; an import-string factory is imported on first use."""

    __slots__ = ("_factory", "description", "execution", "expert", "extra")

    def __init__(
        self,
        factory: EnvFactory | str,
        description: str,
        execution: Execution | None,
        extra: str | None = None,
        expert: bool | None = None,
    ) -> None:
        self._factory = factory
        self.description = description
        self.execution = execution
        self.extra = extra
        self.expert = expert

    @property
    def factory(self) -> EnvFactory:
        if isinstance(self._factory, str):
            self._factory = _resolve(self._factory)
        return self._factory


def _resolve(target: str) -> EnvFactory:
    """The callable an import string ``"package.module:attribute"`` names."""
    module, _, attribute = target.partition(":")
    found = getattr(importlib.import_module(module), attribute)
    if not callable(found):
        raise TypeError(f"env factory {target!r} is not callable")
    return cast(EnvFactory, found)


_REGISTRY: dict[str, _Entry] = {}


def register(
    name: str,
    factory: EnvFactory | str,
    description: str,
    *,
    execution: Execution | None = None,
    extra: str | None = None,
    expert: bool | None = None,
    replace: bool = False,
) -> None:
    """Make ``factory`` available as ``make(name, ...)``.

    ``factory`` is a callable or an import string ``"package.module:attribute"``
    naming one, imported the first time the env is made or its arguments checked.

    ``execution`` overrides the env class's own ``execution`` declaration;
    ``"process"`` must be declared here, because the harness has to know it
    before anything is built (it builds the env in a child process).
    ``extra`` names the optional dependency group (``pip install
    'lorekit[EXTRA]'``) the env needs, so a missing package is reported as that
    one command instead of an import traceback. ``expert`` says whether the
    env's ``expert_action()`` plays (``--agent oracle``), so an agent that needs
    it is refused before the run; None: the env does not say. Registering a taken name is
    an error unless ``replace`` is set, so two plugins cannot silently shadow
    each other.
    """
    if not name or name != name.strip():
        raise ValueError(f"env name must be a non-empty string without spaces around it: {name!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"env {name!r} is already registered; pass replace=True to override")
    if execution is not None and execution not in _EXECUTIONS:
        raise ValueError(f"execution must be one of {', '.join(_EXECUTIONS)}, got {execution!r}")
    if isinstance(factory, str) and (":" not in factory or factory.startswith(":")):
        raise ValueError(f"an import string factory is 'package.module:attribute', got {factory!r}")
    _REGISTRY[name] = _Entry(factory, description, execution, extra, expert)


@dataclass(frozen=True)
class EnvSpec:
    """A registered env by name and arguments: what the harness needs to build
    copies of it anywhere, including in a child process (nothing live to pickle).

    ``execution`` overrides both the registry's and the env class's choice.
    """

    name: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    execution: Execution | None = None

    def __post_init__(self) -> None:
        _check_arguments(self.name, dict(self.kwargs))
        if self.execution is not None and self.execution not in _EXECUTIONS:
            raise ValueError(
                f"execution must be one of {', '.join(_EXECUTIONS)}, got {self.execution!r}"
            )

    def make(self) -> TextEnv:
        """Build one env from the spec, in the calling thread."""
        return make(self.name, **self.kwargs)

    @property
    def declared_execution(self) -> Execution | None:
        """The spec's or the registry's choice; None leaves it to the env class."""
        return self.execution or _REGISTRY[self.name].execution

    @property
    def factory(self) -> EnvFactory:
        """The registered factory (a child process gets it by reference when it pickles)."""
        return _REGISTRY[self.name].factory


def list_envs() -> list[tuple[str, str]]:
    """(name, description) of every registered env, sorted by name."""
    return [(name, entry.description) for name, entry in sorted(_REGISTRY.items())]


def env_extra(name: str) -> str | None:
    """The optional extra env ``name`` needs, or None (also for unknown names)."""
    entry = _REGISTRY.get(name)
    return entry.extra if entry is not None else None


def env_has_expert(name: str) -> bool | None:
    """Whether env ``name`` has a built-in expert; None when it does not say (or is unknown)."""
    entry = _REGISTRY.get(name)
    return entry.expert if entry is not None else None


def envs_with_expert() -> list[str]:
    """The registered envs whose built-in expert plays, sorted by name."""
    return sorted(name for name, entry in _REGISTRY.items() if entry.expert)


def make(name: str, **kwargs: Any) -> TextEnv:
    """Build the env registered as ``name`` with ``kwargs``.

    Unknown names list the known ones; keyword arguments the factory does not
    accept are reported with the accepted ones, before anything is built; a
    missing optional package raises :class:`~lorekit.extras.MissingExtraError`
    with the install command.
    """
    entry = _check_arguments(name, kwargs)
    with requires_extra(f"the {name!r} environment", entry.extra):
        env = entry.factory(**kwargs)
    if not isinstance(env, TextEnv):
        raise TypeError(f"factory for env {name!r} returned {type(env).__name__}, not a TextEnv")
    return env


def _check_arguments(name: str, kwargs: dict[str, Any]) -> _Entry:
    """The entry for ``name``, once its factory is known to accept ``kwargs``."""
    entry = _REGISTRY.get(name)
    if entry is None:
        known = ", ".join(sorted(_REGISTRY)) or "(none)"
        raise UnknownEnvError(f"unknown env {name!r}; known envs: {known}")
    with requires_extra(f"the {name!r} environment", entry.extra):
        factory = entry.factory
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins without a signature: let the call decide
        signature = None
    if signature is not None:
        try:
            signature.bind(**kwargs)
        except TypeError as error:
            accepted = ", ".join(
                p.name
                for p in signature.parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            )
            raise TypeError(
                f"bad arguments for env {name!r}: {error}; accepted: {accepted or '(none)'}"
            ) from None
    return entry


_BUILTIN = "lorekit.envs.builtin:"

register(
    "textcraft",
    _BUILTIN + "make_textcraft",
    "Minecraft crafting from text recipes (ADaPT's TextCraft); sources: minecraft-data, datapack",
    expert=True,
)
register(
    "crafter",
    _BUILTIN + "make_crafter",
    "Crafter survival world as text (crafter's engine, 22 achievements)",
    extra="crafter",
    expert=False,
)
register(
    "crafter-party",
    _BUILTIN + "make_crafter_party",
    "Several players in one Crafter world, collective tasks",
    extra="crafter",
    expert=False,
)
register(
    "alfworld",
    _BUILTIN + "make_alfworld",
    "ALFWorld households on the real TextWorld/PDDL engine; generated games or the official data",
    extra="alfworld",
    execution="process",
    expert=True,
)
register(
    "miniwob",
    _BUILTIN + "make_miniwob",
    "MiniWoB++ web tasks in a real headless Chromium (AutoManual's 53 tasks and actions)",
    extra="web",
    expert=True,
)
register(
    "webshop",
    _BUILTIN + "make_webshop",
    "WebShop online shopping (search, pages, reward as the original); generated catalogue "
    "or WebShop's files via WEBSHOP_DATA",
    expert=True,
)
