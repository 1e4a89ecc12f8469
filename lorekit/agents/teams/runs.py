"""Team runs in the run store: one episode per team task, played by a whole team.

A team of S-Agents (:mod:`lorekit.agents.teams`) plays a crafter-party task
together, each agent on its own player, all on one clock. To the evaluation
harness (:func:`lorekit.eval.runner.run_eval`) the whole team is one
:class:`TeamAgent`, so a team run gets what every run gets for free: one
episode committed whole when it ends (a killed run leaves complete episodes or
none), resuming a run id plays only the missing episodes, and every model call
lands in the episode's call rows under its role (``leader``, ``worker``).

What is particular to a team goes in the episode's notes under ``"team"``:
the organization, the mode and clock, the event list of the timeline (schema:
``{"time", "tick", "agent", "kind", ...}``), the message pool, each agent's
trace and the metrics (TC, mPT, engine ticks). Each finished skill is also a
step row (``"p2 collect(wood, 5)"`` and its result), so exports and the steps
table read like any other run. No new store tables: notes and steps hold it.

The team's pieces come from other modules (the org, the team world, the
clocks, ``run_team``); :class:`TeamParts` names them in one place so tests can
hand in stand-ins, and so this module never builds a second version of them.
"""

from __future__ import annotations

import contextvars
import dataclasses
import importlib
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lorekit.agents.base import Recorder, Trajectory
from lorekit.agents.teams.episode_models import (
    ModelFactory,
    close_models,
    current_models,
    episode_seed,
)
from lorekit.envs.asyncenv import EnvLike, LocalEnv
from lorekit.envs.base import Task, TextEnv
from lorekit.extras import requires_extra
from lorekit.llm.roles import Roles

OrgKind = Literal["solo", "chain", "graph", "tree"]
ORG_KINDS: tuple[str, ...] = ("solo", "chain", "graph", "tree")
MODES: tuple[str, ...] = ("relay", "round", "async")
CLOCKS: tuple[str, ...] = ("virtual", "wall")
TEAM_ROLES: tuple[str, ...] = ("leader", "worker")
ENV_NAME = "crafter-party"

#: The clock of the episode being played, for models that spend their latency
#: on it (a simulated team's scripted models are built once per run, but each
#: episode has its own clock). Tasks the team spawns inherit it.
current_clock: contextvars.ContextVar[Any] = contextvars.ContextVar("lorekit_team_clock")


async def clock_sleep(seconds: float) -> None:
    """Sleep on the current episode's clock: the ``sleep`` to give a scripted model."""
    await current_clock.get().sleep(seconds)


