"""The ``lorekit`` command line.

Every failure ends with one line on stderr: exit code 2 for what the user can
fix before running (arguments, config, roles, keys, extras, paths), 1 for a run
or request that failed. :mod:`lorekit.cli_errors` holds the error types and
the top-level handler, :mod:`lorekit.cli_checks` the checks made before a run;
the commands that read recorded runs live in :mod:`lorekit.cli_runs`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from lorekit import __version__
from lorekit.cli_errors import (
    Interrupted,
    RunFailed,
    UserError,
    model_error_hint,
    run_cli,
    set_debug,
    with_hint,
)
from lorekit.cli_options import (
    cache_option,
    model_options,
    positive_seconds,
    progress_option,
    retry_errors_option,
    store_option,
)
from lorekit.cli_runs import DEFAULT_STORE


def _width(stream: Any) -> int | None:
    """A terminal's own width; piped output (files, CI logs) gets $COLUMNS when
    set, else a wide fixed width so tables never fold."""
    columns = os.environ.get("COLUMNS", "")
    wanted = int(columns) if columns.isdigit() else 0
    return None if stream.isatty() else wanted if wanted > 0 else 160


console = Console(width=_width(sys.stdout))
err_console = Console(stderr=True, width=_width(sys.stderr))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="lorekit")
@click.option(
    "--debug",
    is_flag=True,
    help="Print the traceback of an error instead of one line (also: LOREKIT_DEBUG=1).",
)
def cli(debug: bool) -> None:
    """LoreKit: agents that learn how a world works, and the lab to test them."""
    set_debug(debug)


# --------------------------------------------------------------------- models
@cli.group()
def models() -> None:
    """Check model endpoints."""


@models.command("check")
@click.option("--model", "-m", required=True, help="Model name as the server knows it.")
@click.option(
    "--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1."
)
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True)
@click.option("--prompt", default="Reply with the single word: pong", show_default=True)
@click.option(
    "--timeout",
    "--request-timeout",
    "timeout_s",
    type=float,
    callback=positive_seconds,
    default=30.0,
    show_default=True,
)
@click.option("--attempts", type=click.IntRange(min=1, max=20), default=2, show_default=True)
def models_check(
    model: str,
    base_url: str | None,
    api_key_env: str,
    prompt: str,
    timeout_s: float,
    attempts: int,
) -> None:
    """Send one request and print the answer, latency and tokens."""
    from lorekit.llm import LLMError
    from lorekit.llm.openai_compat import DEFAULT_BASE_URL, OpenAICompatLLM, is_local_url
    from lorekit.llm.retry import RetryPolicy

    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise UserError(f"--base-url: expected an http:// or https:// URL, got {base_url!r}")
    if model == "local" and base_url is None:  # start the bundled model for this check
        from lorekit.cli_local import local_server_url

        model, base_url = local_server_url()
    url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    if not is_local_url(url) and not (
        os.environ.get(api_key_env) or os.environ.get("OPENAI_API_KEY")
    ):
        raise UserError(
            f"model {model!r} at {url} needs an API key: set the {api_key_env} environment "
            "variable (or name another one with --api-key-env); servers on localhost need no key"
        )
    try:
        llm = OpenAICompatLLM(
            model,
            base_url=base_url,
            api_key=os.environ.get(api_key_env),
            timeout_s=timeout_s,
            retry=RetryPolicy(max_attempts=attempts, base_delay_s=0.5),
        )
    except (LLMError, ValueError) as exc:
        raise UserError(str(exc)) from None

    async def one() -> Any:
        try:
            return await llm.complete(prompt, max_tokens=64)
        finally:
            await llm.aclose()

    try:
        out = asyncio.run(one())
    except LLMError as exc:
        raise RunFailed(with_hint(str(exc), model_error_hint(exc))) from None
    table = Table(show_header=False, box=None)
    table.add_row("endpoint", llm.endpoint)
    table.add_row("model", out.model)
    table.add_row("answer", repr(out.text))
    table.add_row("latency", f"{out.latency_s * 1000:.0f} ms")
    u = out.usage
    guess = "  (~ estimated: the server sent no usage)" if u.estimated else ""
    table.add_row("tokens", f"{u.prompt_tokens} prompt + {u.completion_tokens} completion{guess}")
    console.print(table)


# ----------------------------------------------------------------------- envs
@cli.group()
def envs() -> None:
    """Environments."""


@envs.command("list")
def envs_list() -> None:
    """List registered environments."""
    from lorekit.envs import list_envs
    from lorekit.envs.registry import env_extra
    from lorekit.extras import extra_installed, install_command

    table = Table("env", "description", "needs")
    for name, desc in list_envs():
        extra = env_extra(name)
        needs = ""
        if extra is not None:
            installed = extra_installed(extra)
            missing = "" if installed is not False else f": {install_command(extra)}"
            needs = f"{extra} extra{missing}"
        table.add_row(name, desc, needs)
    console.print(table)


# ------------------------------------------------------------------------ run
def _kv(items: Sequence[str], flag: str) -> dict[str, Any]:
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
        except yaml.YAMLError:
            out[key] = value  # not YAML: keep what the user typed, as text
    return out


@cli.command("run")
@click.argument("env_name", metavar="ENV")
@click.option("--agent", "-a", "agent_name", required=True, help="Agent name (see docs).")
@model_options
@click.option(
    "--episodes",
    "-n",
    type=click.IntRange(min=1),
    default=None,
    help="Play the first N tasks of the split (default: all).",
)
@click.option("--split", default="test", show_default=True)
@click.option("--concurrency", "-j", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--run-id", default=None, help="Name the run; an existing id resumes it.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0.001),
    default=600.0,
    show_default=True,
    help="Per-episode timeout in seconds.",
)
@cache_option
@click.option("--env-opt", multiple=True, help="KEY=VALUE passed to the environment.")
@click.option(
    "--tasks",
    "tasks_opt",
    default=None,
    help="Task list of envs that have several (miniwob: automanual-53, feedback-9, all, "
    "or page names); short for --env-opt tasks=...",
)
@click.option("--agent-opt", multiple=True, help="KEY=VALUE passed to the agent.")
@retry_errors_option
@click.option(
    "--max-initial-failures",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Stop when the first N episodes all fail with the same error "
    "(a wrong URL, key or model name, ...; 0: never stop early).",
)
@progress_option
@store_option
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where episodes play: this process, or Ray actors (extra lorekit[ray]; docs/ray.md).",
)
@click.option(
    "--address",
    default=None,
    help="Ray cluster to join (ray://HOST:PORT or 'auto'); default: start a local one.",
)
@click.option(
    "--actors",
    type=click.IntRange(min=1),
    default=None,
    help="Ray actors, each owning its envs (default: the cluster's CPU count).",
)
def run_cmd(
    env_name: str,
    agent_name: str,
    config_path: str | None,
    model: str | None,
    base_url: str | None,
    roles_opt: tuple[str, ...],
    request_timeout: float | None,
    episodes: int | None,
    split: str,
    concurrency: int,
    run_id: str | None,
    seed: int,
    timeout_s: float,
    cache: str | None,
    env_opt: tuple[str, ...],
    tasks_opt: str | None,
    agent_opt: tuple[str, ...],
    retry_errors: bool,
    max_initial_failures: int,
    progress: bool | None,
    store: str | None,
    backend: str,
    address: str | None,
    actors: int | None,
) -> None:
    """Evaluate an agent on an environment; results go to the run store.

    Exits 1 when the run stopped early or any episode ended in an error."""
    from lorekit.agents import agent_parameters, declared_roles, make_agent, needs_model
    from lorekit.cli_checks import (
        build_models,
        check_api_keys,
        check_cache,
        check_roles,
        check_writable,
        role_names,
    )
    from lorekit.envs import EnvSpec
    from lorekit.eval.abort import EarlyStop, RunAborted
    from lorekit.eval.report import render_run
    from lorekit.eval.runner import plan_episodes, run_eval
    from lorekit.eval.store import RunMismatchError, RunStore, StoreError, new_run_id

    if not math.isfinite(timeout_s):
        raise UserError(f"--timeout: expected a finite number of seconds, got {timeout_s}")
    cfg, store_setting = prepare_config(
        config_path, model, base_url, roles_opt, request_timeout, cache, store
    )
    agent_kwargs = _kv(agent_opt, "--agent-opt")
    if "store" in agent_parameters(agent_name) and "store" not in agent_kwargs:
        agent_kwargs["store"] = str(cfg.store)  # agents that read earlier runs (automanual)
    try:
        agent = make_agent(agent_name, **agent_kwargs)
    except (LookupError, TypeError, ValueError, OSError) as exc:
        raise UserError(_agent_problem(agent_name, agent_opt, exc)) from None
    check_roles(
        cfg,
        declared_roles(agent),
        owner=f"agent {agent_name}",
        from_flags=role_names(roles_opt),
        config_path=config_path,
    )
    if needs_model(agent_name) and not (model or config_path or roles_opt):
        raise UserError(
            f"agent {agent_name!r} needs a model: pass --model (and --base-url) or --config"
        )
    check_api_keys(cfg, config_path=config_path)
    env_opt = with_defaults(env_opt, _agent_env_defaults(agent, env_name))
    env_kwargs, tasks, provenance = prepare_tasks(env_name, env_opt, tasks_opt, split)
    tasks = tasks[:episodes] if episodes else tasks
    check_writable(cfg.store, what="run store", setting=store_setting)
    check_cache(cfg, config_path=config_path)
    config = {
        "run": cfg.model_dump(),
        "env": env_name,
        "env_kwargs": env_kwargs,
        "agent": agent_name,
        "split": split,
        "tasks_from": provenance,
        "seed": seed,
    }
    try:
        db = RunStore(cfg.store)
    except StoreError as exc:
        raise UserError(f"{exc} (set another with {store_setting})") from None
    if backend == "local" and (address or actors):
        raise UserError("--address and --actors are options of --backend ray")
    with db, _episode_backend(
        backend, address, actors, concurrency, EnvSpec(env_name, env_kwargs), agent_name,
        agent_kwargs, cfg,
    ) as remote:  # fmt: skip
        roles = build_models(cfg, config_path=config_path)
        rid = run_id or new_run_id()
        try:
            result = asyncio.run(
                run_eval(
                    db,
                    env_factory=EnvSpec(env_name, env_kwargs),  # built where it runs
                    agent=agent,
                    roles=roles,
                    episodes=plan_episodes(tasks, seed=seed),
                    run_id=rid,
                    env_name=env_name,
                    config=config,
                    concurrency=concurrency,
                    episode_timeout_s=timeout_s,
                    retry_errors=retry_errors,
                    prices=cfg.prices(),
                    progress=err_console if _show_progress(progress) else False,
                    early_stop=EarlyStop(max_initial_failures),
                    backend=remote,
                )
            )
        except RunMismatchError as exc:
            raise UserError(f"--run-id: {exc}") from None
        except RunAborted as exc:
            render_run(db, rid, console)
            hint = model_error_hint(exc.error)
            raise RunFailed(
                f"{with_hint(str(exc), hint)}; fix it, then resume with --run-id {rid} "
                "--retry-errors"
            ) from None
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted; resume with --run-id {rid}") from None
        if result.skipped:
            err_console.print(
                f"resumed: {result.skipped} episodes already done, {result.played} played now"
            )
        render_run(db, result.run_id, console)
        console.print(f"store: {cfg.store}   run: {result.run_id}")
        errored = [e for e in db.episodes(result.run_id) if e.status == "error"]
    if errored:
        first = (errored[0].error or "").strip().splitlines()
        raise RunFailed(
            f"{len(errored)} of {len(tasks)} episodes ended in an error"
            + (f" (first: {first[-1]})" if first else "")
            + f"; see `lorekit show {result.run_id} {errored[0].episode_key}`, "
            f"or replay them with --run-id {result.run_id} --retry-errors"
        )


@contextlib.contextmanager
def _episode_backend(
    backend: str,
    address: str | None,
    actors: int | None,
    concurrency: int,
    env: Any,
    agent_name: str,
    agent_kwargs: dict[str, Any],
    cfg: Any,
) -> Iterator[Any]:
    """None for the local backend; a started Ray backend, closed on the way out."""
    if backend == "local":
        yield None
        return
    from lorekit.agents import make_agent
    from lorekit.config import build_roles
    from lorekit.eval.ray_backend import ClusterLimits, RayBackend, RayMissingError
    from lorekit.eval.remote import HostRecipe

    recipe = HostRecipe(
        env,
        functools.partial(make_agent, agent_name, **agent_kwargs),
        functools.partial(build_roles, cfg, limiter_factory=ClusterLimits()),
        cfg.prices(),
    )
    ray_backend = RayBackend(recipe, actors=actors, address=address)
    try:
        ray_backend.start()
    except RayMissingError as exc:
        raise UserError(str(exc)) from None
    except Exception as exc:
        ray_backend.close()
        raise UserError(f"--backend ray: could not start: {_problem(exc)}") from None
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


def with_defaults(env_opt: Sequence[str], defaults: dict[str, Any]) -> tuple[str, ...]:
    """``env_opt`` with ``KEY=VALUE`` defaults added for keys it does not set."""
    given = {o.split("=", 1)[0].strip() for o in env_opt}
    extra = [f"{k}={v}" for k, v in defaults.items() if k not in given]
    return (*extra, *env_opt)


def prepare_config(
    config_path: str | None,
    model: str | None,
    base_url: str | None,
    roles_opt: Sequence[str],
    request_timeout: float | None,
    cache: str | None,
    store: str | None,
) -> tuple[Any, str]:
    """The run config with the command line's overrides, and how to change its store."""
    from lorekit.config import RunConfig, apply_overrides, load_config

    cfg = load_config(config_path) if config_path else RunConfig()
    store, store_setting = _pick_store(store, cfg, config_path)
    cfg = apply_overrides(
        cfg,
        model=model,
        base_url=base_url,
        roles=roles_opt,
        cache=cache,
        store=store,
        request_timeout=request_timeout,
    )
    from lorekit.cli_local import use_local_model

    return use_local_model(cfg), store_setting


