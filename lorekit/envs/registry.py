"""Envs by name: ``make("textcraft", **options)``, over :mod:`lorekit.registry`.

Envs are registered (by LoreKit's core, its methods and outside plugins alike)
with an import string naming their class or factory, so listing envs imports
none of them and an env with heavy optional dependencies costs something only
when it is made. The options an env accepts are its class's (or factory's)
keyword arguments, checked before anything is built.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from lorekit.envs.base import Execution, TextEnv
from lorekit.envs.episodes import EpisodeRules
from lorekit.envs.steplimit import check_max_steps
from lorekit.extras import requires_extra
from lorekit.registry import REGISTRY, Entry, UnknownPart

EnvFactory = Callable[..., TextEnv]

_EXECUTIONS = ("inline", "thread", "process")


class UnknownEnvError(UnknownPart):
    """Raised by :func:`make` for a name nobody registered."""


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
    """Make ``factory`` available as ``make(name, ...)`` (the in-process form of a
    plugin's ``registry.add_env``).

    ``factory`` is a callable or an import string ``"package.module:attribute"``
    naming one, imported the first time the env is made or its arguments checked.
    ``execution`` overrides the env class's own ``execution`` declaration;
    ``"process"`` must be declared here, because the harness has to know it
    before anything is built (it builds the env in a child process). ``extra``
    names the optional dependency group (``pip install 'lorekit[EXTRA]'``) the env
    needs, so a missing package is reported as that one command. ``expert`` says
    whether the env's ``expert_action()`` plays (``--agent oracle``); None: the env
    does not say. A taken name is an error unless ``replace`` is set.
    """
    REGISTRY.add_env(
        name, factory, description, execution=execution, extra=extra, expert=expert,
        replace=replace,
    )  # fmt: skip


def _entry(name: str) -> Entry:
    entry = REGISTRY.find("env", name)
    if entry is None:
        known = ", ".join(REGISTRY.names("env")) or "(none)"
        raise UnknownEnvError(f"unknown env {name!r}; known envs: {known}")
    return entry


def env_factory(name: str) -> EnvFactory:
    """The class or factory registered as ``name`` (imported now)."""
    entry = _entry(name)
    with requires_extra(f"the {name!r} environment", entry.meta.get("extra")):
        found = entry.load()
    if not callable(found):
        raise TypeError(f"env factory {entry.target_name!r} is not callable")
    return cast(EnvFactory, found)


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
        execution: Execution | None = self.execution or _entry(self.name).meta.get("execution")
        return execution

    @property
    def factory(self) -> EnvFactory:
        """The registered factory (a child process gets it by reference when it pickles)."""
        return env_factory(self.name)


def list_envs() -> list[tuple[str, str]]:
    """(name, description) of every registered env, sorted by name."""
    return [(name, REGISTRY.get("env", name).description) for name in REGISTRY.names("env")]


def env_extra(name: str) -> str | None:
    """The optional extra env ``name`` needs, or None (also for unknown names)."""
    entry = REGISTRY.find("env", name)
    return entry.meta.get("extra") if entry is not None else None


def env_has_expert(name: str) -> bool | None:
    """Whether env ``name`` has a built-in expert; None when it does not say (or is unknown)."""
    entry = REGISTRY.find("env", name)
    return entry.meta.get("expert") if entry is not None else None


def envs_with_expert() -> list[str]:
    """The registered envs whose built-in expert plays, sorted by name."""
    return sorted(e.name for e in REGISTRY.entries("env") if e.meta.get("expert"))


def make(name: str, **kwargs: Any) -> TextEnv:
    """Build the env registered as ``name`` with ``kwargs``.

    Unknown names list the known ones; keyword arguments the factory does not
    accept are reported with the accepted ones, before anything is built; a
    missing optional package raises :class:`~lorekit.extras.MissingExtraError`
    with the install command.
    """
    factory = _check_arguments(name, kwargs)
    options = dict(kwargs)
    ruled = "max_steps" in _entry(name).meta  # the core applies the episode rules
    cap = options.pop("max_steps", _entry(name).meta.get("max_steps")) if ruled else None
    with requires_extra(f"the {name!r} environment", env_extra(name)):
        env = factory(**options)
    if not isinstance(env, TextEnv):
        raise TypeError(f"factory for env {name!r} returned {type(env).__name__}, not a TextEnv")
    return EpisodeRules(env, cap) if ruled else env


def env_parameters(name: str) -> dict[str, inspect.Parameter]:
    """The options env ``name`` accepts: its factory's keyword parameters, by name, and
    ``max_steps`` when the core applies its episode rules."""
    try:
        signature = inspect.signature(env_factory(name))
    except (TypeError, ValueError):
        return {}
    found = {
        p.name: p
        for p in signature.parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    meta = _entry(name).meta
    if "max_steps" in meta and "max_steps" not in found:
        found["max_steps"] = inspect.Parameter(
            "max_steps",
            inspect.Parameter.KEYWORD_ONLY,
            default=meta["max_steps"],
            annotation=int | None,
        )
    return found


def _check_arguments(name: str, kwargs: dict[str, Any]) -> EnvFactory:
    """The factory of ``name``, once it is known to accept ``kwargs``."""
    factory = env_factory(name)
    options = dict(kwargs)
    if "max_steps" in _entry(name).meta:
        check_max_steps(options.pop("max_steps", None))
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins without a signature: let the call decide
        return factory
    try:
        signature.bind(**options)
    except TypeError as error:
        accepted = ", ".join(env_parameters(name))
        raise TypeError(
            f"bad arguments for env {name!r}: {error}; accepted: {accepted or '(none)'}"
        ) from None
    return factory
