"""The agent contract: ``await agent.run(env, task, roles, recorder) -> Trajectory``.

An agent gets an environment, a task, named models and a recorder; it never
builds a model backend itself. It acts only through :class:`Episode`, which
steps the environment and records each step, so every agent's trajectory is
recorded the same way and success always comes from the environment.

Agents await every env call (``await ep.act(...)``, ``await ep.env.manual()``):
``ep.env`` is an :class:`~lorekit.envs.AsyncEnv`, which runs the env inline, on
a thread or in a process as the env declares, so a slow env never stalls the
other episodes. ``env`` may be a plain ``TextEnv``; it is wrapped on start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from lorekit.envs.asyncenv import AsyncEnv, EnvLike, as_async
from lorekit.envs.base import Observation, Step, Task
from lorekit.llm.roles import Roles


@runtime_checkable
class Recorder(Protocol):
    """Where an episode's steps go (the run store's episode writer, or a list).

    A recorder that also has ``attach(trajectory)`` is handed the live
    trajectory when the episode starts, so an episode ended by an exception
    still leaves the agent's notes behind.
    """

    def add_step(
        self, observation: str, action: str, reward: float, done: bool, info: Mapping[str, Any]
    ) -> None: ...


class NullRecorder:
    """A recorder that keeps nothing, for quick scripts."""

    def add_step(
        self, observation: str, action: str, reward: float, done: bool, info: Mapping[str, Any]
    ) -> None:
        return None


@dataclass(frozen=True, slots=True)
class TrajectoryStep:
    action: str
    observation: str
    reward: float
    done: bool
    info: Mapping[str, Any]


@dataclass(slots=True)
class Trajectory:
    """What happened in one episode.

    ``success`` and ``reward`` come from the environment. ``stop_reason``
    says why the agent stopped: ``done`` (the env ended the episode),
    ``budget`` (the agent ran out of turns or calls), ``gave_up`` (the agent
    declared it could not go on), or ``error``. ``notes`` holds what is
    particular to an agent (ReAct turns, an ADaPT decomposition tree).
    """

    task: Task
    initial_observation: str
    steps: list[TrajectoryStep] = field(default_factory=list)
    reward: float = 0.0
    done: bool = False
    success: bool = False
    stop_reason: str = ""
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def actions(self) -> list[str]:
        return [s.action for s in self.steps]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["task"] = {"id": self.task.id, "goal": self.task.goal, "group": self.task.group}
        return d


def final_stop_reason(trajectory: Trajectory) -> str:
    """Why the episode ended, as the run records it: ``step_cap`` when the
    env's step cap cut it off (the env marks that step ``truncated``), else
    the agent's own reason. Agents see the cap's step as ``done`` like any
    other end, so without this a capped episode read as a finished one."""
    last = trajectory.steps[-1].info if trajectory.steps else None
    if not trajectory.success and isinstance(last, dict) and last.get("truncated"):
        return "step_cap"
    return trajectory.stop_reason


class Episode:
    """An agent's handle on one episode: step the env, keep the trajectory,
    feed the recorder. Acting after the episode is done is refused."""

    def __init__(self, env: AsyncEnv, task: Task, recorder: Recorder, first: Observation) -> None:
        self.env = env
        self.recorder = recorder
        self.trajectory = Trajectory(task, first.text)
        self.seed: int | None = None
        self.restarts = 0

    @classmethod
    async def start(
        cls, env: EnvLike, task: Task, recorder: Recorder | None = None, seed: int | None = None
    ) -> Episode:
        handle = as_async(env)
        first = await handle.reset(task, seed=seed)
        episode = cls(handle, task, recorder if recorder is not None else NullRecorder(), first)
        attach = getattr(episode.recorder, "attach", None)
        if callable(attach):
            attach(episode.trajectory)
        episode.seed = seed
        return episode

    @property
    def done(self) -> bool:
        return self.trajectory.done

    @property
    def observation(self) -> str:
        t = self.trajectory
        return t.steps[-1].observation if t.steps else t.initial_observation

    async def act(self, action: str) -> Step:
        if self.trajectory.done:
            raise RuntimeError("the episode is over; no further actions")
        step = await self.env.step(action)
        self.record(action, step)
        return step

    def record(self, action: str, step: Step) -> None:
        """Keep a step taken on this episode's env by other means than :meth:`act`.

        For agents whose actions reach the env through another object (a code
        API driven from the sandbox): each step still lands in the trajectory
        and the recorder, and success still comes from the env's own step.
        """
        t = self.trajectory
        t.steps.append(TrajectoryStep(action, step.observation, step.reward, step.done, step.info))
        t.reward += step.reward
        if step.done:
            t.done = True
            t.success = bool(step.info.get("success", step.reward > 0))
            t.stop_reason = "done"
        self.recorder.add_step(step.observation, action, step.reward, step.done, step.info)

    async def restart(self) -> str:
        """Play the same task again from its start (a new trial); the first observation.

        The env is reset with the episode's task and seed, so the contract's
        "same seed, same episode" gives the trial the very start the first
        one had. Steps already taken stay in the trajectory and the record
        (nothing is rewritten); ``done``, ``success`` and ``reward`` start
        over, because they describe the trial now being played.
        """
        first = await self.env.reset(self.trajectory.task, seed=self.seed)
        t = self.trajectory
        t.done, t.success, t.reward, t.stop_reason = False, False, 0.0, ""
        self.restarts += 1
        return first.text

    def stop(self, reason: str) -> Trajectory:
        """End the agent's part; keeps ``done`` if the env already ended it."""
        if not self.trajectory.stop_reason:
            self.trajectory.stop_reason = reason
        return self.trajectory


@runtime_checkable
class Agent(Protocol):
    """Anything that can play an episode.

    An agent may also declare ``model_roles``: the role names it asks its
    ``roles`` for (ADaPT: executor and planner). The CLI then refuses a
    ``--role`` it would never ask for, so a typo cannot silently send every
    call to the default model. Agents without it accept any role.
    """

    name: str

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory: ...


def model_roles(*names: str) -> tuple[str, ...]:
    """The distinct role names an agent asks for, in first-use order."""
    return tuple(dict.fromkeys(names))


def declared_roles(agent: object) -> tuple[str, ...] | None:
    """The roles ``agent`` declares in ``model_roles``, or None if it declares none."""
    roles = getattr(agent, "model_roles", None)
    if roles is None:
        return None
    return tuple(str(r) for r in roles)
