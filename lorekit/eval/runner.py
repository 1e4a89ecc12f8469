"""The evaluation harness: many episodes, concurrently, all of it recorded.

``run_eval`` plays each (task, seed) pair once with a fresh episode of a
pooled environment, under an asyncio concurrency bound and a per-episode
timeout. Every step and model call goes to the run store, and an episode is
committed whole when it ends. Resuming a run id skips the episodes the store
already holds and plays exactly the missing ones.

Env calls never run on the event loop unless the env declares them cheap
(``inline``): the pool builds each env on its own thread or in its own
process (:mod:`lorekit.envs.asyncenv`), so episodes overlap even when env
steps block, and the timeout, which covers building the env, resetting it
and every step, always ends an episode on time. An env whose call was cut
off is discarded, never reused.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from lorekit.agents.base import Agent, final_stop_reason
from lorekit.envs.base import Task
from lorekit.eval.abort import EarlyStop
from lorekit.eval.backend import (
    EpisodeBackend,
    EpisodeRoles,
    EpisodeSpec,
    EpisodeTimeout,
    LocalBackend,
    check_models,
)
from lorekit.eval.envpool import EnvSource
from lorekit.eval.report import run_summary, stored_cost
from lorekit.eval.store import RunStore, StoreError
from lorekit.llm.accounting import PriceTable, UsageLedger
from lorekit.llm.roles import Roles
from lorekit.progress import ProgressReport


def plan_episodes(tasks: Sequence[Task], *, seed: int = 0, repeats: int = 1) -> list[EpisodeSpec]:
    """Episodes for ``tasks``, each ``repeats`` times, with seeds derived from
    the run seed and the position, so the plan is the same on every resume."""
    specs = []
    for r in range(repeats):
        for i, task in enumerate(tasks):
            index = r * len(tasks) + i
            s = seed + index
            specs.append(EpisodeSpec(f"{task.id}/{s}", index, task, s))
    return specs


@dataclass(slots=True)
class EvalResult:
    """What a call to :func:`run_eval` did.

    ``envs_discarded`` counts envs dropped because a call was cut off (or
    their process died); ``stuck_threads`` those of them whose thread was
    still inside the call when dropped (threads cannot be killed; they end
    when the call returns, and never touch the run again).
    """

    run_id: str
    played: int = 0
    skipped: int = 0
    declined: int = 0
    successes: int = 0
    errors: int = 0
    wall_s: float = 0.0
    envs_discarded: int = 0
    stuck_threads: int = 0
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EpisodeOutcome:
    """How one episode ended, as handed to ``run_eval``'s ``on_episode`` hook.

    ``status`` is ``success``, ``failure``, ``error`` or ``deferred`` (a call was
    refused by a spending limit: the episode is not stored, so a resumed run plays
    it, and its calls are kept outside it so their cost counts); ``cost_usd`` is
    what its calls cost at the run's prices."""

    spec: EpisodeSpec
    status: str
    error: str | None = None
    cost_usd: float = 0.0


