"""``lorekit team run``: a team of S-Agents plays crafter-party tasks, recorded.

The command parses and checks its options, then calls the library: the whole
team is one agent of the evaluation harness
(:class:`lorekit.agents.teams.runs.TeamAgent`), whose models the harness
builds per episode (:mod:`lorekit.agents.teams.models`), so models, roles,
cache and store are chosen exactly as for ``lorekit run`` and a run is
resumed the same way (``--run-id``). ``lorekit show RUN`` prints the timeline.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

import click

from lorekit.agents.teams.commands.options import (
    MAX_AGENTS,
    OrgChoice,
    env_options,
    org_options,
    pick_tasks,
    team_spec,
)
from lorekit.agents.teams.results import team_summary
from lorekit.agents.teams.runs import (
    ENV_NAME,
    TEAM_ROLES,
    TeamAgent,
    TeamParts,
    TeamSpec,
    default_parts,
    players_needed,
    settings_changed,
    world_name,
)
from lorekit.cli.console import console, err_console, show_progress
from lorekit.cli.errors import Interrupted, RunFailed, UserError, model_error_hint, with_hint
from lorekit.cli.options import HarnessOptions, ModelChoice, harness_options, model_options
from lorekit.cli.prepare import prepare_config
from lorekit.cli.stores import open_store

__all__ = [
    "MAX_AGENTS",
    "OrgChoice",
    "env_options",
    "org_options",
    "pick_tasks",
    "team",
    "team_spec",
]


def _parts() -> TeamParts:
    """The team's pieces; one seam, so tests can hand in stand-ins."""
    return default_parts()


@click.group()
def team() -> None:
    """Teams of agents (S-Agents) in the multi-player Crafter world."""


@team.command("run")
@click.argument("env_name", metavar="ENV")
@org_options
@click.option("--task", "task_ids", multiple=True, help="Task id, repeatable (default: the split).")
@click.option("--split", default="test", show_default=True)
@click.option("--episodes", "-n", type=click.IntRange(min=1), default=None)
@model_options
@click.option(
    "--simulate",
    is_flag=True,
    help="Play with the team simulation's scripted models (no model server needed).",
)
@click.option(
    "--env-opt",
    multiple=True,
    help="KEY=VALUE for the party world, e.g. peaceful=true (no zombies or skeletons).",
)
@harness_options(
    concurrency=2,
    timeout_s=3_600.0,
    timeout_help="Wall-clock limit per episode.",
    seed_help="Seed of the models' draws.",
)
def team_run(
    env_name: str,
    org_choice: OrgChoice,
    task_ids: tuple[str, ...],
    split: str,
    episodes: int | None,
    models: ModelChoice,
    simulate: bool,
    env_opt: tuple[str, ...],
    harness: HarnessOptions,
) -> None:
    """Play party tasks with a team; everything goes to the run store.

    Exits 1 when an episode ended in an error (resume with --run-id and --retry-errors)."""
    if env_name != ENV_NAME:
        raise UserError(f"ENV: teams play {ENV_NAME!r} (the multi-player world), not {env_name!r}")
    rid, played, errored, store = play_team(
        org_choice, task_ids, split, episodes, models, simulate, env_opt, harness
    )
    console.print(f"store: {store}   run: {rid}   timeline: lorekit show {rid} EPISODE")
    if errored:
        first = (errored[0].error or "").strip().splitlines()
        raise RunFailed(
            f"{len(errored)} of {played} team episodes ended in an error"
            + (f" (first: {first[-1]})" if first else "")
            + f"; replay them with --run-id {rid} --retry-errors"
        )