def prepare_tasks(
    env_name: str, env_opt: Sequence[str], tasks_opt: str | None, split: str
) -> tuple[dict[str, Any], list[Any], str | None]:
    """The env's arguments, the split's tasks and where they come from; a probe env
    is built once (and closed) so that bad options fail before anything runs."""
    from lorekit.envs import make

    env_kwargs = _kv(env_opt, "--env-opt")
    if tasks_opt is not None:
        if "tasks" in env_kwargs:
            raise UserError("give the task list once: --tasks or --env-opt tasks=..., not both")
        env_kwargs["tasks"] = tasks_opt
        env_opt = (*env_opt, f"tasks={tasks_opt}")
    try:
        probe = make(env_name, **env_kwargs)
        tasks = probe.tasks(split)
        provenance = probe.describe_split(split)
        probe.close()
    except (LookupError, TypeError, ValueError, OSError) as exc:
        raise UserError(_env_problem(env_name, env_opt, exc)) from None
    return env_kwargs, list(tasks), provenance


def _show_progress(flag: bool | None) -> bool:
    """A bar in a log file is one stale line; show it only to a person watching."""
    return flag if flag is not None else sys.stderr.isatty()


def _pick_store(flag: str | None, cfg: Any, config_path: str | None) -> tuple[str, str]:
    """The run store path, and how the user would choose another (for messages)."""
    env = os.environ.get("LOREKIT_STORE")
    if flag:
        return flag, "--store"
    if env:
        return env, "--store or $LOREKIT_STORE"
    if config_path:
        return str(cfg.store), f"--store or store: in {config_path}"
    return DEFAULT_STORE, "--store"