async def run_eval(
    store: RunStore,
    *,
    env_factory: EnvSource,
    agent: Agent,
    roles: Roles | None = None,
    episodes: Sequence[EpisodeSpec],
    run_id: str | None = None,
    env_name: str = "",
    config: dict[str, Any] | None = None,
    concurrency: int = 8,
    episode_timeout_s: float | None = 600.0,
    retry_errors: bool = False,
    prices: PriceTable | None = None,
    progress: bool | Console | ProgressReport = False,
    on_episode: Callable[[EpisodeOutcome], None] | None = None,
    early_stop: EarlyStop | None = None,
    before_episode: Callable[[EpisodeSpec], bool] | None = None,
    backend: EpisodeBackend | None = None,
    episode_roles: EpisodeRoles | None = None,
) -> EvalResult:
    """Play ``episodes`` (skipping those already in the store) and summarise.

    ``env_factory`` is an :class:`~lorekit.envs.EnvSpec` (registry name and
    arguments; needed for envs that run in a process) or a callable that
    builds a ``TextEnv``. ``retry_errors`` replays episodes that ended in an
    error (a timeout, a crashed model) instead of counting them as done.
    ``on_episode`` is called with each episode's outcome once it is stored.
    ``early_stop`` ends the run with :class:`~lorekit.eval.abort.RunAborted`
    when its first episodes all fail with the same model error (see
    :mod:`lorekit.eval.abort`). ``before_episode`` is asked, when an episode's
    turn comes (after the concurrency gate), whether to play it; a declined
    episode is not recorded (``EvalResult.declined`` counts them), nor is one a
    spending limit cut short (a call refused with ``call_meta["stopped"]``): its
    calls are kept outside any episode and it counts as declined. With
    ``concurrency=1`` episodes start in order, each after the previous one is
    stored, which is what a curriculum that learns between episodes needs
    (AutoManual's build retires a task type after a streak of successes).
    ``backend`` plays the episodes somewhere else (:mod:`lorekit.eval.ray_backend`);
    by default they play here, with envs from ``env_factory``.

    Models: ``roles`` (the run's, shared by every episode) or ``episode_roles``
    (``factory(task, seed)``, called once per episode for models of its own,
    which are closed when it ends; see :mod:`lorekit.eval.backend`). Either
    way every call is metered into the episode's rows. A ``backend`` handed in
    brings its own models, so neither is needed then.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    if backend is None:
        check_models(roles, episode_roles)
    rid = store.create_run(
        run_id,
        env=env_name,
        agent=agent.name,
        config=config or {},
        meta={"episodes": len(episodes)},
    )
    done_keys = store.finished_episode_keys(rid, include_errors=not retry_errors)
    todo = [e for e in episodes if e.key not in done_keys]
    result = EvalResult(rid, skipped=len(episodes) - len(todo))
    ledger = UsageLedger(prices)
    runner = (
        backend
        if backend is not None
        else LocalBackend(env_factory, agent, roles, episode_roles=episode_roles)
    )
    gate = asyncio.Semaphore(concurrency)
    bar = _Bar(progress, total=len(todo))
    started = time.perf_counter()
    store.set_run_status(rid, "running")

    async def play(spec: EpisodeSpec) -> None:
        async with gate:
            if before_episode is not None and not before_episode(spec):
                result.declined += 1
                bar.advance(result, ledger)
                return
            writer = store.episode(
                rid,
                spec.key,
                index=spec.index,
                task_id=spec.task.id,
                task_group=spec.task.group,
                seed=spec.seed,
            )
            episode_ledger = UsageLedger(prices)
            t0 = time.perf_counter()
            error: str | None = None
            failure: BaseException | None = None
            try:
                traj = await runner.play(spec, writer, episode_ledger, episode_timeout_s)
            except EpisodeTimeout as exc:
                failure, error = exc, str(exc)
            except Exception as exc:
                failure = exc
                error = traceback.format_exception_only(type(exc), exc)[-1].strip()
            finally:
                ledger.merge(episode_ledger)
            usage = episode_ledger.total().to_dict()
            if writer.stopped is not None:  # cut short by a spending limit: play it again
                writer.keep_calls_only()
                result.declined += 1
                bar.advance(result, ledger)
                if on_episode is not None:
                    on_episode(EpisodeOutcome(spec, "deferred", error, usage["cost_usd"]))
                return
            if error is not None:
                info: dict[str, Any] = {"usage": usage}
                partial = writer.live  # what the agent had built when the error struck
                if partial is not None:
                    info.update(
                        initial_observation=partial.initial_observation,
                        stop_reason="error",
                        notes=partial.notes,
                    )
                writer.finish(success=False, reward=0.0, status="error", error=error, info=info)
                result.errors += 1
                outcome = EpisodeOutcome(spec, "error", error, usage["cost_usd"])
            else:
                writer.finish(
                    success=traj.success,
                    reward=traj.reward,
                    info={
                        "initial_observation": traj.initial_observation,
                        "stop_reason": final_stop_reason(traj),
                        "notes": traj.notes,
                        "wall_s": time.perf_counter() - t0,
                        "usage": usage,
                    },
                )
                result.successes += int(traj.success)
                status = "success" if traj.success else "failure"
                outcome = EpisodeOutcome(spec, status, cost_usd=usage["cost_usd"])
            result.played += 1
            bar.advance(result, ledger)
            if on_episode is not None:
                on_episode(outcome)
            if early_stop is not None:
                early_stop.observe(failure)

    tasks = [asyncio.ensure_future(play(s)) for s in todo]
    try:
        with bar:
            work = asyncio.gather(*tasks)
            await (early_stop.watch(work) if early_stop is not None else work)
    except BaseException:
        # One episode's failure (Ctrl-C, a full disk under the store) ends the others
        # here, cancelled and awaited, so none is left for asyncio to report on exit.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(StoreError):  # a full disk may refuse even this;
            store.set_run_status(rid, "interrupted")  # readers then see no writer
        raise
    finally:
        if backend is None:  # a backend handed in belongs to the caller, who closes it
            runner.close()
        result.envs_discarded, result.stuck_threads = runner.discarded, runner.stuck_threads
    result.wall_s = time.perf_counter() - started
    summary = run_summary(store, rid)
    summary["cost_usd"] = stored_cost(store, rid, prices)  # every session's, not this one's
    summary["this_session"] = {"cost_usd": sum(u.cost_usd for u in ledger.by_role.values())}
    summary["this_session"] |= {
        "played": result.played,
        "skipped": result.skipped,
        "declined": result.declined,
        "wall_s": result.wall_s,
        "envs_discarded": result.envs_discarded,
        "stuck_threads": result.stuck_threads,
    }
    result.summary = summary
    store.set_run_status(rid, "finished", summary)
    return result


class _Bar:
    """The run's progress (live success rate, errors, tokens and cost) on stderr: a bar
    with an ETA on a terminal, a line now and then in a log (:mod:`lorekit.progress`)."""

    def __init__(self, progress: bool | Console | ProgressReport, total: int) -> None:
        self._report: ProgressReport | None = None
        if isinstance(progress, ProgressReport):
            self._report = progress
            progress.total = total
        elif progress:
            console = progress if isinstance(progress, Console) else Console(stderr=True)
            self._report = ProgressReport("episodes", total, console=console)

    def __enter__(self) -> _Bar:
        if self._report is not None:
            self._report.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._report is not None:
            self._report.__exit__(*exc)

    def advance(self, result: EvalResult, ledger: UsageLedger) -> None:
        if self._report is None:
            return
        total = ledger.total()
        rate = result.successes / result.played if result.played else 0.0
        stats = (
            f"success {rate:.1%}  errors {result.errors}  "
            f"tokens {total.tokens_text}  ${total.cost_usd:.4f}"
        )
        self._report.advance(1, stats=stats)