@dataclass(frozen=True, slots=True)
class TeamSpec:
    """How a team plays: organization and size, mode, clock and time limits.

    ``size`` is the number of leaves of a tree, or of agents of a chain or a
    graph (a solo team has one agent). ``custom`` is an organization spec read
    from a YAML file (its agents and who commands whom; ``org`` is then its
    kind and ``size`` its head count). Times are clock seconds: virtual ones
    on the virtual clock. ``seconds_per_tick`` None keeps the team world's own.
    ``working_root``: a tree's root also works with its own player (by default
    it plans and delegates only, as in the paper).
    """

    org: str
    size: int
    mode: str
    clock: str
    max_time_s: float = 1_800.0
    cutoff_s: float = 300.0
    seconds_per_tick: float | None = None
    custom: Mapping[str, Any] | None = None
    working_root: bool = False

    def __post_init__(self) -> None:
        problem = spec_problem(self)
        if problem is not None:
            raise ValueError(problem)

    @property
    def agents(self) -> int:
        """How many agents (and players) the team has."""
        if self.custom is not None:
            return self.size
        if self.org == "solo":
            return 1
        return self.size + 1 if self.org == "tree" else self.size

    @property
    def label(self) -> str:
        """Short name: ``tree-3/async/virtual``; the run's agent name is ``team:`` + it."""
        if self.custom is not None:
            shape = f"{self.org}-custom-{self.size}"
        else:
            shape = "solo" if self.org == "solo" else f"{self.org}-{self.size}"
        root = "/working-root" if self.working_root else ""
        return f"{shape}/{self.mode}/{self.clock}{root}"

    def org_spec(self) -> dict[str, Any]:
        """The organization spec for :func:`lorekit.agents.teams.org.org_from_spec`:
        ``{org: tree, leaves: 3}``, ``{org: chain, size: 4}``, ``{org: solo}``."""
        if self.custom is not None:
            return dict(self.custom)
        if self.org == "solo":
            return {"org": "solo"}
        key = "leaves" if self.org == "tree" else "size"
        return {"org": self.org, key: self.size}

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def spec_problem(spec: TeamSpec) -> str | None:
    """What is wrong with a team spec, in words that name the option, or None."""
    if spec.org not in ORG_KINDS:
        return (
            f"--org: unknown organization {spec.org!r}; choose one of {', '.join(ORG_KINDS)}, "
            "or give a YAML organization file"
        )
    if spec.custom is None and spec.org == "tree" and spec.size < 1:
        return f"--leaves: a tree needs at least 1 leaf, got {spec.size}"
    if spec.custom is None and spec.org in ("chain", "graph") and spec.size < 2:
        return f"--size: a {spec.org} needs at least 2 agents, got {spec.size}"
    if spec.mode not in MODES:
        return f"--mode: unknown mode {spec.mode!r}; choose one of {', '.join(MODES)}"
    if spec.clock not in CLOCKS:
        return f"--clock: unknown clock {spec.clock!r}; choose one of {', '.join(CLOCKS)}"
    for flag, value in (("--max-time", spec.max_time_s), ("--cutoff", spec.cutoff_s)):
        if not (math.isfinite(value) and value > 0):
            return f"{flag}: expected a positive number of seconds, got {value}"
    if spec.seconds_per_tick is not None and not (
        math.isfinite(spec.seconds_per_tick) and spec.seconds_per_tick > 0
    ):
        return f"--seconds-per-tick: expected a positive number, got {spec.seconds_per_tick}"
    return None


@dataclass(frozen=True, slots=True)
class TeamParts:
    """The team's building blocks, named once (tests hand in stand-ins).

    ``build_org(spec)`` -> an organization; ``make_clock(kind)`` -> a clock;
    ``make_world(party, clock, seconds_per_tick)`` -> a team world over the
    party env; ``run_team(world, org, roles, mode=, clock=, cutoff_s=,
    max_time_s=)`` -> a team result (``success``, ``events``, ``metrics``,
    ``messages``, ``traces``).
    """

    build_org: Callable[[Mapping[str, Any]], Any]
    make_clock: Callable[[str], Any]
    make_world: Callable[[Any, Any, float | None], Any]
    run_team: Callable[..., Awaitable[Any]]


def load(path: str) -> Any:
    """``module:name``, imported when first needed (the team's modules are heavy,
    and a command that only reads runs should not pay for them)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def default_parts() -> TeamParts:
    """The real pieces (:mod:`lorekit.agents.teams`, the team world and clocks).

    They run on crafter: without the ``crafter`` extra this is a one-line
    :class:`~lorekit.extras.MissingExtraError` saying what to install.
    """
    with requires_extra("lorekit team run (crafter-party)", "crafter"):
        team_world = load("lorekit.agents.teams.world.teamworld:TeamWorld")
        load("lorekit.agents.teams.team:run_team")

    def make_clock(kind: str) -> Any:
        return load(
            f"lorekit.agents.teams.clock:{'VirtualClock' if kind == 'virtual' else 'WallClock'}"
        )()

    def make_world(party: Any, clock: Any, seconds_per_tick: float | None) -> Any:
        if seconds_per_tick is None:
            return team_world(party, clock)
        return team_world(party, clock, seconds_per_tick=seconds_per_tick)

    return TeamParts(
        load("lorekit.agents.teams.org:org_from_spec"),
        make_clock,
        make_world,
        load("lorekit.agents.teams.team:run_team"),
    )


def org_agents(org: Any) -> list[dict[str, Any]]:
    """The org's agents as plain records (name, role, player, and parent in a tree)."""
    out = []
    parent = getattr(org, "parent", None)
    for agent in getattr(org, "agents", None) or ():
        get = agent.get if isinstance(agent, Mapping) else lambda k, a=agent: getattr(a, k, None)
        row = {k: get(k) for k in ("name", "role", "player", "parent")}
        if row["parent"] is None and callable(parent) and row["name"] is not None:
            row["parent"] = parent(row["name"])
        subordinates = getattr(org, "subordinates", None)
        if callable(subordinates) and row["name"] is not None:
            row["commands"] = list(subordinates(row["name"]))
        out.append(row)
    return out


