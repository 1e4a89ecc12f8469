"""What an AutoManual build starts from (``from_build``) or resumes, checked.

The paper's two-step MiniWoB++ build (rules on the 9 task types with feedback,
then only the skill and reflection libraries on the other 44) is two builds:
the second starts from a copy of the first (:mod:`lorekit.agents.automanual.inherit`),
usually with ``--library-only``. Starting from a build only makes sense when
its rules were learned in the same world, from episodes the store committed;
:func:`read_source` refuses anything else, saying what is wrong. A resumed
build must go on as it began (:func:`same_options`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lorekit.agents.automanual.build_agent import CommittedEpisode

#: Env options that only choose which tasks are played, not how the world behaves.
TASK_CHOICE_OPTIONS = frozenset({"tasks", "split", "seed", "episodes_per_task"})


class BuildSourceError(ValueError):
    """The build named by ``--from`` cannot be started from; the text says why."""


@dataclass(frozen=True, slots=True)
class SourceBuild:
    """What a new build takes from the one it starts from."""

    run_id: str
    variant: str
    committed: tuple[CommittedEpisode, ...]

    @property
    def keys(self) -> frozenset[str]:
        """Keys of the episodes whose rows the new build inherits (errors wrote none)."""
        return frozenset(e.key for e in self.committed if e.status != "error")


def not_a_build(info: Any, run_id: str, store_path: Any) -> str | None:
    """Why run ``run_id`` (its ``RunInfo``, or None when missing) is no AutoManual build."""
    if info is None:
        return f"no run {run_id!r} in {store_path} (see `lorekit runs list`)"
    if not str(info.agent).startswith("automanual-build"):
        return (
            f"run {run_id!r} is a {info.agent!r} run, not an AutoManual build "
            "(made by `lorekit automanual build`)"
        )
    return None


def read_source(
    store: Any, run_id: str, *, env_name: str, env_kwargs: Mapping[str, Any]
) -> SourceBuild:
    """The finished AutoManual build ``run_id`` in ``store`` (a ``RunStore``), checked."""
    from lorekit.agents.automanual.build_agent import CommittedEpisode

    info = store.get_run(run_id)
    problem = not_a_build(info, run_id, store.path)
    if problem:
        raise BuildSourceError(problem)
    if info.env != env_name:
        raise BuildSourceError(
            f"build {run_id!r} was built on {info.env}, not {env_name}; its rules are about "
            "another world"
        )
    if info.status != "finished":
        raise BuildSourceError(
            f"build {run_id!r} is {info.status}, not finished; finish it first "
            f"(the same command with --run-id {run_id})"
        )
    options = info.config.get("automanual") or {}
    stored = info.config.get("env_kwargs") or {}
    changed = [
        f"{k} {stored.get(k)!r} -> {env_kwargs.get(k)!r}"
        for k in sorted(set(stored) | set(env_kwargs))
        if k not in TASK_CHOICE_OPTIONS and stored.get(k) != env_kwargs.get(k)
    ]
    if changed:
        raise BuildSourceError(
            f"build {run_id!r} played {env_name} with other env options ({'; '.join(changed)}); "
            "pass the same --env-opt values"
        )
    episodes = sorted(store.episodes(run_id), key=lambda e: e.index)
    committed = tuple(
        CommittedEpisode(
            e.episode_key, e.task_group or "task", e.status, dict(e.info.get("notes") or {})
        )
        for e in episodes
    )
    return SourceBuild(run_id, str(options.get("variant") or "automanual"), committed)


def check_disjoint(source: SourceBuild, plan: Sequence[str]) -> None:
    """Refuse a plan that would replay an episode of the source build under the same key.

    The new build keeps the source's episode keys for the rows it inherits;
    replaying one of them would make its own rows indistinguishable on resume.
    """
    again = sorted(set(plan) & source.keys)
    if again:
        raise BuildSourceError(
            f"{len(again)} planned episodes were played by build {source.run_id!r} already "
            f"({', '.join(again[:3])}); choose other tasks or another --seed"
        )


def open_source(
    store_path: str | Path,
    from_build: str | None,
    variant: str | None,
    *,
    env_name: str,
    env_kwargs: Mapping[str, Any],
    plan: Sequence[str],
) -> tuple[SourceBuild | None, str | None]:
    """The checked source build (None without ``--from``) and the variant to build.

    A build from another one is of the same variant; ``variant=None`` means
    "whatever the source is".
    """
    from lorekit.eval.store import RunStore

    if from_build is None:
        return None, variant
    with RunStore(store_path) as store:
        source = read_source(store, from_build, env_name=env_name, env_kwargs=env_kwargs)
    check_disjoint(source, plan)
    if variant is not None and variant != source.variant:
        raise BuildSourceError(
            f"build {from_build!r} has variant {source.variant}; a build from it keeps it "
            f"(--variant {source.variant})"
        )
    return source, source.variant


def inherit(store_path: str | Path, source: SourceBuild, run_id: str) -> None:
    """Copy the source build's rules, libraries and manuals into ``run_id`` (once)."""
    from lorekit.agents.automanual.inherit import copy_build
    from lorekit.agents.automanual.store import AutoManualStoreError, open_db

    db = open_db(store_path)
    try:
        copy_build(db, source.run_id, run_id, episodes=source.keys)
    except AutoManualStoreError as exc:
        raise BuildSourceError(str(exc)) from None
    finally:
        db.close()


SET_ONLY: tuple[str, ...] = ("examples",)
"""Build options that ``run_build`` records only when they are given."""


def same_options(
    store: Any, run_id: str, options: dict[str, Any], seed: int, plan: list[str]
) -> None:
    """A resumed build must be played as it began: same options, seed and task plan.

    Otherwise its rule history would mix two curricula; refuse with what differs.
    """
    from lorekit.eval.store import RunMismatchError

    info = store.get_run(run_id)
    stored = info.config if info is not None else {}
    if "automanual" not in stored:
        return
    now = {**options, "seed": seed}
    before = {**stored["automanual"], "seed": stored.get("seed")}
    # Options recorded only when given (so builds from before them resume) count
    # when either side has them.
    keys = [*now, *(k for k in SET_ONLY if k in before and k not in now)]
    changed = [
        f"{k} {before.get(k)!r} -> {now.get(k)!r}" for k in keys if before.get(k) != now.get(k)
    ]
    if stored.get("plan") is not None and stored["plan"] != plan:
        changed.append("the task plan (split, tasks or --per-type)")
    if changed:
        raise RunMismatchError(
            f"build {run_id!r} was started with other settings ({'; '.join(changed)}); "
            "resume it with the same ones, or choose another run id"
        )
