"""Name -> factory registry, so configs and the CLI can say ``textcraft``.

Factories are plain callables, imported lazily for built-in envs, so importing
``lorekit.envs`` stays cheap and an env with heavy optional dependencies only
costs something when it is made.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lorekit.envs.base import Execution, TextEnv
from lorekit.extras import requires_extra

EnvFactory = Callable[..., TextEnv]


class UnknownEnvError(LookupError):
    """Raised by :func:`make` for a name nobody registered."""


_EXECUTIONS = ("inline", "thread", "process")


@dataclass(frozen=True)
class _Entry:
    factory: EnvFactory
    description: str
    execution: Execution | None
    extra: str | None = None
    expert: bool | None = None


_REGISTRY: dict[str, _Entry] = {}


def register(
    name: str,
    factory: EnvFactory,
    description: str,
    *,
    execution: Execution | None = None,
    extra: str | None = None,
    expert: bool | None = None,
    replace: bool = False,
) -> None:
    """Make ``factory`` available as ``make(name, ...)``.

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
    return entry


def _make_textcraft(
    source: Any = "minecraft-data",
    *,
    compat: bool = False,
    max_steps: int | None = 40,
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
    expert=True,
)


def _make_crafter(
    *,
    length: int = 10_000,
    expanded: bool = False,
    tasks: str = "all",
    observation: str = "standard",
) -> TextEnv:
    from lorekit.envs.crafter import CrafterTextEnv

    return CrafterTextEnv(length=length, expanded=expanded, tasks=tasks, observation=observation)


def _make_crafter_party(
    players: int = 2, *, length: int = 2_000, peaceful: bool = False
) -> TextEnv:
    from lorekit.envs.crafter import CrafterParty

    return CrafterParty(players, length=length, peaceful=peaceful)


register(
    "crafter",
    _make_crafter,
    "Crafter survival world as text (crafter's engine, 22 achievements)",
    extra="crafter",
    expert=False,
)
register(
    "crafter-party",
    _make_crafter_party,
    "Several players in one Crafter world, collective tasks",
    extra="crafter",
    expert=False,
)


def _make_alfworld(
    source: str = "generated",
    *,
    split: str | None = None,
    data_dir: str | None = None,
    syntax: str = "move",
    strip_arrival: bool = False,
    object_ids: bool = False,
    banner: bool = True,
    max_steps: int | None = 50,
) -> TextEnv:
    from lorekit.envs.alfworld import AlfWorldEnv

    return AlfWorldEnv(
        source,
        split=split,
        data_dir=data_dir,
        syntax=syntax,  # type: ignore[arg-type]
        strip_arrival=strip_arrival,
        object_ids=object_ids,
        banner=banner,
        max_steps=max_steps,
    )


register(
    "alfworld",
    _make_alfworld,
    "ALFWorld households on the real TextWorld/PDDL engine; generated games or the official data",
    extra="alfworld",
    execution="process",
    expert=True,
)


def _make_miniwob(
    tasks: str = "automanual-53",
    *,
    episodes_per_task: int = 6,
    seed: int = 0,
    success: str = "strict",
    html: str = "clean",
    page_time_ms: int | None = 1_000_000,
    max_steps: int | None = 20,
    pool_size: int | None = None,
) -> TextEnv:
    from lorekit.envs.miniwob import MiniWoBEnv

    return MiniWoBEnv(
        tasks,
        episodes_per_task=episodes_per_task,
        seed=seed,
        success=success,  # type: ignore[arg-type]
        html=html,  # type: ignore[arg-type]
        page_time_ms=page_time_ms,
        max_steps=max_steps,
        pool_size=pool_size,
    )


register(
    "miniwob",
    _make_miniwob,
    "MiniWoB++ web tasks in a real headless Chromium (AutoManual's 53 tasks and actions)",
    extra="web",
    expert=True,
)


def _make_webshop(
    *,
    size: int = 1000,
    goals: int = 2000,
    seed: int = 0,
    data_dir: str | None = None,
    search: str = "fts5",
    max_steps: int | None = 15,
    style: str = "plain",
) -> TextEnv:
    from lorekit.envs.webshop import WebShopEnv

    return WebShopEnv(
        size=size,
        goals=goals,
        seed=seed,
        data_dir=data_dir,
        search=search,
        max_steps=max_steps,
        style=style,
    )


register(
    "webshop",
    _make_webshop,
    "WebShop online shopping (search, pages, reward as the original); generated catalogue "
    "or WebShop's files via WEBSHOP_DATA",
    expert=True,
)
