"""Name -> factory registry, so configs and the CLI can say ``textcraft``.

Factories are plain callables, imported lazily for built-in envs, so importing
``lorekit.envs`` stays cheap and an env with heavy optional dependencies only
costs something when it is made.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lorekit.envs.base import TextEnv
from lorekit.extras import requires_extra

EnvFactory = Callable[..., TextEnv]


class UnknownEnvError(LookupError):
    """Raised by :func:`make` for a name nobody registered."""


@dataclass(frozen=True)
class _Entry:
    factory: EnvFactory
    description: str
    extra: str | None = None


_REGISTRY: dict[str, _Entry] = {}


def register(
    name: str,
    factory: EnvFactory,
    description: str,
    *,
    extra: str | None = None,
    replace: bool = False,
) -> None:
    """Make ``factory`` available as ``make(name, ...)``.

    ``extra`` names the optional dependency group (``pip install
    'lorekit[EXTRA]'``) the env needs, so a missing package is reported as that
    one command instead of an import traceback. Registering a taken name is an
    error unless ``replace`` is set, so two plugins cannot silently shadow
    each other.
    """
    if not name or name != name.strip():
        raise ValueError(f"env name must be a non-empty string without spaces around it: {name!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"env {name!r} is already registered; pass replace=True to override")
    _REGISTRY[name] = _Entry(factory, description, extra)


def list_envs() -> list[tuple[str, str]]:
    """(name, description) of every registered env, sorted by name."""
    return [(name, entry.description) for name, entry in sorted(_REGISTRY.items())]


def env_extra(name: str) -> str | None:
    """The optional extra env ``name`` needs, or None (also for unknown names)."""
    entry = _REGISTRY.get(name)
    return entry.extra if entry is not None else None


def make(name: str, **kwargs: Any) -> TextEnv:
    """Build the env registered as ``name`` with ``kwargs``.

    Unknown names list the known ones; keyword arguments the factory does not
    accept are reported with the accepted ones, before anything is built; a
    missing optional package raises :class:`~lorekit.extras.MissingExtraError`
    with the install command.
    """
    entry = _REGISTRY.get(name)
    if entry is None:
        known = ", ".join(sorted(_REGISTRY)) or "(none)"
        raise UnknownEnvError(f"unknown env {name!r}; known envs: {known}")
    try:
        signature = inspect.signature(entry.factory)
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
    with requires_extra(f"the {name!r} environment", entry.extra):
        env = entry.factory(**kwargs)
    if not isinstance(env, TextEnv):
        raise TypeError(f"factory for env {name!r} returned {type(env).__name__}, not a TextEnv")
    return env


def _make_textcraft(
    source: Any = "minecraft-data",
    *,
    compat: bool = False,
    max_steps: int = 40,
    seed: int = 0,
    distractors: int = 10,
    test_size: int = 200,
    dev_size: int = 100,
) -> TextEnv:
    from lorekit.envs.textcraft import TextCraftEnv

    return TextCraftEnv(
        source,
        compat=compat,
        max_steps=max_steps,
        seed=seed,
        distractors=distractors,
        test_size=test_size,
        dev_size=dev_size,
    )


register(
    "textcraft",
    _make_textcraft,
    "Minecraft crafting from text recipes (ADaPT's TextCraft); sources: minecraft-data, datapack",
)


def _make_crafter(*, length: int = 10_000, expanded: bool = False) -> TextEnv:
    from lorekit.envs.crafter import CrafterTextEnv

    return CrafterTextEnv(length=length, expanded=expanded)


def _make_crafter_party(players: int = 2, *, length: int = 2_000) -> TextEnv:
    from lorekit.envs.crafter import CrafterParty

    return CrafterParty(players, length=length)


register(
    "crafter",
    _make_crafter,
    "Crafter survival world as text (crafter's engine, 22 achievements)",
    extra="crafter",
)
register(
    "crafter-party",
    _make_crafter_party,
    "Several players in one Crafter world, collective tasks",
    extra="crafter",
)
