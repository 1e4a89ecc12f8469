"""AutoManual's building stage as a library call: :func:`run_build`, resumable.

A build plays tasks one at a time with the planner, builder and consolidator:
a run in the run store whose episodes carry every rule change. Calling again
with the same ``run_id`` after a kill continues it (the harness skips the
episodes the store committed; the agent drops what a half-played episode
wrote). ``from_build`` starts a new build from a copy of a finished one, and
``library_only`` keeps its rules as they are (the paper's second MiniWoB++
step: libraries on the 44 task types without feedback; see
:mod:`lorekit.agents.automanual.build_source`).

``lorekit automanual build`` (:mod:`lorekit.agents.automanual.commands.build`),
``lorekit reproduce``'s build stage and the study benchmark all call it; it
plays through :func:`lorekit.eval.evaluate.evaluate_async` like any evaluation.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit.agents.automanual.build_source import (
    BuildSourceError,
    inherit,
    open_source,
    same_options,
)
from lorekit.envs.base import Task


def build_plan(
    tasks: Sequence[Task], *, per_type: int, seed: int, shuffle: bool = True
) -> list[Task]:
    """``per_type`` tasks of each task type (in split order), shuffled by ``seed``.

    The paper builds on 6 tasks per type, shuffled; the same seed gives the
    same order on every resume. ``shuffle=False`` keeps the given order (studies
    and tests that need a set curriculum).
    """
    if per_type < 1:
        raise ValueError(f"per_type must be >= 1, got {per_type}")
    by_type: dict[str, list[Task]] = {}
    for task in tasks:
        by_type.setdefault(task.group or "task", []).append(task)
    chosen = [t for group in by_type.values() for t in group[:per_type]]
    if shuffle:
        random.Random(f"automanual-build/{seed}").shuffle(chosen)
    else:
        chosen = [t for t in tasks if t in chosen]
    return chosen


@dataclass(frozen=True, slots=True)
class BuildOutcome:
    run_id: str
    played: int
    skipped: int
    declined: int
    errors: int
    rules: int
    rules_version: int
    retired: tuple[str, ...]
    dropped_on_resume: int
    from_build: str | None = None
    library_only: bool = False
    skills: int = 0
    reflections: int = 0


async def run_build(
    store_path: str | Path,
    *,
    env_name: str,
    env_kwargs: dict[str, Any],
    tasks: Sequence[Task],
    roles: Any,
    run_id: str | None = None,
    variant: str | None = "automanual",
    per_type: int = 6,
    seed: int = 0,
    max_rules: int = 12,
    retire_after: int = 3,
    max_replans: int | str | None = None,
    retriever: str | None = None,
    examples: int | None = None,
    config: dict[str, Any] | None = None,
    episode_timeout_s: float | None = 1_800.0,
    retry_errors: bool = False,
    progress: Any = False,
    shuffle: bool = True,
    from_build: str | None = None,
    library_only: bool = False,
) -> BuildOutcome:
    """Play (or resume) a build; everything goes to the run store at ``store_path``.

    ``from_build`` starts from a copy of that finished build's rules, libraries
    and manuals; ``library_only`` (which needs it) never changes the rules, so
    only the skill and reflection libraries grow. ``variant=None`` takes the
    source build's (or ``automanual``). ``examples``: how many of the env
    profile's human examples the planner is shown (default all). Raises
    :class:`BuildSourceError` when the source cannot be started from.
    """
    from lorekit.agents.automanual.build_agent import AutoManualBuildAgent, CommittedEpisode
    from lorekit.envs import EnvSpec
    from lorekit.eval.evaluate import evaluate_async
    from lorekit.eval.runner import plan_episodes
    from lorekit.eval.store import RunStore, new_run_id

    if library_only and from_build is None:
        raise BuildSourceError("a library-only pass needs the build whose rules it keeps (--from)")
    from lorekit.sandbox import check_os_layer

    check_os_layer()  # the planner runs model-written code: NoOSSandbox before any record
    if retriever is None:  # the env profile's, recorded as such so a resume compares it
        from lorekit.agents.automanual.profiles import profile_for

        retriever = profile_for(env_name).retriever
    chosen = build_plan(tasks, per_type=per_type, seed=seed, shuffle=shuffle)
    plan = plan_episodes(chosen, seed=seed)
    rid = run_id or new_run_id()
    source, variant = open_source(
        store_path,
        from_build,
        variant,
        env_name=env_name,
        env_kwargs=env_kwargs,
        plan=[spec.key for spec in plan],
    )
    variant = variant or "automanual"
    agent_name = f"automanual-build:{variant}" + (":library-only" if library_only else "")
    options = {
        "variant": variant,
        "per_type": per_type,
        "max_rules": max_rules,
        "retire_after": retire_after,
        "max_replans": max_replans,
        "retriever": retriever,
    }
    if examples is not None:  # recorded only when set: builds from before it resume
        options["examples"] = examples
    if source is not None:
        options.update(from_build=source.run_id, library_only=library_only)
    with RunStore(store_path) as store:
        rid = store.create_run(
            rid,
            env=env_name,
            agent=agent_name,
            config={
                **(config or {}),
                "automanual": options,
                "env_kwargs": env_kwargs,
                "seed": seed,
                "plan": [t.id for t in chosen],
            },
            meta={"episodes": len(plan)},
        )
        same_options(store, rid, options, seed, [t.id for t in chosen])
        if source is not None:
            inherit(store_path, source, rid)
        agent = AutoManualBuildAgent(
            db_path=str(store_path),
            build_id=rid,
            env_name=env_name,
            variant="planner-lib" if variant == "planner-lib" else "automanual",
            max_rules=max_rules,
            retire_after=retire_after,
            max_replans=max_replans,
            retriever=retriever,
            examples=examples,
            learn_rules=not library_only,
        )
        agent.name = agent_name
        try:
            committed = sorted(store.episodes(rid), key=lambda e: e.index)
            dropped = agent.restore(
                [
                    *(source.committed if source is not None else ()),
                    *(
                        CommittedEpisode(
                            e.episode_key,
                            e.task_group or "task",
                            e.status,
                            dict(e.info.get("notes") or {}),
                        )
                        for e in committed
                    ),
                ]
            )
            rules_before = agent.rules.version
            # The run exists already (created above with the build's own record), so
            # evaluate's config is not written again; episodes play one at a time,
            # each after the previous one is stored, as a curriculum needs.
            result = await evaluate_async(
                EnvSpec(env_name, env_kwargs),
                agent,
                models=roles,
                episodes=plan,
                store=store,
                run_id=rid,
                config=config,
                concurrency=1,
                episode_timeout_s=episode_timeout_s,
                retry_errors=retry_errors,
                progress=progress,
                early_stop=None,
                before_episode=lambda spec: agent.should_play(spec.task),
            )
            if library_only and agent.rules.version != rules_before:
                raise RuntimeError(  # a bug: the agent calls no builder then
                    f"library-only build {rid!r} changed its rules (version {rules_before} -> "
                    f"{agent.rules.version})"
                )
            return BuildOutcome(
                rid,
                result.played,
                result.skipped,
                result.declined,
                result.errors,
                len(agent.rules.rules()),
                agent.rules.version,
                tuple(sorted(agent.retired)),
                dropped,
                None if source is None else source.run_id,
                library_only,
                len(agent.libraries.skills()),
                len(agent.libraries.reflections()),
            )
        finally:
            agent.close()
