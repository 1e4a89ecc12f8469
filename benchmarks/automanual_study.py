"""AutoManual vs Planner+Lib. on generated ALFWorld games, scripted models of controlled quality.

Claim (AutoManual, sections 1 and 4 and appendix G.1): a planner that copies
the skill of its last success repeats that success's path where the new
scenario differs (Path Dependence); rules written online by a builder, which
the planner puts before skills, fix the systematic error. The paper's case:
Put Two, where the two objects may lie in one receptacle or in two.

Here the models are scripted (lorekit.agents.automanual.simulation and
simulation_builder): a planner that writes real code for the ALFWorld code
API, copies a skill of the same task type when one is retrieved (a Put Two
skill concluded from an episode where both objects lay together takes the
second object from the first one's receptacle), forgets a state change with
probability ``--forget`` when it has neither rule nor skill, and repairs an
error it sees with probability ``--repair``; a builder that writes a rule
with the key phrase the planner follows when a trajectory shows the error
(or a vague one with probability ``--mistake``); a consolidator and a
formulator. Both methods get the same models, which do not know which method
calls them. The rules' content is fixed by design: this shows the mechanism,
not that a real model would find these rules (see docs/automanual.md).

Stages, through the lead's build loop (lorekit.cli.automanual_build.run_build) and
the harness, recorded in one run store:
1. build on the ``dev`` split (``--per-type`` games of each of ``--types``,
   by default Put Two only, where the two methods differ; shuffled),
   once as AutoManual and once as Planner+Lib., no type retired unless
   ``--retire-after`` is given; the curve is the build episodes' success,
   by windows of ``--window`` episodes;
2. formulate AutoManual's manual;
3. test both on the ``test`` split (``--test-per-type`` games of each type):
   AutoManual with its manual and skills, Planner+Lib. with its skills.

Progress goes to stdout as it happens (each stage of each seed and method, the
test episodes in tens), so a run of several minutes is never silent.

Reported: success and first-try success (no error on the way) per window and
per method, Put Two apart, and in the test stage how many Put Two episodes
started from the copied "same receptacle" shortcut and how they ended. Exit
status 1 when AutoManual's test success is below Planner+Lib.'s.

Usage: python benchmarks/automanual_study.py [--per-type 20] [--test-per-type 25]
       [--types pick_two_obj_and_place | all | TYPE,TYPE...]
       [--forget 0.3] [--repair 0.5] [--mistake 0.0] [--seeds 0,1,2] [--window 5]
       [--retire-after N] [--store PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lorekit.agents.automanual.simulation import planner_model
from lorekit.agents.automanual.simulation_builder import (
    builder_model,
    consolidator_model,
    formulator_model,
)
from lorekit.envs import EnvSpec, make
from lorekit.envs.base import Task
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.eval.store_schema import EpisodeRecord
from lorekit.llm import Roles, ScriptedLLM

TWO = "pick_two_obj_and_place"
ENV_KWARGS: dict[str, Any] = {"object_ids": True}
METHODS = {"AutoManual": "automanual", "Planner+Lib.": "planner-lib"}
NO_RETIRE = 10**9
_STARTED = time.perf_counter()
#: Seconds between two progress lines of a build.
HEARTBEAT_S = 10.0


def say(message: str) -> None:
    """One progress line, with the seconds since the study started, shown at once."""
    print(f"[{time.perf_counter() - _STARTED:5.0f} s] {message}", flush=True)


def counter(total: int, every: int = 10) -> Any:
    """An ``on_episode`` hook that says how many of ``total`` episodes are done."""
    done = [0]

    def note(_: object) -> None:
        done[0] += 1
        if done[0] % every == 0 or done[0] == total:
            say(f"  {done[0]}/{total} episodes")

    return note


def _episodes_in(store_path: Path) -> int | None:
    try:
        with RunStore.open_readonly(store_path) as store:
            return sum(len(store.episodes(r.run_id)) for r in store.list_runs())
    except Exception:  # not there yet, or being set up: the next beat tells
        return None


async def heartbeat(store_path: Path, total: int) -> None:
    """Until cancelled, say every :data:`HEARTBEAT_S` seconds how many of ``total``
    episodes the build has stored (the build loop takes no episode hook of its own)."""
    before = await asyncio.to_thread(_episodes_in, store_path)
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        done = await asyncio.to_thread(_episodes_in, store_path)
        if done is not None:
            say(f"  {done - (before or 0)}/{total} build episodes")


@dataclass(frozen=True)
class Ep:
    """One episode as the study counts it."""

    task_type: str
    success: bool
    first_try: bool
    copied_shortcut: bool


def episodes_of(store: RunStore, run_id: str) -> list[Ep]:
    out = []
    for rec in sorted(store.episodes(run_id), key=lambda e: e.index):
        out.append(_ep(rec))
    return out


def _event_line(ev: Any, order: dict[str, int]) -> str:
    """One rule change (a ``RuleEvent``): version, who, build episode number, what."""
    rule = ev.after if ev.after is not None else ev.before
    kind = rule.type.value if rule is not None else ""
    episode = order.get(ev.episode_id or "", "-")
    return (
        f"v{ev.version:<3} {ev.actor:<12} episode {episode!s:<4} {ev.op:<7} {ev.rule_id:<8} {kind}"
    )


def _records(store_path: Path, run_id: str) -> list[EpisodeRecord]:
    with RunStore(store_path) as store:
        return store.episodes(run_id)


def _ep(rec: EpisodeRecord) -> Ep:
    notes = rec.info.get("notes") or {}
    played = notes.get("automanual") or {}
    turns = played.get("turns") or [{}]
    return Ep(
        rec.task_group or "",
        rec.success,
        played.get("outcome") == "direct_success",
        "from the same receptacle" in str(turns[0].get("plan", "")),
    )


def roles(forget: float, repair: float, mistake: float, seed: int) -> Roles:
    """Fresh scripted models for every role (the same knobs for every method)."""
    return Roles(
        {
            "planner": ScriptedLLM(fn=planner_model(forget=forget, repair=repair, seed=seed)),
            "builder": ScriptedLLM(fn=builder_model(mistake=mistake, seed=seed)),
            "consolidator": ScriptedLLM(fn=consolidator_model()),
            "formulator": ScriptedLLM(fn=formulator_model()),
        }
    )


def per_type(tasks: Sequence[Task], n: int, types: Sequence[str] = ()) -> list[Task]:
    """The first ``n`` tasks of each type (of ``types`` only, when given)."""
    by: dict[str, list[Task]] = {}
    for t in tasks:
        if not types or t.group in types:
            by.setdefault(t.group, []).append(t)
    return [t for group in by.values() for t in group[:n]]


def rate(eps: Sequence[Ep], first_try: bool = False) -> str:
    if not eps:
        return "   -   "
    ok = sum(e.first_try if first_try else e.success for e in eps)
    return f"{ok:>3}/{len(eps):<3} {ok / len(eps):4.0%}"


@dataclass
class SeedResult:
    """One seed: build episodes in order and test episodes, per method."""

    seed: int
    builds: dict[str, list[Ep]]
    tests: dict[str, list[Ep]]
    manual: str = ""
    history: list[str] = field(default_factory=list)


async def study(args: argparse.Namespace, store_path: Path, seed: int) -> SeedResult:
    """Build, formulate and test both methods with one seed (the build order's shuffle too)."""
    # the stages' own modules (the build loop is the CLI's: resumable, recorded in the store)
    from lorekit.agents.automanual.agent import AutoManualAgent
    from lorekit.agents.automanual.formulator import Formulator
    from lorekit.agents.automanual.manuals import save_manual
    from lorekit.agents.automanual.rules import RuleSystem
    from lorekit.agents.automanual.store import open_db
    from lorekit.cli.automanual_build import run_build

    types = [t for t in args.types.split(",") if t and t != "all"]
    dev = make("alfworld", split="dev", **ENV_KWARGS)
    test_env = make("alfworld", split="test", **ENV_KWARGS)
    test_tasks = per_type(test_env.tasks("test"), args.test_per_type, types)
    result = SeedResult(seed, {}, {})
    for method, variant in METHODS.items():
        r = roles(args.forget, args.repair, args.mistake, seed)
        build_tasks = per_type(dev.tasks("dev"), args.per_type, types)
        say(f"seed {seed}, {method}: building on dev ({len(build_tasks)} games) ...")
        beat = asyncio.create_task(heartbeat(store_path, len(build_tasks)))
        try:
            outcome = await run_build(
                store_path,
                env_name="alfworld",
                env_kwargs={**ENV_KWARGS, "split": "dev"},
                tasks=build_tasks,
                roles=r,
                variant=variant,
                per_type=args.per_type,
                seed=seed,
                retire_after=args.retire_after or NO_RETIRE,
            )
        finally:
            beat.cancel()
        with RunStore(store_path) as store:
            result.builds[method] = episodes_of(store, outcome.run_id)
        say(f"seed {seed}, {method}: built, {rate(result.builds[method]).strip()} succeeded")
        if variant == "automanual":
            say(f"seed {seed}, {method}: formulating the manual ...")
            db = open_db(str(store_path))
            try:
                system = RuleSystem(db, outcome.run_id)
                final = system.rules()
                manual = await Formulator(r).formulate(final, rules_version=system.version)
                save_manual(db, outcome.run_id, manual)
                order = {e.episode_key: e.index + 1 for e in _records(store_path, outcome.run_id)}
                result.history = [_event_line(ev, order) for ev in system.history()]
            finally:
                db.close()
            result.manual = manual.markdown
        agent = AutoManualAgent(outcome.run_id, store=str(store_path))
        say(f"seed {seed}, {method}: testing on test ({len(test_tasks)} games) ...")
        with RunStore(store_path) as store:
            tested = await run_eval(
                store,
                env_factory=EnvSpec("alfworld", {**ENV_KWARGS, "split": "test"}),
                agent=agent,
                roles=r,
                episodes=plan_episodes(test_tasks, seed=seed),
                env_name="alfworld",
                concurrency=args.concurrency,
                on_episode=counter(len(test_tasks)),
            )
            result.tests[method] = episodes_of(store, tested.run_id)
        say(f"seed {seed}, {method}: tested, {rate(result.tests[method]).strip()} succeeded")
    return result


def _header(first: str) -> str:
    return f"{first:<24}" + "".join(f"{m + ' ok':>18}{'first try':>16}" for m in METHODS)


def _cells(per_method: dict[str, list[Ep]]) -> str:
    return "".join(f"{rate(per_method[m]):>18}{rate(per_method[m], True):>16}" for m in METHODS)


def report(args: argparse.Namespace, results: Sequence[SeedResult], wall: float) -> None:
    seeds = ",".join(str(r.seed) for r in results)
    print(
        f"scripted models: forget={args.forget} repair={args.repair} mistake={args.mistake}; "
        f"seeds {seeds}; generated ALFWorld games (not ALFWorld's official games)"
    )
    print(
        f"\nBuilding on dev ({args.per_type} games per type), episodes by windows of "
        f"{args.window}, all seeds pooled:"
    )
    print(_header("episodes"))
    n = max(len(eps) for r in results for eps in r.builds.values())
    for start in range(0, n, args.window):
        window = {
            m: [e for r in results for e in r.builds[m][start : start + args.window]]
            for m in METHODS
        }
        print(f"{start + 1:>3}-{min(start + args.window, n):<20}" + _cells(window))
    print(f"\nTesting on test ({args.test_per_type} games per type) after the build:")
    print(_header("seed"))
    for r in results:
        print(f"{r.seed:<24}" + _cells(r.tests))
    for label, keep in (("all seeds", lambda e: True), ("all seeds, Put Two", _is_two)):
        pooled = {m: [e for r in results for e in r.tests[m] if keep(e)] for m in METHODS}
        print(f"{label:<24}" + _cells(pooled))
    for m in METHODS:
        two = [e for r in results for e in r.tests[m] if _is_two(e)]
        copied = [e for e in two if e.copied_shortcut]
        print(
            f"{m}: {len(copied)} of {len(two)} Put Two test episodes started from the copied "
            f"'same receptacle' shortcut; {sum(e.first_try for e in copied)} of them solved at "
            f"the first try, {sum(e.success for e in copied)} in the end"
        )
    print(f"\nwall: {wall:.0f} s")


def _is_two(e: Ep) -> bool:
    return e.task_type == TWO


async def run_all(args: argparse.Namespace, store: Path) -> int:
    started = time.perf_counter()
    results = []
    for seed in [int(x) for x in args.seeds.split(",")]:
        results.append(await study(args, store, seed))
    first = results[0]
    print(f"AutoManual's rule history (seed {first.seed}; episode = build episode number):")
    print("\n".join(first.history))
    print(f"\nAutoManual's manual (seed {first.seed}):\n{first.manual}\n")
    report(args, results, time.perf_counter() - started)
    ok = {m: sum(e.success for r in results for e in r.tests[m]) for m in METHODS}
    return 0 if ok["AutoManual"] >= ok["Planner+Lib."] else 1


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--per-type", type=int, default=20)
    p.add_argument("--test-per-type", type=int, default=25)
    p.add_argument(
        "--types", default=TWO, help=f"comma-separated task types or 'all' (default: {TWO})"
    )
    p.add_argument("--forget", type=float, default=0.3)
    p.add_argument("--repair", type=float, default=0.5)
    p.add_argument("--mistake", type=float, default=0.0)
    p.add_argument("--seeds", default="0,1,2", help="comma-separated seeds, one study each")
    p.add_argument("--window", type=int, default=5)
    p.add_argument("--retire-after", type=int, default=None)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--store", type=Path, default=None)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp) / "study.db"
        return asyncio.run(run_all(args, store))


if __name__ == "__main__":
    sys.exit(main())
