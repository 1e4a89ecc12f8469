"""Option sets shared by the commands, each declared once and parsed into one object.

``lorekit run``, ``automanual build``, ``team run``, ``laws extract``, ``graph
run``, ... pick models the same way and play recorded episodes the same way;
declaring those options once keeps their names, defaults and help identical.
Each set is a decorator that adds its click options and hands the command one
frozen object instead of the individual values (``models: ModelChoice``,
``harness: HarnessOptions``, ...), so a command's signature lists what it is
about rather than two dozen flags. This module imports no command.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click

from lorekit.cli.stores import DEFAULT_STORE, default_store

USER_CONFIG = "~/.config/lorekit/config.yaml"

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def positive_seconds(
    ctx: click.Context, param: click.Parameter, value: float | None
) -> float | None:
    """Option callback: a duration must be a positive, finite number of seconds
    (``inf`` or ``nan`` would disable a timeout silently, so they are refused
    like zero). Use with ``type=float``."""
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise click.BadParameter(f"expected a positive, finite number of seconds, got {value}")
    return value


RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")
MAX_RUN_ID = 128
"""A run id names a run in tables, file names and shell commands: letters, digits
and ``. - _ :`` (starting with a letter or digit), at most 128 characters."""
MAX_LOOKUP_ID = 1024
"""Looking up a run accepts any id a store might hold, up to this length."""


def check_run_id(value: str) -> str:
    """``value`` if it can name a new run, else :class:`click.BadParameter` saying why."""
    from lorekit.textsafe import safe_line

    if len(value) > MAX_RUN_ID:
        raise click.BadParameter(
            f"expected at most {MAX_RUN_ID} characters, got {len(value):,} characters"
        )
    if not RUN_ID_PATTERN.fullmatch(value):
        raise click.BadParameter(
            "expected letters, digits and . - _ : (starting with a letter or digit), "
            f"got {safe_line(value)!r}"
        )
    return value


def new_run_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Option callback of ``--run-id``: checked before the store is touched."""
    return None if value is None else check_run_id(value)


