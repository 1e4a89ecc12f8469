"""What every command that plays episodes does before the first one: read the
run config with the command line's overrides, parse ``KEY=VALUE`` options, build
the env once to check its options and list its tasks, and word what went wrong
in terms of the flags the user typed.

Shared by ``lorekit run``, ``automanual build``, ``team run``, ``laws ...``;
this module imports no command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lorekit.cli.errors import UserError
from lorekit.cli.options import ModelChoice
from lorekit.cli.stores import pick_store


def kv(items: Sequence[str], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` strings as a dict; each value is read as YAML when it parses."""
    import yaml

    from lorekit import yamlio

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(f"{flag}: expected KEY=VALUE, got {item!r}")
        try:
            # YAML reads "null" or "~" as None; "none" is what people type.
            out[key] = None if value.strip().lower() == "none" else yamlio.safe_load(value)
        except (yaml.YAMLError, RecursionError, ValueError):
            out[key] = value  # not YAML: keep what the user typed, as text
    return out


def raw_kv(items: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings as the text typed for each key (see :func:`kv`)."""
    return {key: value for key, _, value in (item.partition("=") for item in items)}


def typed_kv(items: Sequence[str], flag: str, target: Any) -> dict[str, Any]:
    """:func:`kv`, each value checked against ``target``'s annotated parameters
    (``expected an integer, got 'many'``) before anything is built."""
    from lorekit.cli.typed import check_options

    values = kv(items, flag)
    if target is None:
        return values
    return check_options(target, values, raw_kv(items), flag=flag)


def env_factory(name: str) -> Any:
    """The callable the env registry builds ``name`` with, or None when it cannot be
    looked up (the env then checks its own arguments)."""
    from lorekit.envs.registry import env_factory as factory_of
    from lorekit.registry import REGISTRY

    if REGISTRY.find("env", name) is None:
        return None
    try:
        return factory_of(name)
    except (ImportError, AttributeError, TypeError):
        return None


def with_defaults(env_opt: Sequence[str], defaults: dict[str, Any]) -> tuple[str, ...]:
    """``env_opt`` with ``KEY=VALUE`` defaults added for keys it does not set."""
    given = {o.split("=", 1)[0].strip() for o in env_opt}
    extra = [f"{k}={v}" for k, v in defaults.items() if k not in given]
    return (*extra, *env_opt)


def prepare_config(
    models: ModelChoice,
    *,
    cache: str | None = None,
    store: str | None = None,
    prices: Any = None,
) -> tuple[Any, str]:
    """The run config with the command line's overrides, and how to change its store.
    Each served model without a ``price:`` gets the price table's (``prices``, the dated
    default when None), so what a run spends is counted, not shown as $0."""
    from lorekit.cli.local_model import use_local_model
    from lorekit.config import RunConfig, apply_overrides, load_config
    from lorekit.eval.prices import with_list_prices

    cfg = load_config(models.config_path) if models.config_path else RunConfig()
    store, store_setting = pick_store(store, cfg, models.config_path)
    cfg = apply_overrides(
        cfg,
        model=models.model,
        base_url=models.base_url,
        roles=models.roles,
        cache=cache,
        store=store,
        request_timeout=models.request_timeout,
    )
    return with_list_prices(use_local_model(cfg), prices), store_setting


def prepare_tasks(
    env_name: str, env_opt: Sequence[str], tasks_opt: str | None, split: str
) -> tuple[dict[str, Any], list[Any], str | None]:
    """The env's arguments, the split's tasks and where they come from; a probe env
    is built once (and closed) so that bad options fail before anything runs."""
    import inspect

    from lorekit.envs import make

    factory = env_factory(env_name)
    env_kwargs = typed_kv(env_opt, "--env-opt", factory)
    pick: list[str] | None = None
    if tasks_opt is not None:
        if "tasks" in env_kwargs:
            raise UserError("give the task list once: --tasks or --env-opt tasks=..., not both")
        takes_tasks = factory is None or "tasks" in inspect.signature(factory).parameters
        if takes_tasks:  # the env's own task lists (miniwob: automanual-53, page names)
            env_kwargs["tasks"] = tasks_opt
            env_opt = (*env_opt, f"tasks={tasks_opt}")
        else:
            pick = [t.strip() for t in tasks_opt.split(",") if t.strip()]
            if not pick:
                raise UserError("--tasks: expected task ids or groups separated by commas")
    try:
        probe = make(env_name, **env_kwargs)
        try:
            tasks = probe.tasks(split)
            provenance = probe.describe_split(split)
            if pick is not None:
                tasks = pick_tasks(env_name, probe, split, tasks, pick)
                provenance = "; ".join(p for p in (provenance, f"--tasks {','.join(pick)}") if p)
        finally:
            probe.close()
    except (LookupError, TypeError, ValueError, OSError) as exc:
        raise UserError(env_problem(env_name, env_opt, exc)) from None
    return env_kwargs, list(tasks), provenance


def pick_tasks(
    env_name: str, probe: Any, split: str, tasks: list[Any], pick: list[str]
) -> list[Any]:
    """The tasks ``pick`` names (task ids or groups), from ``split`` first, then from the
    env's other splits; an unknown name is one line listing the closest ids."""
    import difflib

    from lorekit.textsafe import safe_line

    catalogue = list(tasks)
    chosen: list[Any] = []
    for name in pick:
        found = [t for t in catalogue if name in (t.id, t.group)]
        if not found:
            for other in probe.splits():
                if other != split:
                    catalogue += [t for t in probe.tasks(other) if t not in catalogue]
            found = [t for t in catalogue if name in (t.id, t.group)]
        if not found:
            names = sorted({t.id for t in catalogue} | {t.group for t in catalogue})
            close = difflib.get_close_matches(name, names, n=5, cutoff=0.5)
            hint = f"; close: {', '.join(close)}" if close else f"; e.g. {', '.join(names[:5])}"
            raise UserError(
                f"--tasks: env {env_name!r} has no task or group {safe_line(name)!r}{hint}"
            )
        chosen += [t for t in found if t not in chosen]
    return chosen


def problem(exc: BaseException) -> str:
    """An exception as the one line a user reads (no class names, no quotes of a key)."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    return str(text)


def agent_problem(name: str, opts: Sequence[str], exc: BaseException) -> str:
    """Why agent ``name`` could not be made, naming the ``--agent-opt`` given."""
    from lorekit.registry import REGISTRY

    msg = problem(exc)
    if REGISTRY.find("agent", name) is None or msg.startswith(f"agent {name!r}"):
        return msg
    return f"agent {name!r}" + (f" with --agent-opt {' '.join(opts)}" if opts else "") + f": {msg}"


def env_problem(name: str, opts: Sequence[str], exc: BaseException) -> str:
    """Why env ``name`` could not be made, naming the ``--env-opt`` given."""
    from lorekit.envs.registry import UnknownEnvError

    msg = problem(exc)
    if isinstance(exc, UnknownEnvError) or msg.startswith(f"bad arguments for env {name!r}"):
        return msg
    return f"env {name!r}" + (f" with --env-opt {' '.join(opts)}" if opts else "") + f": {msg}"
