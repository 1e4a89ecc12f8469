"""``lorekit.evaluate(...)``: run an agent on an env from Python, as ``lorekit run`` does.

The library's entry point for an evaluation: envs and agents by registry name
(or as objects), models as a :class:`~lorekit.llm.roles.Roles` or a mapping of
role names to models, tasks by split, ids or count, and a run store by path.
``lorekit run``, ``lorekit reproduce``, AutoManual's build and the benchmarks
all end here; the command line adds only parsing, its pre-flight checks and
its printing. Everything an episode does is recorded in the store, and calling
again with the same ``run_id`` resumes the run (the episodes already stored are
skipped).

::

    import lorekit
    from lorekit.llm import OpenAICompatLLM

    result = lorekit.evaluate(
        "textcraft", "react", models={"executor": OpenAICompatLLM("gpt-4o-mini")},
        tasks=20, store="runs.sqlite3",
    )
    print(result.successes, "of", result.played)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from lorekit.agents.base import Agent
from lorekit.agents.registry import make_agent
from lorekit.envs.base import Task
from lorekit.envs.registry import EnvSpec
from lorekit.eval.abort import EarlyStop
from lorekit.eval.backend import EpisodeBackend, EpisodeRoles, EpisodeSpec
from lorekit.eval.runner import EpisodeOutcome, EvalResult, plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm.accounting import PriceTable
from lorekit.llm.base import LLM
from lorekit.llm.roles import Roles
from lorekit.progress import ProgressReport

Models = Roles | Mapping[str, LLM] | None
"""The models an agent plays with: by role, or None for an agent that needs none."""


def as_roles(models: Models) -> Roles:
    """``models`` as a :class:`Roles` (a mapping of role names to models, or none)."""
    if isinstance(models, Roles):
        return models
    return Roles(dict(models or {}))


def choose_tasks(catalogue: Sequence[Task], tasks: Sequence[str | Task] | int | None) -> list[Task]:
    """The tasks to play: all of ``catalogue`` (None), its first ``tasks`` (an int), or
    the ones named by id or given as objects, in the order given; an unknown id is a
    ``KeyError`` naming it."""
    if tasks is None:
        return list(catalogue)
    if isinstance(tasks, bool) or (isinstance(tasks, int) and tasks < 0):
        raise ValueError(f"tasks must be a count >= 0, ids or Task objects, got {tasks!r}")
    if isinstance(tasks, int):
        return list(catalogue[:tasks]) if tasks else list(catalogue)
    by_id = {t.id: t for t in catalogue}
    chosen = []
    for item in tasks:
        if isinstance(item, Task):
            chosen.append(item)
        elif item in by_id:
            chosen.append(by_id[item])
        else:
            shown = ", ".join(list(by_id)[:5])
            raise KeyError(f"no task {item!r} in the split (ids look like: {shown}, ...)")
    return chosen


async def evaluate_async(
    env: str | EnvSpec,
    agent: str | Agent,
    *,
    models: Models = None,
    episode_models: EpisodeRoles | None = None,
    env_options: Mapping[str, Any] | None = None,
    agent_options: Mapping[str, Any] | None = None,
    split: str = "test",
    tasks: Sequence[str | Task] | int | None = None,
    seed: int = 0,
    repeats: int = 1,
    store: str | Path | RunStore = Path("runs") / "lorekit.sqlite3",
    run_id: str | None = None,
    config: Mapping[str, Any] | None = None,
    concurrency: int = 8,
    episode_timeout_s: float | None = 600.0,
    retry_errors: bool = False,
    prices: PriceTable | None = None,
    progress: bool | Console | ProgressReport = False,
    early_stop: EarlyStop | int | None = 3,
    before_episode: Callable[[EpisodeSpec], bool] | None = None,
    on_episode: Callable[[EpisodeOutcome], None] | None = None,
    backend: EpisodeBackend | None = None,
    episodes: Sequence[EpisodeSpec] | None = None,
) -> EvalResult:
    """Play ``agent`` on ``env`` and record it; see the module docstring.

    ``models`` serve every episode; ``episode_models(task, seed)`` instead builds an
    episode's own models where it plays (a team with a model set per member), closed
    when the episode ends. ``env`` is a registered name (with ``env_options``) or an
    :class:`~lorekit.envs.EnvSpec`; ``agent`` a registered name (with
    ``agent_options``) or an agent object. ``tasks`` picks from ``split``: None
    for all, a count for the first ones, or ids/Task objects; ``episodes``
    instead gives the exact episode plan (keys, seeds). ``early_stop`` ends the
    run when its first N episodes fail with the same model error (0 or None:
    never). ``before_episode`` may decline an episode when its turn comes and
    ``on_episode`` hears how each ended (a spending limit's reservations).
    ``config`` is recorded with the run (what ``lorekit runs show``
    prints), after what this call knows itself (env, options, agent, split,
    seed). Bad names and options raise ``LookupError``/``TypeError``/``ValueError``
    with one line naming them, before anything plays."""
    spec = env if isinstance(env, EnvSpec) else EnvSpec(env, dict(env_options or {}))
    if isinstance(env, EnvSpec) and env_options:
        raise ValueError("env_options go with an env name; an EnvSpec carries its own")
    if episode_models is not None and models is not None:
        raise ValueError("give models (the run's) or episode_models (each episode's), not both")
    if isinstance(agent, str):
        agent_name = agent
        agent = make_agent(agent, **dict(agent_options or {}))
    else:
        if agent_options:
            raise ValueError("agent_options go with an agent name; pass a built agent alone")
        agent_name = str(getattr(agent, "name", type(agent).__name__))
    if episodes is None:
        probe = spec.make()
        try:
            catalogue = probe.tasks(split)
        finally:
            probe.close()
        episodes = plan_episodes(choose_tasks(catalogue, tasks), seed=seed, repeats=repeats)
    stop = EarlyStop(early_stop) if isinstance(early_stop, int) and early_stop else None
    if isinstance(early_stop, EarlyStop):
        stop = early_stop
    recorded = {
        "env": spec.name,
        "env_kwargs": dict(spec.kwargs),
        "agent": agent_name,
        "split": split,
        "seed": seed,
        **dict(config or {}),
    }
    own = not isinstance(store, RunStore)
    db = RunStore(store) if not isinstance(store, RunStore) else store
    try:
        return await run_eval(
            db,
            env_factory=spec,
            agent=agent,
            roles=None if episode_models is not None else as_roles(models),
            episode_roles=episode_models,
            episodes=list(episodes),
            run_id=run_id,
            env_name=spec.name,
            config=recorded,
            concurrency=concurrency,
            episode_timeout_s=episode_timeout_s,
            retry_errors=retry_errors,
            prices=prices,
            progress=progress,
            early_stop=stop,
            before_episode=before_episode,
            on_episode=on_episode,
            backend=backend,
        )
    finally:
        if own:
            db.close()


def evaluate(env: str | EnvSpec, agent: str | Agent, **options: Any) -> EvalResult:
    """:func:`evaluate_async` for code without an event loop of its own (scripts,
    notebooks that are not already running one). Same arguments."""
    return asyncio.run(evaluate_async(env, agent, **options))
