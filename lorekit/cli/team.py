"""``lorekit team run``: a team of S-Agents plays crafter-party tasks, recorded.

The command builds the organization (solo, chain, graph, tree), the clock and
the team world, and plays each task with the whole team as one agent of the
evaluation harness (:class:`lorekit.agents.teams.runs.TeamAgent`), so models,
roles, cache and store are chosen exactly as for ``lorekit run`` and a run is
resumed the same way (``--run-id``). ``lorekit show RUN`` prints the timeline.
"""

from __future__ import annotations

import asyncio
import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import click

from lorekit.agents.teams.runs import (
    CLOCKS,
    ENV_NAME,
    MODES,
    ORG_KINDS,
    TEAM_ROLES,
    TeamAgent,
    TeamParts,
    TeamSpec,
    default_parts,
    players_needed,
    team_summary,
)
from lorekit.cli.console import console, err_console, show_progress
from lorekit.cli.errors import Interrupted, RunFailed, UserError, model_error_hint, with_hint
from lorekit.cli.options import (
    HarnessOptions,
    ModelChoice,
    harness_options,
    model_options,
    option_set,
)
from lorekit.cli.prepare import kv, prepare_config
from lorekit.cli.stores import open_store

MAX_AGENTS = 64
"""Agents of one team: each is a player of the shared world and a model caller."""


def _parts() -> TeamParts:
    """The team's pieces; one seam, so tests can hand in stand-ins."""
    return default_parts()


@dataclass(frozen=True, slots=True)
class OrgChoice:
    """The organization a team plays in, and its clock (``team run``'s own options)."""

    org: str = "tree"
    leaves: int | None = None
    size: int | None = None
    mode: str | None = None
    clock: str | None = None
    max_time_s: float = 1_800.0
    cutoff_s: float = 300.0
    seconds_per_tick: float | None = None
    working_root: bool = False


org_options = option_set(
    "org_choice",
    OrgChoice,
    [
        click.option(
            "--org",
            default="tree",
            show_default=True,
            help="solo; chain (a relay, CoA); graph (anyone commands anyone, GoA); tree (a leader "
            "commands its leaves, ToA); or a YAML organization file.",
        ),
        click.option("--leaves", type=int, default=None, help="Leaves of a tree [default: 2]."),
        click.option(
            "--size", type=int, default=None, help="Agents of a chain or graph [default: 3]."
        ),
        click.option(
            "--mode",
            type=click.Choice(MODES),
            default=None,
            help="relay: one agent after another; round: all plan, then wait for the slowest; "
            "async: nobody waits [default: relay for a chain (the paper's CoA), else async].",
        ),
        click.option(
            "--clock",
            type=click.Choice(CLOCKS),
            default=None,
            help="virtual: model latency spent on a deterministic clock; wall: real time "
            "[default: virtual with --simulate, else wall].",
        ),
        click.option(
            "--max-time",
            "max_time_s",
            type=float,
            default=1_800.0,
            show_default=True,
            help="Clock seconds a task may take.",
        ),
        click.option(
            "--cutoff",
            "cutoff_s",
            type=float,
            default=300.0,
            show_default=True,
            help="Clock seconds without progress before the team stops (TC is NaN).",
        ),
        click.option(
            "--seconds-per-tick", type=float, default=None, help="Clock seconds per world tick."
        ),
        click.option(
            "--working-root",
            is_flag=True,
            default=False,
            help="A tree's root also works with its own player (by default it plans and "
            "delegates only, as in the paper).",
        ),
    ],
)
"""``--org``, ``--leaves``, ``--size``, ``--mode``, ``--clock``, ``--max-time``,
``--cutoff`` and ``--seconds-per-tick``, passed as ``org_choice: OrgChoice``."""


def team_spec(choice: OrgChoice, clock: str) -> TeamSpec:
    """The spec the options describe, or a one-line error naming the option.

    ``choice.org`` is a kind (solo, chain, graph, tree) or a YAML organization file."""
    org, leaves, size = choice.org, choice.leaves, choice.size
    custom = _org_file(org, leaves, size) if org not in ORG_KINDS else None
    if custom is not None:
        kind, size = str(custom.get("org")), len(custom.get("agents") or ())
    else:
        kind = org
        if leaves is not None and org != "tree":
            hint = "a solo team has one agent" if org == "solo" else f"for --org {org} use --size"
            raise UserError(f"--leaves: only a tree has leaves; {hint}")
        if size is not None and org not in ("chain", "graph"):
            hint = "use --leaves" if org == "tree" else "a solo team has one agent"
            raise UserError(f"--size: sets the size of a chain or graph; for --org {org} {hint}")
        for flag, value in (("--size", size), ("--leaves", leaves)):
            if value is not None and value > MAX_AGENTS:
                raise UserError(
                    f"{flag}: at most {MAX_AGENTS} agents play in one world, got {value}"
                )
        default = size if size is not None else 3  # too small a size is the spec's to refuse
        size = {"solo": 1, "tree": leaves if leaves is not None else 2}.get(org, default)
    if choice.working_root and kind != "tree":
        raise UserError(
            "--working-root: only the root of a tree may be kept from working; every agent "
            f"of a {'solo team' if kind == 'solo' else kind} works with its own player"
        )
    mode = choice.mode or ("relay" if kind == "chain" else "async")
    try:
        return TeamSpec(
            kind,
            size,
            mode,
            clock,
            max_time_s=choice.max_time_s,
            cutoff_s=choice.cutoff_s,
            seconds_per_tick=choice.seconds_per_tick,
            working_root=choice.working_root,
            custom=custom,
        )
    except ValueError as exc:  # its message names the option
        raise UserError(str(exc)) from None


