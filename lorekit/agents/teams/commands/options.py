"""The options of ``lorekit team run`` and their pre-flight checks.

Every mistake here is one line (exit 2) before anything runs or is stored, and
a hint in such a line names something the command accepts: example task ids
that exist, the nearest real id, the env options a user may set, the flag
that applies to the organization asked for.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import click

from lorekit.agents.teams.runs import CLOCKS, ENV_NAME, MODES, ORG_KINDS, TeamAgent, TeamSpec
from lorekit.cli.errors import UserError
from lorekit.cli.options import option_set
from lorekit.cli.prepare import kv

MAX_AGENTS = 64
"""Agents of one team: each is a player of the shared world and a model caller."""


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
    return chosen, task_provenance(task_ids)


def task_provenance(task_ids: Sequence[str], shown: int = 3) -> str:
    """Where a run's tasks came from, for its summary's ``tasks:`` line: the ids
    named with ``--task`` (the first few, then how many more), not the bare flag."""
    ids = list(dict.fromkeys(task_ids))
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return "--task " + ", ".join(ids[:shown]) + more


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


def team_agent(
    *,
    org: str = "tree",
    leaves: int | None = None,
    size: int | None = None,
    mode: str | None = None,
    clock: str = "wall",
    max_time_s: float = 1_800.0,
    cutoff_s: float = 300.0,
    seconds_per_tick: float | None = None,
    working_root: bool = False,
) -> TeamAgent:
    """A whole team as one agent, from ``team run``'s options as keyword options: what an
    S-Agents row of an experiment file names (``agent: team``, ``options: {org: tree,
    leaves: 3}``), played by ``lorekit reproduce`` through ``team run``'s own loop
    (:mod:`lorekit.agents.teams.commands.reproduce`). A bad option is a ``ValueError``
    naming it."""
    choice = OrgChoice(
        org, leaves, size, mode, clock, max_time_s, cutoff_s, seconds_per_tick, working_root
    )
    try:
        return TeamAgent(team_spec(choice, clock))
    except UserError as exc:
        raise ValueError(str(exc).replace("--", "")) from None
