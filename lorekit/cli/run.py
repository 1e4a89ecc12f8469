"""``lorekit run``: evaluate an agent on an environment; results go to the run store.

The options come in sets shared with the other commands that play episodes
(:mod:`lorekit.cli.options`), and the preparation (config, tasks, checks) is
the one they share too (:mod:`lorekit.cli.prepare`, :mod:`lorekit.cli.checks`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import click

from lorekit.cli.console import console, err_console, show_progress
from lorekit.cli.errors import Interrupted, RunFailed, UserError, model_error_hint, with_hint
from lorekit.cli.options import (
    BackendChoice,
    HarnessOptions,
    ModelChoice,
    TaskChoice,
    backend_options,
    harness_options,
    model_options,
    task_options,
)
from lorekit.cli.prepare import (
    agent_problem,
    prepare_config,
    prepare_tasks,
    problem,
    typed_kv,
    with_defaults,
)
from lorekit.cli.sandbox_option import unsafe_sandbox_option


@click.command("run")
@click.argument("env_name", metavar="ENV")
@click.option("--agent", "-a", "agent_name", required=True, help="Agent name (see docs).")
@click.option("--agent-opt", multiple=True, help="KEY=VALUE passed to the agent.")
@model_options
@task_options()
@harness_options(concurrency=8, timeout_s=600.0)
@click.option(
    "--max-initial-failures",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Stop when the first N episodes all fail with the same error "
    "(a wrong URL, key or model name, ...; 0: never stop early).",
)
@backend_options
@unsafe_sandbox_option
def run_cmd(
    env_name: str,
    agent_name: str,
    agent_opt: tuple[str, ...],
    models: ModelChoice,
    tasks: TaskChoice,
    harness: HarnessOptions,
    max_initial_failures: int,
    backend: BackendChoice,
) -> None:
    """Evaluate an agent on an environment; results go to the run store.

    Exits 1 when the run stopped early or any episode ended in an error."""
    played = play(
        env_name,
        agent_name,
        agent_opt,
        models,
        tasks,
        harness,
        max_initial_failures,
        backend,
    )
    if played.errored:
        raise RunFailed(played.errored_message())


@dataclass(frozen=True, slots=True)
class Played:
    """What :func:`play` recorded: the run, its size, its first errored episode."""

    run_id: str
    episodes: int
    errored: int = 0
    first_error: str | None = None
    first_errored_key: str | None = None
    resume: str | None = None
    """The options that resume this run (``--run-id RUN``, or the reproduction's id)."""

    def errored_message(self) -> str:
        first = (self.first_error or "").strip().splitlines()
        return (
            f"{self.errored} of {self.episodes} episodes ended in an error"
            + (f" (first: {first[-1]})" if first else "")
            + f"; see `lorekit show {self.run_id} {self.first_errored_key}`, "
            f"or replay them with {self.resume or f'--run-id {self.run_id}'} --retry-errors"
        )


def play(
    env_name: str,
    agent_name: str,
    agent_opt: tuple[str, ...],
    models: ModelChoice,
    tasks: TaskChoice,
    harness: HarnessOptions,
    max_initial_failures: int,
    backend: BackendChoice,
    *,
    agent_kwargs: dict[str, Any] | None = None,
    roles_for: Callable[[str, dict[str, Any], str], Any] | None = None,
    before_episode: Callable[[Any], bool] | None = None,
    on_episode: Callable[[Any], None] | None = None,
    price_table: Any = None,
    resume: str | None = None,
    wrap_models: Callable[[Any], Any] | None = None,
    choose_tasks: Callable[[list[Any]], list[Any]] | None = None,
    extra_config: Mapping[str, Any] | None = None,
) -> Played:
    """Prepare, check and play one run as ``lorekit run`` does; print its summary.

    ``agent_kwargs`` (options as values, e.g. from an experiment file) replaces
    parsing ``agent_opt``, which then only names the options in messages.
    ``roles_for(env, env_kwargs, agent)`` builds the role models instead of the
    config (``reproduce run --simulate``: scripted models, no cache, no keys).
    ``before_episode`` may decline episodes when their turn comes (a spending
    limit); declined ones are not recorded, so resuming plays them; ``on_episode``
    hears how each one ended. ``price_table`` prices the served models (the dated
    default when None). ``resume`` is what every "resume with" line names (default
    ``--run-id RUN``: a reproduction names its own id, not its row's).
    ``wrap_models`` wraps the run's models once built (a spending limit's guard).
    ``choose_tasks`` picks the tasks to play from the split's (instead of its first
    ``tasks.episodes``: ``reproduce run`` samples across task groups); ``extra_config``
    is stored with the run's config (a reproduction's setup).
    Raises the CLI's errors (:class:`UserError`, :class:`RunFailed`, ...); an
    errored episode is reported in the result, not raised."""
    from lorekit.agents import agent_parameters, declared_roles, make_agent, needs_model
    from lorekit.cli.checks import (
        build_models,
        check_api_keys,
        check_cache,
        check_roles,
        check_writable,
        role_names,
    )
    from lorekit.envs import EnvSpec
    from lorekit.eval.abort import EarlyStop, RunAborted
    from lorekit.eval.evaluate import evaluate_async
    from lorekit.eval.report import render_run
    from lorekit.eval.runner import plan_episodes
    from lorekit.eval.store import (
        RunMismatchError,
        RunStore,
        StoreError,
        StoreWriteError,
        new_run_id,
    )

    if not math.isfinite(harness.timeout_s):
        raise UserError(f"--timeout: expected a finite number of seconds, got {harness.timeout_s}")
    cfg, store_setting = prepare_config(
        models, cache=harness.cache, store=harness.store, prices=price_table
    )
    config_path = models.config_path
    from lorekit.cli.typed import agent_factory

    agent_kwargs = (
        typed_kv(agent_opt, "--agent-opt", agent_factory(agent_name))
        if agent_kwargs is None
        else dict(agent_kwargs)
    )
    simulating = roles_for is None and _simulates(cfg)
    if simulating:
        roles_for = _simulated_roles_for(env_name, agent_name)
    if "store" in agent_parameters(agent_name) and "store" not in agent_kwargs:
        agent_kwargs["store"] = str(cfg.store)  # agents that read earlier runs (automanual)
    try:
        agent = make_agent(agent_name, **agent_kwargs)
    except (LookupError, TypeError, ValueError, OSError) as exc:
        raise UserError(agent_problem(agent_name, agent_opt, exc)) from None
    if getattr(agent, "runs_model_code", False):
        from lorekit.sandbox import check_os_layer

        check_os_layer()  # NoOSSandbox (one line, exit 2) before anything is recorded
    check_roles(
        cfg,
        declared_roles(agent),
        owner=f"agent {agent_name}",
        from_flags=role_names(models.roles),
        config_path=config_path,
    )
    if needs_model(agent_name) and not models.given and roles_for is None:
        raise UserError(
            f"agent {agent_name!r} needs a model: pass --model (and --base-url) or --config"
        )
    check_api_keys(cfg, config_path=config_path, allow_simulate=simulating)
    env_opt = with_defaults(tasks.env_opt, _agent_env_defaults(agent, env_name))
    env_kwargs, chosen, provenance = prepare_tasks(env_name, env_opt, tasks.tasks, tasks.split)
    if choose_tasks is not None:
        chosen = choose_tasks(chosen)
    elif tasks.episodes:
        chosen = chosen[: tasks.episodes]
    check_writable(cfg.store, what="run store", setting=store_setting)
    check_cache(cfg, config_path=config_path)
    config = {
        "run": cfg.model_dump(),
        "env": env_name,
        "env_kwargs": env_kwargs,
        "agent": agent_name,
        "split": tasks.split,
        "tasks_from": provenance,
        "seed": harness.seed,
        **dict(extra_config or {}),
    }
    roles_factory = (
        None
        if roles_for is None
        else functools.partial(roles_for, env_name, env_kwargs, agent_name)
    )
    if roles_factory is not None:
        config["simulated"] = True
    try:
        db = RunStore(cfg.store)
    except StoreError as exc:
        raise UserError(f"{exc} (set another with {store_setting})") from None
    if backend.backend == "local" and (backend.address or backend.actors):
        raise UserError("--address and --actors are options of --backend ray")
    with (
        db,
        _episode_backend(
            backend,
            harness.concurrency,
            EnvSpec(env_name, env_kwargs),
            agent_name,
            agent_kwargs,
            cfg,
            roles_factory,
        ) as remote,
    ):
        roles = (
            build_models(cfg, config_path=config_path) if roles_factory is None else roles_factory()
        )
        if wrap_models is not None:
            roles = wrap_models(roles)
        rid = harness.run_id or new_run_id()
        again = resume or f"--run-id {rid}"
        try:
            result = asyncio.run(
                _closing(
                    roles,
                    evaluate_async(
                        EnvSpec(env_name, env_kwargs),  # built where it runs
                        agent,
                        models=roles,
                        episodes=plan_episodes(chosen, seed=harness.seed),
                        split=tasks.split,
                        seed=harness.seed,
                        store=db,
                        run_id=rid,
                        config=config,
                        concurrency=harness.concurrency,
                        episode_timeout_s=harness.timeout_s,
                        retry_errors=harness.retry_errors,
                        prices=cfg.prices(),
                        progress=err_console if show_progress(harness.progress) else False,
                        early_stop=EarlyStop(max_initial_failures),
                        backend=remote,
                        before_episode=before_episode,
                        on_episode=on_episode,
                    ),
                )
            )
        except RunMismatchError as exc:
            raise UserError(f"--run-id: {exc}") from None
        except StoreWriteError as exc:  # the run stopped; what is stored is whole
            raise RunFailed(f"{exc} ({again})") from None
        except RunAborted as exc:
            render_run(db, rid, console)
            hint = model_error_hint(exc.error)
            raise RunFailed(
                f"{with_hint(str(exc), hint)}; fix it, then resume with {again} --retry-errors"
            ) from None
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted; resume with {again}") from None
        if result.skipped:
            err_console.print(
                f"resumed: {result.skipped} episodes already done, {result.played} played now"
            )
        render_run(db, result.run_id, console)
        if simulating:
            from lorekit.agents.simulated import describe

            console.print(
                f"models: {describe(env_name, agent_name)}: scripted, so this run checks the "
                "plumbing, not a model",
                highlight=False,
            )
        console.print(f"store: {os.path.abspath(cfg.store)}   run: {result.run_id}")
        errored = [e for e in db.episodes(result.run_id) if e.status == "error"]
    if not errored:
        return Played(result.run_id, len(chosen), resume=again)
    return Played(
        result.run_id, len(chosen), len(errored), errored[0].error, errored[0].episode_key, again
    )


async def _closing(roles: Any, work: Any) -> Any:
    """Await ``work``, then close the models' HTTP clients on the same event loop: a
    client left open is closed later by the garbage collector, on whatever loop runs
    then (the next row's), and fails there with "Event loop is closed"."""
    from lorekit.eval.backend import close_roles

    try:
        return await work
    finally:
        await close_roles(roles)


def _simulates(cfg: Any) -> bool:
    """Whether ``--model scripted:simulate`` asked for the method's scripted models; a
    single role cannot ask (they answer every role of the agent together)."""
    roles = {name: s for name, s in cfg.roles.items() if s.provider == "scripted"}
    asked = [name for name, s in roles.items() if s.model == "simulate"]
    if asked and asked != [cfg.default_role]:
        raise UserError(
            "--role ROLE=scripted:simulate: the scripted models of a method answer all its "
            "roles together; use --model scripted:simulate"
        )
    return bool(asked)


def _simulated_roles_for(
    env_name: str, agent_name: str
) -> Callable[[str, dict[str, Any], str], Any]:
    """The method's scripted models for ``agent_name`` on ``env_name`` (``scripted:simulate``)."""
    from lorekit.agents.simulated import simulated_roles, supported
    from lorekit.registry import REGISTRY

    if not supported(env_name, agent_name):
        pairs = sorted(
            f"{e.meta['agent']} on {e.meta['env']}" for e in REGISTRY.entries("scripted")
        )
        raise UserError(
            f"--model scripted:simulate: no scripted models for agent {agent_name!r} on env "
            f"{env_name!r}; they exist for: {', '.join(pairs) or 'none'} "
            "(or use --model scripted:echo or scripted:FILE)"
        )
    return simulated_roles


@contextlib.contextmanager
def _episode_backend(
    backend: BackendChoice,
    concurrency: int,
    env: Any,
    agent_name: str,
    agent_kwargs: dict[str, Any],
    cfg: Any,
    roles_factory: Callable[[], Any] | None = None,
) -> Iterator[Any]:
    """None for the local backend; a started Ray backend, closed on the way out."""
    if backend.backend == "local":
        yield None
        return
    from lorekit.agents import make_agent
    from lorekit.config import build_roles
    from lorekit.eval.ray_backend import ClusterLimits, RayBackend, RayMissingError
    from lorekit.eval.remote import HostRecipe

    recipe = HostRecipe(
        env,
        functools.partial(make_agent, agent_name, **agent_kwargs),
        roles_factory or functools.partial(build_roles, cfg, limiter_factory=ClusterLimits()),
        cfg.prices(),
    )
    ray_backend = RayBackend(recipe, actors=backend.actors, address=backend.address)
    try:
        ray_backend.start()
    except RayMissingError as exc:
        raise UserError(str(exc)) from None
    except Exception as exc:
        ray_backend.close()
        raise UserError(f"--backend ray: could not start: {problem(exc)}") from None
    assert ray_backend.actors is not None
    ray_backend.per_actor = max(1, -(-concurrency // ray_backend.actors))
    try:
        yield ray_backend
    finally:
        ray_backend.close()


def _agent_env_defaults(agent: Any, env_name: str) -> dict[str, Any]:
    """Env options an agent asks for (AutoManual: ALFWorld's ``object_ids``), if any."""
    ask = getattr(agent, "env_defaults", None)
    if not callable(ask):
        return {}
    try:
        return dict(ask(env_name))
    except ValueError as exc:  # the agent cannot play this env
        raise UserError(f"agent {agent.name!r} on env {env_name!r}: {exc}") from None