def play_team(
    org_choice: OrgChoice,
    task_ids: Sequence[str],
    split: str,
    episodes: int | None,
    models: ModelChoice,
    simulate: bool,
    env_opt: Sequence[str],
    harness: HarnessOptions,
) -> tuple[str, int, list[Any], str]:
    """Check, play (or resume) and print one team run as ``team run`` does; returns
    its id, how many tasks it has, its errored episodes and the store's path.
    ``lorekit reproduce`` plays S-Agents' rows through it (:mod:`.reproduce`)."""
    from lorekit.cli.checks import check_cache, check_models, check_writable

    spec = team_spec(org_choice, org_choice.clock or ("virtual" if simulate else "wall"))
    config_path = models.config_path
    if simulate and (models.given or models.base_url):
        raise UserError("--simulate plays with scripted models: drop --model/--role/--config")
    if not simulate and not models.given:
        raise UserError(
            "a team needs models: pass --model (and --base-url), --role leader=M --role worker=M, "
            "--config, or --simulate for the scripted team"
        )
    if models.roles and not models.config_path and not models.model:  # --role alone
        named = {r.partition("=")[0] for r in models.roles}
        bare = [r for r in TEAM_ROLES if r not in named]
        if bare:
            raise UserError(
                f"--role: the team's {bare[0]} role has no model (it would get the built-in "
                f"echo model); add --role {bare[0]}=M, or give --model M for every role"
            )
    cfg, store_setting = prepare_config(models, cache=harness.cache, store=harness.store)
    check_models(cfg, TEAM_ROLES, owner="a team", models=models, cache=False)
    served = sorted(r for r, m in cfg.roles.items() if m.provider != "scripted")
    if spec.clock == "virtual" and not simulate and served:
        raise UserError(
            f"--clock virtual: served models ({', '.join(served)}) take real time that the "
            "virtual clock cannot charge; use --clock wall (or drop the models for --simulate)"
        )
    parts = _parts()
    try:
        organization = parts.build_org(spec.org_spec())
    except ValueError as exc:
        raise UserError(f"--org {org_choice.org}: {exc}") from None
    players = players_needed(organization, spec)
    env_kwargs = env_options(env_opt, players)
    tasks, provenance = pick_tasks(task_ids, split, episodes, players, env_kwargs)
    check_writable(cfg.store, what="run store", setting=store_setting)
    check_cache(cfg, config_path=config_path)
    episode_models = _episode_models(cfg, config_path, simulate, harness.seed)
    config = {
        "run": cfg.model_dump(),
        "env": ENV_NAME,
        "env_kwargs": env_kwargs,
        "team": spec.to_dict(),
        "simulate": simulate,
        "tasks_from": provenance,
        "seed": harness.seed,
    }
    rid = _play(
        cfg,
        spec,
        parts,
        tasks,
        models=episode_models,
        env_kwargs=env_kwargs,
        harness=harness,
        config=config,
    )
    from lorekit.agents.teams.view import render_team_run
    from lorekit.eval.report import render_run

    with open_store(str(cfg.store)) as db:
        render_run(db, rid, console)
        render_team_run(db, rid, console)
        errored = [e for e in db.episodes(rid) if e.status == "error"]
    return rid, len(tasks), errored, os.path.abspath(cfg.store)


def _episode_models(cfg: Any, config_path: str | None, simulate: bool, seed: int) -> Any:
    """The per-episode model factory: the team study's scripted models (seeded from
    the run seed and the task), or the run's models built anew for every episode
    (fresh clients, scripted answers from their start; one cache and one set of
    server limits for the run), so nothing said in one episode reaches another."""
    from lorekit.agents.teams.models import fresh_models, simulated_models
    from lorekit.cli.checks import model_factory

    if simulate:
        return simulated_models(seed)
    return fresh_models(model_factory(cfg, config_path=config_path))


def _play(
    cfg: Any,
    spec: TeamSpec,
    parts: TeamParts,
    tasks: Sequence[Any],
    *,
    models: Any,
    env_kwargs: dict[str, Any],
    harness: HarnessOptions,
    config: dict[str, Any],
) -> str:
    """Play (or resume) the run; returns its id."""
    from lorekit.envs import EnvSpec
    from lorekit.eval.abort import RunAborted
    from lorekit.eval.evaluate import evaluate_async
    from lorekit.eval.runner import plan_episodes
    from lorekit.eval.store import RunMismatchError, RunStore, StoreError, new_run_id

    try:
        db = RunStore(cfg.store)
    except StoreError as exc:
        raise UserError(str(exc)) from None
    rid = harness.run_id or new_run_id()
    with db:
        try:
            _same_settings(db, rid, config)
            result = asyncio.run(
                evaluate_async(
                    EnvSpec(ENV_NAME, env_kwargs, execution="inline"),
                    TeamAgent(spec, parts, world_name(env_kwargs)),
                    episode_models=models,
                    episodes=plan_episodes(tasks, seed=harness.seed),
                    split=str(config.get("split", "test")),
                    seed=harness.seed,
                    store=db,
                    run_id=rid,
                    config=config,
                    concurrency=harness.concurrency,
                    episode_timeout_s=harness.timeout_s,
                    retry_errors=harness.retry_errors,
                    prices=cfg.prices(),
                    progress=err_console if show_progress(harness.progress) else False,
                    early_stop=None,
                )
            )
        except RunMismatchError as exc:
            raise UserError(f"--run-id: {exc}") from None
        except RunAborted as exc:
            raise RunFailed(with_hint(str(exc), model_error_hint(exc.error))) from None
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted; resume with --run-id {rid}") from None
        summary = dict(result.summary)
        summary["team"] = team_summary(db.episodes(rid))
        db.set_run_status(rid, "finished", summary)
        if result.skipped:
            err_console.print(
                f"resumed: {result.skipped} episodes already done, {result.played} played now"
            )
    return rid


def _same_settings(db: Any, run_id: str, config: dict[str, Any]) -> None:
    """A resumed team run is played as it began (org, mode, clock, limits, seed)."""
    from lorekit.eval.store import RunMismatchError

    info = db.get_run(run_id)
    changed = settings_changed(info.config, config) if info is not None else []
    if changed:
        raise RunMismatchError(
            f"run {run_id!r} was started with other team settings ({'; '.join(changed)}"
            "); resume it with the same ones, or choose another run id"
        )