def _org_file(org: str, leaves: int | None, size: int | None) -> dict[str, Any] | None:
    """A YAML organization file's spec, or an error that lists the kinds."""
    from pathlib import Path

    import yaml

    from lorekit import yamlio

    path = Path(org)
    if path.suffix not in (".yaml", ".yml"):
        raise UserError(
            f"--org: unknown organization {org!r}; choose one of {', '.join(ORG_KINDS)}, "
            "or give a YAML organization file"
        )
    if not path.is_file():
        raise UserError(f"--org: no organization file at {org}")
    if leaves is not None or size is not None:
        raise UserError("--leaves/--size: an organization file lists its agents itself")
    try:
        data = yamlio.safe_load(path.read_text(encoding="utf-8"), source=org)
    except (OSError, yaml.YAMLError, ValueError) as exc:
        raise UserError(f"--org: cannot read {org}: {exc}") from None
    if not isinstance(data, dict) or data.get("org") not in ORG_KINDS or not data.get("agents"):
        raise UserError(
            f"--org: {org} must map org: to one of {', '.join(ORG_KINDS)} and list its agents "
            "(see docs/teams.md)"
        )
    return data


def env_options(env_opt: Sequence[str], players: int) -> dict[str, Any]:
    """The party env's arguments: the players the organization needs, and the
    ``--env-opt KEY=VALUE`` world options (``peaceful=true``)."""
    extra = kv(env_opt, "--env-opt")
    if "players" in extra:
        raise UserError("--env-opt players=...: the organization sets the players (one per agent)")
    return {"players": players, **extra}


def _world(env_kwargs: dict[str, Any]) -> str:
    """The world's name for the run label: ``peaceful``, or "" for the default hostile one."""
    return "peaceful" if str(env_kwargs.get("peaceful", "")).lower() in ("true", "1", "yes") else ""


def pick_tasks(
    task_ids: Sequence[str],
    split: str,
    episodes: int | None,
    players: int,
    env_kwargs: dict[str, Any] | None = None,
) -> tuple[list[Any], str]:
    """The tasks to play: the named ones (any split), or the split's first ``episodes``.

    The probe env is built with the run's env arguments, so a bad ``--env-opt``
    fails here, before anything runs."""
    from lorekit.envs import make

    kwargs = env_kwargs if env_kwargs is not None else {"players": players}
    try:
        probe = make(ENV_NAME, **kwargs)
    except (ImportError, LookupError, TypeError, ValueError) as exc:
        shown = " ".join(f"{k}={v}" for k, v in kwargs.items() if k != "players")
        where = f" with --env-opt {shown}" if shown else ""
        if str(exc).startswith("bad arguments for env"):  # the registry names env and options
            # ...and lists players, which the organization sets: not one to suggest
            text = str(exc).replace("accepted: players, ", "accepted: ")
            raise UserError(f"--env-opt: {text}") from None
        raise UserError(f"env {ENV_NAME!r}{where}: {exc}") from None
    try:
        splits = tuple(probe.splits()) if hasattr(probe, "splits") else ("test",)
        if not task_ids:
            if split not in splits:
                known_splits = ", ".join(splits)
                raise UserError(f"--split: unknown split {split!r}; choose one of {known_splits}")
            tasks = list(probe.tasks(split))
            return (tasks[:episodes] if episodes else tasks), f"split {split}"
        known = {t.id: t for s in splits for t in probe.tasks(s)}
    finally:
        probe.close()
    chosen = []
    for tid in task_ids:
        if tid not in known:
            raise UserError(f"--task: unknown {ENV_NAME} task {tid!r} {_task_hint(tid, known)}")
        chosen.append(known[tid])
    return chosen, "--task"


