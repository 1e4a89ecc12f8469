"""Team runs in the run store: one episode per team task, played by a whole team.

A team of S-Agents (:mod:`lorekit.agents.teams`) plays a crafter-party task
together, each agent on its own player, all on one clock. To the evaluation
harness (:func:`lorekit.eval.runner.run_eval`) the whole team is one
:class:`TeamAgent`, so a team run gets what every run gets for free: one
episode committed whole when it ends (a killed run leaves complete episodes or
none), resuming a run id plays only the missing episodes, and every model call
lands in the episode's call rows under its role (``leader``, ``worker``).

The team plays through :class:`~lorekit.agents.Episode` like any agent: the
episode resets the harness's env, keeps the trajectory and feeds the
recorder, and success is the env's own verdict. Each finished skill is a step
(``"p2 collect(wood, 5)"``, its reason as the observation), recorded as it
ends with the world's standing as the party env reports it (its task reward
once the task is complete, ``done``, ``success``), so an episode cut short by
an error or a timeout keeps the steps it took. The models are the episode's
own, built by the harness (:data:`lorekit.eval.backend.EpisodeRoles`, see
:mod:`lorekit.agents.teams.models`); the clock is built per episode from the
spec and handed to the world and the team as an argument.

What is particular to a team goes in the episode's notes under ``"team"``
(:mod:`lorekit.agents.teams.results`). No new store tables.

The team's pieces come from other modules (the org, the team world, the
clocks, ``run_team``); :class:`TeamParts` names them in one place so tests can
hand in stand-ins, and so this module never builds a second version of them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pkgutil import resolve_name
from typing import Any, Literal

from lorekit.agents.base import Episode, Recorder, Trajectory
from lorekit.agents.teams.results import record_result
from lorekit.envs.asyncenv import EnvLike, as_async
from lorekit.envs.base import Task, TextEnv
from lorekit.extras import requires_extra
from lorekit.llm.roles import Roles

OrgKind = Literal["solo", "chain", "graph", "tree"]
ORG_KINDS: tuple[str, ...] = ("solo", "chain", "graph", "tree")
MODES: tuple[str, ...] = ("relay", "round", "async")
CLOCKS: tuple[str, ...] = ("virtual", "wall")
CLOCK_CLASSES = {"virtual": "VirtualClock", "wall": "WallClock"}
TEAM_ROLES: tuple[str, ...] = ("leader", "worker")
ENV_NAME = "crafter-party"


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
    party env (already reset; the world's ``begin()`` starts its clock);
    ``run_team(world, org, roles, mode=, clock=, cutoff_s=, max_time_s=,
    on_event=)`` -> a team result (``success``, ``events``, ``metrics``,
    ``messages``, ``traces``), ``on_event`` seeing each event as it happens.
    """

    build_org: Callable[[Mapping[str, Any]], Any]
    make_clock: Callable[[str], Any]
    make_world: Callable[[Any, Any, float | None], Any]
    run_team: Callable[..., Awaitable[Any]]