def lookup_run_ids(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Argument callback of RUN / BUILD arguments that look runs up: an id no run can
    have (overlong) is refused at once. Takes one id or a tuple of them."""
    for one in (value,) if isinstance(value, str) else value or ():
        if len(one) > MAX_LOOKUP_ID:
            raise click.BadParameter(
                f"no run has an id of {len(one):,} characters (run ids have at most "
                f"{MAX_RUN_ID}; see `lorekit runs list`)"
            )
    return value


MAX_SEED = 2**31 - 1
SEED = click.IntRange(0, MAX_SEED)
"""The type of every ``--seed``: 0..2,147,483,647. Seeds reach numpy's generators
(which take 0..2**32-1) and the run store's integers after episode indexes are
added to them; a larger one once failed the SQLite insert and lost the run."""


def _param_names(options: Sequence[Decorator]) -> tuple[str, ...]:
    """The parameter names ``options`` give their values under."""

    def probe() -> None: ...

    for option in options:
        option(probe)
    params: list[click.Parameter] = getattr(probe, "__click_params__", [])
    return tuple(p.name for p in params if p.name is not None)


def option_set(name: str, make: Callable[..., object], options: Sequence[Decorator]) -> Decorator:
    """A decorator adding ``options`` to a command and passing ``name=make(**values)``.

    ``make`` takes the options' values by their parameter names; those are
    removed from what the command receives, so it sees one object instead."""
    taken = _param_names(options)

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            kwargs[name] = make(**{key: kwargs.pop(key) for key in taken})
            return f(*args, **kwargs)

        decorated: Callable[..., Any] = command
        for option in reversed(options):
            decorated = option(decorated)
        return decorated

    return decorate


# ---------------------------------------------------------------------- models
@dataclass(frozen=True, slots=True)
class ModelChoice:
    """Which models a command uses: a run config, overridden by the flags."""

    config_path: str | None = None
    model: str | None = None
    base_url: str | None = None
    roles: tuple[str, ...] = ()
    request_timeout: float | None = None

    @property
    def given(self) -> bool:
        """Whether the user named any model (a config, ``--model`` or a ``--role``)."""
        return bool(self.model or self.config_path or self.roles)


def _model_choice(
    config_path: str | None,
    model: str | None,
    base_url: str | None,
    roles_opt: tuple[str, ...],
    request_timeout: float | None,
) -> ModelChoice:
    return ModelChoice(config_path, model, base_url, tuple(roles_opt), request_timeout)


model_options = option_set(
    "models",
    _model_choice,
    [
        click.option(
            "--config",
            "-c",
            "config_path",
            type=click.Path(dir_okay=False),
            default=None,
            help="YAML run config: roles, cache, store (docs/models.md).",
        ),
        click.option(
            "--model",
            "-m",
            default=None,
            help="Model of the default role; scripted:echo, scripted:simulate (the method's "
            "scripted test models) or scripted:FILE (answers in order) answer without a server.",
        ),
        click.option(
            "--base-url", default=None, help="OpenAI-compatible endpoint of the default role."
        ),
        click.option("--role", "roles_opt", multiple=True, help="ROLE=MODEL, repeatable."),
        click.option(
            "--request-timeout",
            "request_timeout",
            type=float,
            callback=positive_seconds,
            default=None,
            metavar="SECONDS",
            help="Deadline of each model request attempt, for every role "
            "(overrides the config's timeout_s; default 60).",
        ),
    ],
)
"""``--config/-c``, ``--model/-m``, ``--base-url``, ``--role`` and
``--request-timeout``, passed as ``models: ModelChoice``."""


# ---------------------------------------------------------------- single options
cache_option = click.option(
    "--cache",
    type=click.Choice(["read-write", "replay", "off"]),
    default=None,
    help="Model cache mode (default: the config's; off without a config, so nothing is cached).",
)
retry_errors_option = click.option(
    "--retry-errors", is_flag=True, help="On resume, replay episodes that errored."
)
progress_option = click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress on stderr: a live bar with the time left on a terminal, a line every "
    "30 seconds in a log [default: on; --no-progress: none].",
)
store_option = click.option(
    "--store",
    default=None,
    help=f"Run store (default: $LOREKIT_STORE, the config's, store: in {USER_CONFIG}, "
    f"or {DEFAULT_STORE}).",
)


def read_store_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--store`` of the commands that read recorded runs (an existing file)."""
    return click.option(
        "--store",
        default=default_store,
        show_default=f"$LOREKIT_STORE, store: in {USER_CONFIG}, or {DEFAULT_STORE}",
        help="Run store (SQLite file).",
    )(f)


# --------------------------------------------------------------------- harness
@dataclass(frozen=True, slots=True)
class HarnessOptions:
    """How the harness plays and records episodes (``lorekit run``, ``team run``, ...)."""

    concurrency: int = 1
    run_id: str | None = None
    seed: int = 0
    timeout_s: float = 600.0
    cache: str | None = None
    retry_errors: bool = False
    progress: bool | None = None
    store: str | None = None


def harness_options(
    *,
    concurrency: int | None = 8,
    timeout_s: float = 600.0,
    timeout_help: str | None = "Per-episode timeout in seconds.",
    range_checked_timeout: bool = True,
    run_id_help: str = "Name the run; an existing id resumes it.",
    seed_help: str | None = None,
) -> Decorator:
    """``-j``, ``--run-id``, ``--seed``, ``--timeout``, ``--cache``, ``--retry-errors``,
    ``--progress`` and ``--store``, passed as ``harness: HarnessOptions``.

    The defaults and help that differ between commands are arguments;
    ``concurrency=None`` leaves ``-j`` out (the command plays one episode at a
    time). ``range_checked_timeout=False`` takes any float and leaves the check
    (and its message) to the command."""
    options: list[Decorator] = []
    if concurrency is not None:
        options.append(
            click.option(
                "--concurrency",
                "-j",
                type=click.IntRange(min=1),
                default=concurrency,
                show_default=True,
            )
        )
    options += [
        click.option("--run-id", default=None, callback=new_run_id, help=run_id_help),
        click.option("--seed", type=SEED, default=0, show_default=True, help=seed_help),
        click.option(
            "--timeout",
            "timeout_s",
            type=click.FloatRange(min=0.001) if range_checked_timeout else float,
            default=timeout_s,
            show_default=True,
            help=timeout_help,
        ),
        cache_option,
        retry_errors_option,
        progress_option,
        store_option,
    ]

    def make(**values: Any) -> HarnessOptions:
        return HarnessOptions(**values)

    return option_set("harness", make, options)


# ----------------------------------------------------------------------- tasks
@dataclass(frozen=True, slots=True)
class TaskChoice:
    """Which tasks of the env to play, and the env's own options."""

    split: str = "test"
    episodes: int | None = None
    env_opt: tuple[str, ...] = ()
    tasks: str | None = None


def task_options(
    *,
    split: str = "test",
    split_help: str | None = None,
    episodes: bool = True,
    tasks_help: str = "Task list of envs that have several (miniwob: automanual-53, "
    "feedback-9, all, or page names); short for --env-opt tasks=...",
) -> Decorator:
    """``--episodes/-n`` (unless ``episodes=False``), ``--split``, ``--env-opt`` and
    ``--tasks``, passed as ``tasks: TaskChoice``."""
    options: list[Decorator] = []
    if episodes:
        options.append(
            click.option(
                "--episodes",
                "-n",
                type=click.IntRange(min=1),
                default=None,
                help="Play the first N tasks of the split (default: all).",
            )
        )
    options += [
        click.option("--split", default=split, show_default=True, help=split_help),
        click.option("--env-opt", multiple=True, help="KEY=VALUE passed to the environment."),
        click.option("--tasks", "tasks_opt", default=None, help=tasks_help),
    ]

    def make(
        split: str, env_opt: tuple[str, ...], tasks_opt: str | None, episodes: int | None = None
    ) -> TaskChoice:
        return TaskChoice(split, episodes, tuple(env_opt), tasks_opt)

    return option_set("tasks", make, options)


# --------------------------------------------------------------------- backend
@dataclass(frozen=True, slots=True)
class BackendChoice:
    """Where episodes play: this process, or Ray actors."""

    backend: str = "local"
    address: str | None = None
    actors: int | None = None


backend_options = option_set(
    "backend",
    BackendChoice,
    [
        click.option(
            "--backend",
            type=click.Choice(["local", "ray"]),
            default="local",
            show_default=True,
            help="Where episodes play: this process, or Ray actors (extra lorekit[ray]; "
            "docs/ray.md).",
        ),
        click.option(
            "--address",
            default=None,
            help="Ray cluster to join (ray://HOST:PORT or 'auto'); default: start a local one.",
        ),
        click.option(
            "--actors",
            type=click.IntRange(min=1),
            default=None,
            help="Ray actors, each owning its envs (default: the cluster's CPU count).",
        ),
    ],
)
"""``--backend``, ``--address`` and ``--actors``, passed as ``backend: BackendChoice``."""