def players_needed(org: Any, spec: TeamSpec) -> int:
    """Players the world needs: one per in-world agent of the org (at least 2,
    the party's minimum; a solo agent's second player only waits)."""
    players = {a["player"] for a in org_agents(org) if a.get("player")}
    return max(2, len(players) or spec.agents)


@dataclass
class TeamAgent:
    """A whole team as one agent of the harness: plays one party task per episode.

    ``model_roles`` lets the CLI refuse a ``--role`` no team member asks for.
    ``models`` builds each episode's own models from a seed derived from
    ``seed`` (the run's) and the task id: hand the harness
    :func:`~lorekit.agents.teams.episode_models.episode_roles` then, so no model
    state crosses from one episode to the next and results do not depend on
    task order or concurrency. ``world`` names a non-default world in the
    label (``peaceful``), so runs in different worlds are told apart.
    """

    spec: TeamSpec
    parts: TeamParts | None = None
    models: ModelFactory | None = None
    seed: int = 0
    world: str = ""
    name: str = field(init=False)
    model_roles: tuple[str, ...] = TEAM_ROLES

    def __post_init__(self) -> None:
        self.name = f"team:{self.spec.label}" + (f"/{self.world}" if self.world else "")

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        parts = self.parts or default_parts()
        party = party_of(env)
        clock = parts.make_clock(self.spec.clock)
        world = parts.make_world(party, clock, self.spec.seconds_per_tick)
        world.reset(task)  # the task's own map seed: collect-50-wood/seed-0 is seed 0's map
        org = parts.build_org(self.spec.org_spec())
        traj = Trajectory(task, initial_observation=_opening(task, org))
        notes: dict[str, Any] = {"org": self.spec.org_spec() | {"members": org_agents(org)}}
        notes.update(mode=self.spec.mode, clock=self.spec.clock, spec=self.spec.to_dict())
        traj.notes["team"] = notes
        attach = getattr(recorder, "attach", None)
        if callable(attach):
            attach(traj)  # an episode ended by an error keeps what is known
        token = current_clock.set(clock)
        fresh, models = None, None
        if self.models is not None:
            models = self.models(episode_seed(self.seed, task.id))
            fresh = current_models.set(models)
        try:
            result = await parts.run_team(
                world,
                org,
                roles,
                mode=self.spec.mode,
                clock=clock,
                cutoff_s=self.spec.cutoff_s,
                max_time_s=self.spec.max_time_s,
                **({"working_root": True} if self.spec.working_root else {}),
            )
        finally:
            current_clock.reset(token)
            if fresh is not None:
                current_models.reset(fresh)
            if models is not None:
                await close_models(models)
        notes.update(record_result(result, world))
        player = {m["name"]: m.get("player") for m in notes["org"]["members"]}
        for event in notes["events"]:
            if event.get("kind") == "skill" and "success" in event:
                who = event.get("player") or player.get(event.get("agent")) or event.get("agent")
                recorder.add_step(
                    str(event.get("reason") or event.get("result") or ""),
                    f"{who} {event.get('call', '')}".strip(),
                    0.0,
                    False,
                    {k: v for k, v in event.items() if k not in ("reason", "result")},
                )
        traj.success = bool(world.success)
        traj.reward = 1.0 if traj.success else 0.0
        traj.done = bool(world.done)
        metrics = notes["metrics"] if isinstance(notes["metrics"], dict) else {}
        why = getattr(result, "stop_reason", None) or metrics.get("reason") or "budget"
        traj.stop_reason = "done" if traj.done else str(why)
        return traj


