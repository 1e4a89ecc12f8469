"""Agents without a model: the environment's expert, and a random baseline."""

from __future__ import annotations

import random

from lorekit.agents.base import Episode, Recorder, Trajectory
from lorekit.envs.asyncenv import EnvLike
from lorekit.envs.base import Task
from lorekit.envs.steplimit import follow_env_cap
from lorekit.llm.roles import Roles

UNCAPPED_FALLBACK = 1000
"""Steps per episode for an agent without a cap of its own, in an env without one."""


class OracleAgent:
    """Follows the environment's built-in expert (``env.expert_action()``).

    It proves tasks are solvable, gives an upper bound, and is the offline
    demo. An environment without an expert makes it stop at once with
    ``stop_reason="no_expert"``.
    """

    name = "oracle"
    model_roles: tuple[str, ...] = ()

    def __init__(self, max_steps: int | None = None) -> None:
        self.max_steps = max_steps
        """Steps per episode; None: the env's cap (1000 where the env has none)."""

    def env_defaults(self, env_name: str) -> dict[str, object]:
        """No env options; refuses, before anything runs, an env that says it
        has no expert (every episode would play 0 steps)."""
        from lorekit.envs.registry import env_has_expert, envs_with_expert

        if env_has_expert(env_name) is False:
            raise ValueError(
                f"env {env_name!r} has no built-in expert, so the oracle would play 0 steps; "
                f"envs with one: {', '.join(envs_with_expert())} "
                "(on this env try --agent random, or an agent with a model)"
            )
        return {}

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep = await Episode.start(env, task, recorder, seed)
        for _ in range(follow_env_cap(self.max_steps, env.max_steps, UNCAPPED_FALLBACK)):
            action = await ep.env.expert_action()
            if action is None:
                return ep.stop("no_expert" if not ep.trajectory.steps else "gave_up")
            if (await ep.act(action)).done:
                return ep.stop("done")
        return ep.stop("budget")


class RandomAgent:
    """Picks uniformly among the environment's candidate actions.

    A floor for every table: an agent that does no better than this has
    learned nothing. Seeded from the episode seed, so runs repeat.
    """

    name = "random"
    model_roles: tuple[str, ...] = ()

    def __init__(self, max_steps: int | None = None) -> None:
        self.max_steps = max_steps
        """Steps per episode; None: the env's cap (1000 where the env has none)."""

    async def run(
        self, env: EnvLike, task: Task, roles: Roles, recorder: Recorder, *, seed: int | None = None
    ) -> Trajectory:
        ep = await Episode.start(env, task, recorder, seed)
        rng = random.Random(f"random-agent/{task.id}/{seed}")
        for _ in range(follow_env_cap(self.max_steps, env.max_steps, UNCAPPED_FALLBACK)):
            options = await ep.env.candidate_actions()
            if not options:
                return ep.stop("gave_up")
            if (await ep.act(rng.choice(options))).done:
                return ep.stop("done")
        return ep.stop("budget")