def _task_hint(tid: str, known: dict[str, Any]) -> str:
    """Examples that exist (the first id of each kind) and the nearest id: the same
    task on seed 0 when the seed was left out, else the closest spelling."""
    kinds: dict[str, str] = {}
    for name in known:
        kinds.setdefault(name.split("-", 1)[0], name)
    examples = [repr(name) for name in kinds.values()]
    shown = ", ".join(examples[:-1]) + f" or {examples[-1]}" if len(examples) > 1 else examples[0]
    seeded = f"{tid}/seed-0"
    close = [seeded] if "/" not in tid and seeded in known else []
    close = close or difflib.get_close_matches(tid, list(known), n=1, cutoff=0.6)
    return f"(ids look like {shown})" + (f"; did you mean {close[0]!r}?" if close else "")


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
    from lorekit.cli.checks import check_cache, check_models, check_writable

    if env_name != ENV_NAME:
        raise UserError(f"ENV: teams play {ENV_NAME!r} (the multi-player world), not {env_name!r}")
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
    episode_models = _simulated_models() if simulate else _served_models(cfg, config_path)
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
        name="simulated" if simulate else "episode-model",
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
    console.print(
        f"store: {os.path.abspath(cfg.store)}   run: {rid}   timeline: lorekit show {rid} EPISODE"
    )
    if errored:
        first = (errored[0].error or "").strip().splitlines()
        raise RunFailed(
            f"{len(errored)} of {len(tasks)} team episodes ended in an error"
            + (f" (first: {first[-1]})" if first else "")
            + f"; replay them with --run-id {rid} --retry-errors"
        )


def _simulated_models() -> Any:
    """A factory of the team simulation's scripted models, one fresh set per episode
    (seeded from the run seed and the task), their latency spent on its clock."""
    from lorekit.agents.teams.runs import load

    try:
        simulated_roles = load("lorekit.agents.teams.simulation:simulated_roles")
    except (ImportError, AttributeError) as exc:
        raise UserError(f"--simulate: the team simulation is not available ({exc})") from None
    from lorekit.agents.teams.runs import clock_sleep
    from lorekit.llm.roles import Roles

    def build(seed: int) -> Roles:
        models = simulated_roles(clock_sleep, seed=seed)
        return models if isinstance(models, Roles) else Roles(dict(models))

    return build


def _served_models(cfg: Any, config_path: str | None) -> Any:
    """The run's models, built anew for every episode (fresh clients, scripted
    answers from their start; one cache and one set of server limits for the run),
    so nothing said in one episode reaches another."""
    from lorekit.cli.checks import model_factory

    fresh = model_factory(cfg, config_path=config_path)
    return lambda _seed: fresh()


def _play(
    cfg: Any,
    spec: TeamSpec,
    parts: TeamParts,
    tasks: Sequence[Any],
    *,
    models: Any,
    name: str,
    env_kwargs: dict[str, Any],
    harness: HarnessOptions,
    config: dict[str, Any],
) -> str:
    """Play (or resume) the run; returns its id."""
    from lorekit.agents.teams.episode_models import episode_roles
    from lorekit.envs import EnvSpec
    from lorekit.eval.abort import RunAborted
    from lorekit.eval.runner import plan_episodes, run_eval
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
                run_eval(
                    db,
                    env_factory=EnvSpec(ENV_NAME, env_kwargs, execution="inline"),
                    agent=TeamAgent(spec, parts, models, harness.seed, _world(env_kwargs)),
                    roles=episode_roles(TEAM_ROLES, name),
                    episodes=plan_episodes(tasks, seed=harness.seed),
                    run_id=rid,
                    env_name=ENV_NAME,
                    config=config,
                    concurrency=harness.concurrency,
                    episode_timeout_s=harness.timeout_s,
                    retry_errors=harness.retry_errors,
                    prices=cfg.prices(),
                    progress=err_console if show_progress(harness.progress) else False,
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


_SAME = ("team", "simulate", "seed", "env_kwargs")


def _same_settings(db: Any, run_id: str, config: dict[str, Any]) -> None:
    """A resumed team run is played as it began (org, mode, clock, limits, seed)."""
    from lorekit.eval.store import RunMismatchError

    info = db.get_run(run_id)
    if info is None or "team" not in info.config:
        return
    before = {**(info.config.get("team") or {}), **{k: info.config.get(k) for k in _SAME[1:]}}
    now = {**config["team"], **{k: config.get(k) for k in _SAME[1:]}}
    # a setting added since the run began (working_root) reads as its default there
    changed = [
        f"{k} {before.get(k)!r} -> {now[k]!r}"
        for k in now
        if before.get(k) != now[k] and (k in before or now[k] not in (None, False))
    ]
    if changed:
        raise RunMismatchError(
            f"run {run_id!r} was started with other team settings ({'; '.join(changed)}"
            "); resume it with the same ones, or choose another run id"
        )
