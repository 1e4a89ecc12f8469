"""The ``lorekit`` command line.

Bad arguments and unusable configs exit with code 2 and one line on stderr
that says what to fix; model failures exit with 1 and the model's error.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.table import Table

from lorekit import __version__
from lorekit.cli_options import model_options, positive_seconds

DEFAULT_STORE = "runs/lorekit.sqlite3"
# Piped output (files, CI logs) gets a wide fixed width so tables never fold.
_PIPED_WIDTH = None if sys.stdout.isatty() else 160
console = Console(width=_PIPED_WIDTH)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


class UserError(click.ClickException):
    """An error the user can fix; shown as one line, exit code 2."""

    exit_code = 2


def _store_option(f: Any) -> Any:
    return click.option(
        "--store",
        default=lambda: os.environ.get("LOREKIT_STORE", DEFAULT_STORE),
        show_default=f"$LOREKIT_STORE or {DEFAULT_STORE}",
        help="Run store (SQLite file).",
    )(f)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="lorekit")
def cli() -> None:
    """LoreKit: agents that learn how a world works, and the lab to test them."""


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
    from lorekit.llm.openai_compat import OpenAICompatLLM
    from lorekit.llm.retry import RetryPolicy

    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise UserError(f"--base-url: expected an http:// or https:// URL, got {base_url!r}")
    try:
        llm = OpenAICompatLLM(
            model,
            base_url=base_url,
            api_key=os.environ.get(api_key_env),
            timeout_s=timeout_s,
            retry=RetryPolicy(max_attempts=attempts, base_delay_s=0.5),
        )
    except LLMError as exc:
        raise UserError(str(exc)) from None

    async def one() -> Any:
        try:
            return await llm.complete(prompt, max_tokens=64)
        finally:
            await llm.aclose()

    try:
        out = asyncio.run(one())
    except LLMError as exc:
        err_console.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
        sys.exit(1)
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

    table = Table("env", "description")
    for name, desc in list_envs():
        table.add_row(name, desc)
    console.print(table)


# ------------------------------------------------------------------------ run
def _kv(items: Sequence[str], flag: str) -> dict[str, Any]:
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(f"{flag}: expected KEY=VALUE, got {item!r}")
        out[key] = yaml.safe_load(value)
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
@click.option("--cache", type=click.Choice(["read-write", "replay", "off"]), default=None)
@click.option("--env-opt", multiple=True, help="KEY=VALUE passed to the environment.")
@click.option("--agent-opt", multiple=True, help="KEY=VALUE passed to the agent.")
@click.option("--retry-errors", is_flag=True, help="On resume, replay episodes that errored.")
@click.option("--progress/--no-progress", default=True, show_default=True)
@click.option("--store", default=None, help="Run store (default: the config's, or $LOREKIT_STORE).")
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
    agent_opt: tuple[str, ...],
    retry_errors: bool,
    progress: bool,
    store: str | None,
) -> None:
    """Evaluate an agent on an environment; results go to the run store."""
    from lorekit.agents import make_agent, needs_model
    from lorekit.config import RunConfig, apply_overrides, build_roles, load_config
    from lorekit.envs import EnvSpec, make
    from lorekit.eval.report import render_run
    from lorekit.eval.runner import plan_episodes, run_eval
    from lorekit.eval.store import RunMismatchError, RunStore

    cfg = load_config(config_path) if config_path else RunConfig()
    store = (
        store or os.environ.get("LOREKIT_STORE") or (cfg.store if config_path else DEFAULT_STORE)
    )
    cfg = apply_overrides(
        cfg,
        model=model,
        base_url=base_url,
        roles=roles_opt,
        cache=cache,
        store=store,
        request_timeout=request_timeout,
    )
    if needs_model(agent_name) and not (model or config_path):
        raise UserError(
            f"agent {agent_name!r} needs a model: pass --model (and --base-url) or --config"
        )
    env_kwargs = _kv(env_opt, "--env-opt")
    try:
        probe = make(env_name, **env_kwargs)
        agent = make_agent(agent_name, **_kv(agent_opt, "--agent-opt"))
        tasks = probe.tasks(split)
        probe.close()
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(str(exc).strip("'\"")) from None
    tasks = tasks[:episodes] if episodes else tasks
    roles = build_roles(cfg)
    config = {
        "run": cfg.model_dump(),
        "env": env_name,
        "env_kwargs": env_kwargs,
        "agent": agent_name,
        "split": split,
        "seed": seed,
    }
    with RunStore(cfg.store) as db:
        try:
            result = asyncio.run(
                run_eval(
                    db,
                    env_factory=EnvSpec(env_name, env_kwargs),  # built where it runs
                    agent=agent,
                    roles=roles,
                    episodes=plan_episodes(tasks, seed=seed),
                    run_id=run_id,
                    env_name=env_name,
                    config=config,
                    concurrency=concurrency,
                    episode_timeout_s=timeout_s,
                    retry_errors=retry_errors,
                    prices=cfg.prices(),
                    progress=err_console if progress else False,
                )
            )
        except RunMismatchError as exc:
            raise UserError(f"--run-id: {exc}") from None
        if result.skipped:
            err_console.print(
                f"resumed: {result.skipped} episodes already done, {result.played} played now"
            )
        render_run(db, result.run_id, console)
        console.print(f"store: {cfg.store}   run: {result.run_id}")


# ----------------------------------------------------------------------- runs
@cli.group()
def runs() -> None:
    """Inspect recorded runs."""


def _open_store(path: str) -> Any:
    from lorekit.eval.store import RunStore

    if not Path(path).exists():
        raise UserError(f"--store: no run store at {path} (run something first, or pass --store)")
    return RunStore(path)


@runs.command("list")
@_store_option
def runs_list(store: str) -> None:
    """List runs, newest first."""
    with _open_store(store) as db:
        rows = db.list_runs()
        table = Table("run", "created", "env", "agent", "status", "episodes", "success")
        for r in rows:
            eps = db.episodes(r.run_id)
            ok = sum(e.success for e in eps)
            rate = f"{ok / len(eps):.1%}" if eps else "-"
            table.add_row(
                r.run_id, _when(r.created_at), r.env, r.agent, r.status, str(len(eps)), rate
            )
    if not rows:
        console.print(f"no runs in {store}")
        return
    console.print(table)


@runs.command("show")
@click.argument("run_id")
@_store_option
def runs_show(run_id: str, store: str) -> None:
    """Summary of one run: episodes, success, usage by role."""
    from lorekit.eval.report import render_run

    with _open_store(store) as db:
        if db.get_run(run_id) is None:
            raise UserError(f"RUN: no run {run_id!r} in {store} (see `lorekit runs list`)")
        render_run(db, run_id, console)


@runs.command("export")
@click.argument("run_id")
@_store_option
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="File to write (default: standard output).",
)
def runs_export(run_id: str, store: str, output: str | None) -> None:
    """Export a run as JSON lines: the run, then one line per episode."""
    with _open_store(store) as db:
        if db.get_run(run_id) is None:
            raise UserError(f"RUN: no run {run_id!r} in {store} (see `lorekit runs list`)")
        if output is None:
            db.export_jsonl(run_id, sys.stdout)
            return
        with open(output, "w", encoding="utf-8") as fh:
            n = db.export_jsonl(run_id, fh)
    err_console.print(f"wrote {n} lines to {output}")


def _when(ts: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


@cli.command("show")
@click.argument("run_id", metavar="RUN")
@click.argument("episode", metavar="EPISODE")
@_store_option
def show_cmd(run_id: str, episode: str, store: str) -> None:
    """Print one episode: steps, model calls, and an agent's own record
    (e.g. ADaPT's decomposition tree). EPISODE is an index, key or task id."""
    from lorekit.eval.show import render_episode

    with _open_store(store) as db:
        if db.get_run(run_id) is None:
            raise UserError(f"RUN: no run {run_id!r} in {store} (see `lorekit runs list`)")
        try:
            render_episode(db, run_id, episode, console)
        except LookupError as exc:
            raise UserError(f"EPISODE: {str(exc).strip(chr(39))}") from None


def _register_plugins() -> None:
    """Command groups that live next to their feature."""
    from lorekit.cli_doctor import doctor
    from lorekit.graph.cli import graph

    cli.add_command(graph)
    cli.add_command(doctor)


_register_plugins()


# ----------------------------------------------------------------- entry point
def _fail(message: str, code: int) -> NoReturn:
    first = " ".join(message.strip().splitlines()[:1]) or "error"
    print(f"lorekit: error: {first}", file=sys.stderr)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: click in non-standalone mode so every error is one line."""
    from lorekit.config import ConfigError

    try:
        cli.main(
            args=list(argv) if argv is not None else None,
            prog_name="lorekit",
            standalone_mode=False,
        )
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
        sys.exit(2)
    except click.UsageError as exc:
        cmd = exc.ctx.command_path if exc.ctx is not None else "lorekit"
        _fail(f"{cmd}: {exc.format_message()}", 2)
    except click.ClickException as exc:
        _fail(exc.format_message(), exc.exit_code)
    except ConfigError as exc:
        msg = str(exc).splitlines()
        _fail(msg[0] + (f" (+{len(msg) - 1} more)" if len(msg) > 1 else ""), 2)
    except click.exceptions.Abort:
        _fail("aborted", 130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