def default_parts() -> TeamParts:
    """The real pieces (:mod:`lorekit.agents.teams`, the team world and clocks),
    imported when first needed: they are heavy, and a command that only reads
    runs should not pay for them.

    They run on crafter: without the ``crafter`` extra this is a one-line
    :class:`~lorekit.extras.MissingExtraError` saying what to install.
    """
    with requires_extra("lorekit team run (crafter-party)", "crafter"):
        team_world = resolve_name("lorekit.agents.teams.world.teamworld:TeamWorld")
        run_team = resolve_name("lorekit.agents.teams.team:run_team")

    def make_clock(kind: str) -> Any:
        return resolve_name(f"lorekit.agents.teams.clock:{CLOCK_CLASSES[kind]}")()

    def make_world(party: Any, clock: Any, seconds_per_tick: float | None) -> Any:
        if seconds_per_tick is None:
            return team_world(party, clock)
        return team_world(party, clock, seconds_per_tick=seconds_per_tick)

    return TeamParts(
        resolve_name("lorekit.agents.teams.org:org_from_spec"), make_clock, make_world, run_team
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
    ``roles`` are the episode's own models when the harness builds them per
    episode (``run_eval(..., episode_roles=...)``: what a team needs, since its
    members' models keep state between calls). ``world`` names a non-default
    world in the label (``peaceful``), so runs in different worlds are told apart.
    """

    spec: TeamSpec
    parts: TeamParts | None = None
    world: str = ""
    name: str = field(init=False)
    model_roles: tuple[str, ...] = TEAM_ROLES

    def __post_init__(self) -> None:
        self.name = f"team:{self.spec.label}" + (f"/{self.world}" if self.world else "")

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        """``seed`` is the models' business (the harness seeds their draws); the
        world is the task's own map (``collect-50-wood/seed-0`` is seed 0's)."""
        handle = as_async(env)
        if handle.name != ENV_NAME or handle.execution == "process":
            where = "in another process" if handle.name == ENV_NAME else f"{handle.name!r}"
            raise TypeError(
                f"a team drives the {ENV_NAME} env tick by tick in this process, got {where}"
            )
        parts = self.parts or default_parts()
        org = parts.build_org(self.spec.org_spec())
        ep = await Episode.start(handle, task, recorder)
        members = org_agents(org)
        notes: dict[str, Any] = {"org": self.spec.org_spec() | {"members": members}}
        notes.update(mode=self.spec.mode, clock=self.spec.clock, spec=self.spec.to_dict())
        ep.trajectory.notes["team"] = notes  # an episode ended by an error keeps it
        ep.trajectory.initial_observation += "\n" + team_line(members)
        party = await ep.env.call(party_engine)
        clock = parts.make_clock(self.spec.clock)
        world = parts.make_world(party, clock, self.spec.seconds_per_tick)
        world.begin()
        player = {m["name"]: m.get("player") for m in members}

        def on_event(event: Mapping[str, Any]) -> None:
            """A finished skill is a step of the episode, recorded as it ends."""
            if event.get("kind") != "skill" or "success" not in event:
                return
            who = event.get("player") or player.get(event.get("agent")) or event.get("agent")
            info = {k: v for k, v in event.items() if k not in ("reason", "result", "success")}
            info["skill_success"] = bool(event["success"])
            reason = str(event.get("reason") or event.get("result") or "")
            ep.record(f"{who} {event.get('call', '')}".strip(), world.report(reason, info))

        result = await parts.run_team(
            world,
            org,
            roles,
            mode=self.spec.mode,
            clock=clock,
            cutoff_s=self.spec.cutoff_s,
            max_time_s=self.spec.max_time_s,
            on_event=on_event,
            **({"working_root": True} if self.spec.working_root else {}),
        )
        notes.update(record_result(result, world))
        if world.done and not ep.done:  # it ended while no skill was running
            ep.record("world: episode over", world.report(str(world.progress()), {}))
        metrics = notes["metrics"] if isinstance(notes["metrics"], dict) else {}
        why = getattr(result, "stop_reason", None) or metrics.get("reason") or "budget"
        return ep.stop(str(why))


def party_engine(env: TextEnv) -> TextEnv:
    """The crafter-party env object itself, asked for where it lives
    (``AsyncEnv.call``): the team world ticks it player by player and the
    skills read its map, which a step-by-step text interface cannot offer."""
    if getattr(env, "name", None) != ENV_NAME:
        raise TypeError(f"a team plays the {ENV_NAME} env, got {getattr(env, 'name', env)!r}")
    return env


def team_line(members: list[dict[str, Any]]) -> str:
    """``Team: leader (leader, p1), w1 (worker, p2)``: who plays which player."""
    shown = ", ".join(
        f"{a['name']} ({a['role']}{', ' + a['player'] if a.get('player') else ''})" for a in members
    )
    return f"Team: {shown or '?'}"


def world_name(env_kwargs: Mapping[str, Any]) -> str:
    """The world's name for the run label: ``peaceful``, or "" for the default hostile one."""
    return "peaceful" if str(env_kwargs.get("peaceful", "")).lower() in ("true", "1", "yes") else ""


SETTINGS = ("team", "simulate", "seed", "env_kwargs")
"""What of a team run's config a resumed run must keep."""


def settings_changed(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """How a resumed team run's config differs from the one it began with, as
    ``"mode 'async' -> 'round'"`` items (empty: the same settings). A setting
    added since the run began (``working_root``) reads as its default there."""
    if "team" not in before:
        return []
    old = {**(before.get("team") or {}), **{k: before.get(k) for k in SETTINGS[1:]}}
    new = {**(now.get("team") or {}), **{k: now.get(k) for k in SETTINGS[1:]}}
    return [
        f"{k} {old.get(k)!r} -> {new[k]!r}"
        for k in new
        if old.get(k) != new[k] and (k in old or new[k] not in (None, False))
    ]