def _problem(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    return str(text)


def _agent_problem(name: str, opts: Sequence[str], exc: BaseException) -> str:
    from lorekit.agents import AGENTS

    msg = _problem(exc)
    if name not in AGENTS or msg.startswith(f"agent {name!r}"):
        return msg
    return f"agent {name!r}" + (f" with --agent-opt {' '.join(opts)}" if opts else "") + f": {msg}"


def _env_problem(name: str, opts: Sequence[str], exc: BaseException) -> str:
    from lorekit.envs.registry import UnknownEnvError

    msg = _problem(exc)
    if isinstance(exc, UnknownEnvError) or msg.startswith(f"bad arguments for env {name!r}"):
        return msg
    return f"env {name!r}" + (f" with --env-opt {' '.join(opts)}" if opts else "") + f": {msg}"


def _register_plugins() -> None:
    """Command groups that live next to their feature."""
    from lorekit.cli_alfworld import alfworld
    from lorekit.cli_automanual import automanual, manual
    from lorekit.cli_doctor import doctor
    from lorekit.cli_laws import laws
    from lorekit.cli_local import serve
    from lorekit.cli_report import report_cmd, view_cmd
    from lorekit.cli_runs import runs, show_cmd
    from lorekit.cli_teams import team
    from lorekit.cli_textcraft import textcraft
    from lorekit.graph.cli import graph

    cli.add_command(runs)
    cli.add_command(show_cmd)
    cli.add_command(report_cmd)
    cli.add_command(view_cmd)
    cli.add_command(graph)
    cli.add_command(doctor)
    cli.add_command(alfworld)
    cli.add_command(automanual)
    cli.add_command(manual)
    cli.add_command(laws)
    cli.add_command(team)
    cli.add_command(serve)
    cli.add_command(textcraft)


_register_plugins()


# ----------------------------------------------------------------- entry point
def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: every failure ends as one line and an exit code (see cli_errors)."""
    run_cli(cli, argv)


if __name__ == "__main__":
    main()