def party_of(env: EnvLike) -> TextEnv:
    """The crafter-party env object itself: the team world drives it tick by tick."""
    inner = env.env if isinstance(env, LocalEnv) else env
    if not isinstance(inner, TextEnv) or getattr(inner, "name", None) != ENV_NAME:
        raise TypeError(
            f"a team plays the {ENV_NAME} env in this process, got {type(inner).__name__}"
        )
    return inner


def _opening(task: Task, org: Any) -> str:
    members = ", ".join(
        f"{a['name']} ({a['role']}{', ' + a['player'] if a.get('player') else ''})"
        for a in org_agents(org)
    )
    return f"Goal: {task.goal}\nTeam: {members or '?'}"


def record_result(result: Any, world: Any) -> dict[str, Any]:
    """A team result as plain data for the notes: events, messages, traces, metrics."""
    events = [_plain(e) for e in getattr(result, "events", None) or ()]
    pool = getattr(result, "messages", None)
    if pool is None and hasattr(world, "messages"):
        pool = world.messages()
    return {
        "events": [e for e in events if isinstance(e, dict)],
        "messages": [_plain(m) for m in pool or ()],
        "traces": _plain(getattr(result, "traces", None) or {}),
        "metrics": _plain(getattr(result, "metrics", None) or {}),
        "success": bool(getattr(result, "success", world.success)),
        "ticks": int(getattr(world, "tick", 0) or 0),
        "progress": str(world.progress()) if hasattr(world, "progress") else "",
    }


def _plain(value: Any) -> Any:
    """Objects with ``to_dict``, and dataclasses, as dicts; containers walked."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, type):
        return _plain(to_dict())  # the owner's own plain form first
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


TC_KEYS = ("tc", "time_cost", "tc_s")
MPT_KEYS = ("mpt", "mean_prompt_times")


def metric(metrics: Mapping[str, Any], names: Sequence[str]) -> float | None:
    """The first of ``names`` that ``metrics`` holds, as a number, or None when it
    holds none. A name present with a null value reads as NaN (JSON has no NaN,
    so a TC of "no progress for the cutoff" may be stored as null)."""
    for name in names:
        if name not in metrics:
            continue
        value = metrics[name]
        if value is None:
            return math.nan
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def team_summary(episodes: Sequence[Any]) -> dict[str, Any]:
    """The team metrics over a run's finished episodes, for the run summary.

    TC is averaged over the episodes that have a finite one (NaN means the
    team made no progress for the cutoff); ``tc_nan`` counts the others.
    """
    tcs: list[float] = []
    nan = 0
    mpts: list[float] = []
    ticks: list[float] = []
    for e in episodes:
        team = (e.info.get("notes") or {}).get("team") or {}
        metrics = team.get("metrics") or {}
        tc = metric(metrics, TC_KEYS)
        if tc is not None and math.isfinite(tc):
            tcs.append(tc)
        elif tc is not None:
            nan += 1
        mpt = metric(metrics, MPT_KEYS)
        if mpt is not None:
            mpts.append(mpt)
        if isinstance(team.get("ticks"), int):
            ticks.append(float(team["ticks"]))
    return {
        "tc_mean": _mean(tcs),
        "tc_nan": nan,
        "mpt_mean": _mean(mpts),
        "ticks_mean": _mean(ticks),
        "episodes": len(episodes),
    }
