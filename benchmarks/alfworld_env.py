"""ALFWorld env speed: LoreKit's env beside alfworld's own AlfredTWEnv, same games.

Claims (issue 12): on the same games and the same commands, LoreKit's
``make("alfworld")`` is no slower than alfworld's ``AlfredTWEnv``, and faster
where it caches the grounding (the PDDL-to-SAS translation, each
command's text, the grammar's parses); and the harness, whose ALFWorld envs run in processes, plays
about twice the episodes per second at concurrency 2 on 2 cores.

The script generates ``--games`` games (six task types in turn) and writes
them the way ALFWorld's data is laid out (``json_2.1.1/valid_unseen/<task>/
<trial>``), then measures in one run:

1. side by side, game by game (which env goes first alternates): the real
   ``AlfredTWEnv`` (its gym env, batch size 1, split
   ``eval_out_of_distribution``) and ``AlfWorldEnv`` on that folder. Two
   passes over the games: the first reset of each game (cold: the PDDL
   translation), a second reset of it (LoreKit reloads its cached
   translation; alfworld translates again), and every step of the game's
   walkthrough in both passes. Ratios are alfworld's time over ours
   (> 1: ours is faster). Both must end every game won, with equal
   admissible commands after every step (checked outside the timing).
2. the harness (``run_eval``, the oracle agent, as ``lorekit run`` plays):
   every game once at concurrency 1 and at 2 with process envs, in turn,
   ``--rounds`` times (best of each), and once at 2 with thread envs
   (``EnvSpec(execution="thread")``) to show why process was chosen. Each
   run starts in a fresh interpreter with fresh env processes, so their
   start-up (importing alfworld) and cold resets are counted. "cores busy"
   is the CPU time of the run's processes over its wall time: at
   concurrency 2 it should be near 2; when other work holds a core of this
   shared machine it is not, and the speed-up is capped by it.
3. the memory each game keeps in the per-process caches (translation, parsed
   grammar, command texts; ``TRANSLATION_CACHE_SIZE`` games at most), by
   tracemalloc, and what that comes to at the bound.
4. the disk cache of groundings (issue 41, ``engine.GROUNDINGS``): each game's
   first reset in a fresh interpreter with an empty cache folder (Fast
   Downward grounds the game and writes its SAS text), then in another fresh
   interpreter on the folder now filled (the text read back, the task parsed
   again), game by game in turn; the ratio is cold over read-back (> 1: the
   cache saves time). Both must reach the same first observation and
   admissible commands.
5. how full the rooms of the generated ``test`` split are, beside the official
   games' figures (issue 28: empty views, objects per view, distinct objects
   seen), as a searcher for each task's object sees them
   (``lorekit/envs/alfworld/stats.py``).

Every part runs on cache folders of its own (``XDG_CACHE_HOME`` set to a fresh
temporary folder), so a cache the user filled before never makes a "cold"
figure warm, and nothing is left in the user's cache.

Timings on a shared machine are noisy: read the ratios, not the milliseconds.

    python benchmarks/alfworld_env.py [--games 36] [--rounds 2] [--quick] [--rooms]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import multiprocessing
import os
import resource
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alfworld.agents.environment.alfred_tw_env import AlfredTWEnv

from lorekit.agents import OracleAgent
from lorekit.envs import EnvSpec
from lorekit.envs.alfworld import engine, rules, stats
from lorekit.envs.alfworld.env import AlfWorldEnv
from lorekit.envs.alfworld.games import generated_split
from lorekit.envs.alfworld.generate import GeneratedGame, generate_games
from lorekit.envs.base import Execution
from lorekit.eval.runner import plan_episodes, run_eval
from lorekit.eval.store import RunStore
from lorekit.llm import Roles, ScriptedLLM

SPLIT = "valid_unseen"
clock = time.perf_counter


def write_games(root: Path, games: list[GeneratedGame]) -> Path:
    """``root/json_2.1.1`` holding ``games`` as ALFWorld's valid_unseen split."""
    for game in games:
        game.write(root / "json_2.1.1" / SPLIT)
    return root / "json_2.1.1"


def alfworld_env(data: Path) -> Any:
    """alfworld's own eval env on ``data``: AlfredTWEnv's gym env, batch size 1."""
    config = {
        "env": {
            "goal_desc_human_anns_prob": 0,
            "task_types": [1, 2, 3, 4, 5, 6],
            "domain_randomization": False,
            "expert_type": "handcoded",
        },
        "dataset": {"eval_ood_data_path": str(data / SPLIT), "num_eval_games": -1},
        "general": {"training_method": "dagger"},
        "dagger": {"training": {"max_nb_steps_per_episode": 200}},
    }
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return AlfredTWEnv(config, train_eval="eval_out_of_distribution").init_env(batch_size=1)


def task_id(gamefile: str, data: Path) -> str:
    return Path(gamefile).parent.relative_to(data / SPLIT).as_posix()


class SideBySide:
    """Both envs on the same games; times per reset and per step, by kind."""

    def __init__(self, data: Path, walkthroughs: dict[str, list[str]]) -> None:
        self.data = data
        self.walkthroughs = walkthroughs
        self.theirs = alfworld_env(data)
        self.ours = AlfWorldEnv(
            "official", data_dir=data, variant="any", split=SPLIT, max_steps=None
        )
        self.tasks = {t.id: t for t in self.ours.tasks(SPLIT)}
        self.resets: dict[str, dict[str, list[float]]] = {"ours": {}, "theirs": {}}
        self.steps: dict[str, list[float]] = {"ours": [], "theirs": []}

    def play_pass(self, label: str) -> None:
        for i in range(len(self.walkthroughs)):
            start = clock()
            _, infos = self.theirs.reset()
            their_reset = clock() - start
            game = task_id(infos["extra.gamefile"][0], self.data)
            self.resets["theirs"].setdefault(label, []).append(their_reset)
            if i % 2:
                ours_admissible = self._play_ours(game, label)
                theirs_admissible = self._play_theirs(game)
            else:
                theirs_admissible = self._play_theirs(game)
                ours_admissible = self._play_ours(game, label)
            if ours_admissible != theirs_admissible:
                raise AssertionError(f"{game}: admissible commands differ between the envs")

    def _play_theirs(self, game: str) -> list[list[str]]:
        admissible, won = [], False
        for command in self.walkthroughs[game]:
            start = clock()
            _, _, _, infos = self.theirs.step([command])
            self.steps["theirs"].append(clock() - start)
            admissible.append(sorted(infos["admissible_commands"][0]))
            won = bool(infos["won"][0])
        if not won:
            raise AssertionError(f"{game}: alfworld's env did not win along the walkthrough")
        return admissible

    def _play_ours(self, game: str, label: str) -> list[list[str]]:
        start = clock()
        self.ours.reset(self.tasks[game])
        self.resets["ours"].setdefault(label, []).append(clock() - start)
        admissible, won = [], False
        for command in self.walkthroughs[game]:
            start = clock()
            step = self.ours.step(command)
            self.steps["ours"].append(clock() - start)
            if not step.info["valid"]:
                raise AssertionError(f"{game}: {command!r} not admissible in LoreKit's env")
            admissible.append(sorted(self.ours.candidate_actions()))
            won = bool(step.info["won"])
        if not won:
            raise AssertionError(f"{game}: LoreKit's env did not win along the walkthrough")
        return admissible


def warm_up(root: Path, game: GeneratedGame) -> None:
    """Play one other game in both envs, so imports and parsers are ready."""
    data = write_games(root, [game])
    bench = SideBySide(data, {game.path: game.walkthrough})
    bench.play_pass("warm-up")


def report_env(bench: SideBySide) -> None:
    def mean_ms(values: list[float]) -> float:
        return 1000 * statistics.fmean(values)

    rows = [
        ("first reset (cold)", bench.resets["theirs"]["cold"], bench.resets["ours"]["cold"]),
        ("repeat reset", bench.resets["theirs"]["repeat"], bench.resets["ours"]["repeat"]),
        ("step (walkthrough)", bench.steps["theirs"], bench.steps["ours"]),
    ]
    print(f"{'':22}{'AlfredTWEnv':>14}{'LoreKit':>12}{'ratio':>9}   (mean; ratio = theirs/ours)")
    for name, theirs, ours in rows:
        a, b = mean_ms(theirs), mean_ms(ours)
        print(f"{name:22}{a:11.1f} ms{b:9.1f} ms{a / b:8.1f}x")
    steps = len(bench.steps["ours"])
    median = statistics.median(bench.steps["theirs"]) / statistics.median(bench.steps["ours"])
    print(f"steps timed: {steps} per env; median step ratio {median:.1f}x")


@dataclass
class HarnessRun:
    """One oracle run: episodes per second, the cores it kept busy (CPU seconds
    of this process and its env processes per second of wall time), errors."""

    rate: float
    cores: float
    errors: list[str]


def fresh_interpreter(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` in a new interpreter with an empty cache folder of its own (no
    engine cache warm from this process, no grounding on disk), as ``lorekit run``
    would start on a first run."""
    with tempfile.TemporaryDirectory() as cache:
        return in_interpreter(Path(cache), fn, *args)


def in_interpreter(cache: Path, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` in a new interpreter whose cache folder is ``cache``."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        return pool.submit(_with_cache, cache, fn, *args).result()


def _with_cache(cache: Path, fn: Any, *args: Any) -> Any:
    os.environ["XDG_CACHE_HOME"] = str(cache)  # env processes it starts inherit it
    os.environ.pop("LOREKIT_NO_DISK_CACHE", None)
    return fn(*args)


def harness_run(data: Path, n: int, concurrency: int, execution: Execution | None) -> HarnessRun:
    """An oracle run over the first ``n`` games, in a fresh interpreter (thread envs
    must not find this process's engine caches warm from the side-by-side games)."""
    return fresh_interpreter(_harness_run, data, n, concurrency, execution)


def _harness_run(data: Path, n: int, concurrency: int, execution: Execution | None) -> HarnessRun:
    spec = EnvSpec(
        "alfworld",
        {"source": "official", "data_dir": str(data), "variant": "any", "split": SPLIT},
        execution=execution,
    )
    tasks = AlfWorldEnv("official", data_dir=data, variant="any", split=SPLIT).tasks(SPLIT)[:n]
    errors: list[str] = []
    leaks = io.StringIO()  # Fast Downward's log, which escapes its capture under threads
    with (
        tempfile.TemporaryDirectory() as tmp,
        RunStore(Path(tmp) / "bench.sqlite3") as db,
        contextlib.redirect_stdout(leaks),
    ):
        cpu, start = cpu_seconds(), clock()
        result = asyncio.run(
            run_eval(
                db,
                env_factory=spec,
                agent=OracleAgent(),
                roles=Roles(ScriptedLLM(default="")),
                episodes=plan_episodes(tasks),
                concurrency=concurrency,
                env_name="alfworld",
                on_episode=lambda done: errors.append(str(done.error)) if done.error else None,
            )
        )
        wall = clock() - start
        reap_children()
        cpu = cpu_seconds() - cpu
    if result.successes + len(errors) != n:
        raise AssertionError(f"oracle run: {result.successes}/{n} won, {len(errors)} errors")
    return HarnessRun(n / wall, cpu / wall, errors)


def cpu_seconds() -> float:
    """CPU time of this process (all threads) and of its ended, reaped children."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def reap_children(limit_s: float = 10.0) -> None:
    """Wait until the env processes have exited, so their CPU time is counted.

    Env processes are children of multiprocessing's fork server, which reaps them; its
    CPU time and theirs reach this process only once the server itself has exited and
    been waited for, so it is stopped too (a private call: the benchmark alone does it)."""
    deadline = clock() + limit_s
    while multiprocessing.active_children() and clock() < deadline:
        time.sleep(0.05)
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    stop = getattr(server, "_stop", None)
    if callable(stop):
        stop()


def report_harness(data: Path, n: int, rounds: int) -> None:
    """Concurrency 1 and 2 in turn, ``rounds`` times (best of each: other
    work on a shared machine only slows a run down); thread envs once."""
    runs: dict[int, list[HarnessRun]] = {1: [], 2: []}
    for _ in range(rounds):
        for concurrency in (1, 2):
            run = harness_run(data, n, concurrency, None)
            if run.errors:
                raise AssertionError(f"process envs: {run.errors[0]}")
            runs[concurrency].append(run)
    one, two = (max(runs[c], key=lambda r: r.rate) for c in (1, 2))
    threads = harness_run(data, n, 2, "thread")
    print(f"harness, oracle agent, {n} episodes, {os.cpu_count()} cores, best of {rounds}:")
    print(f"  concurrency 1, process envs: {one.rate:5.2f} episodes/s ({one.cores:.2f} cores busy)")
    print(
        f"  concurrency 2, process envs: {two.rate:5.2f} episodes/s ({two.cores:.2f} cores busy),"
        f" speed-up {two.rate / one.rate:.2f}x"
    )
    if threads.errors:
        print(
            f"  concurrency 2, thread envs:  {len(threads.errors)} of {n} episodes failed "
            f"(textworld's shared parsers are not thread-safe), e.g. "
            f"{threads.errors[0].splitlines()[0]!r}"
        )
    else:
        print(
            f"  concurrency 2, thread envs:  {threads.rate:5.2f} episodes/s "
            f"({threads.cores:.2f} cores busy), speed-up {threads.rate / one.rate:.2f}x"
        )


def first_resets(data: Path, games: list[str], warm: str) -> list[tuple[float, str, list[str]]]:
    """Each game's first reset in this interpreter: its time, the observation and the
    admissible commands it shows (to check that both ways reach the same game)."""
    env = AlfWorldEnv("official", data_dir=data, variant="any", split=SPLIT, max_steps=None)
    tasks = {t.id: t for t in env.tasks(SPLIT)}
    env.reset(tasks[warm])  # imports and parsers ready before any timing
    out = []
    for game in games:
        start = clock()
        first = env.reset(tasks[game])
        out.append((clock() - start, first.text, sorted(env.candidate_actions())))
    env.close()
    return out


def report_disk_cache(root: Path, measured: list[GeneratedGame], warm: GeneratedGame) -> None:
    """First resets from a fresh grounding and read back from the disk cache, in fresh
    interpreters, the two ways in turn, a few games at a time."""
    data = write_games(root / "disk", [*measured, warm])  # warm: never measured
    names = [g.path for g in measured]
    cold: list[float] = []
    disk: list[float] = []
    for start in range(0, len(names), 4):  # alternate in blocks: drift falls on both
        block = names[start : start + 4]
        with tempfile.TemporaryDirectory() as cache:
            fresh = in_interpreter(Path(cache), first_resets, data, block, warm.path)
            kept = in_interpreter(Path(cache), first_resets, data, block, warm.path)
        for game, (a, b) in zip(block, zip(fresh, kept, strict=True), strict=True):
            if a[1:] != b[1:]:
                raise AssertionError(f"{game}: the disk-cached reset shows another game")
            cold.append(a[0])
            disk.append(b[0])
    a, b = 1000 * statistics.fmean(cold), 1000 * statistics.fmean(disk)
    median = statistics.median(cold) / statistics.median(disk)
    print(f"disk cache of groundings, first reset in a fresh interpreter, {len(cold)} games:")
    print(f"  grounded (empty cache) {a:8.1f} ms   read back {b:7.1f} ms   ratio {a / b:5.1f}x")
    print(f"  median ratio {median:.1f}x; both reach the same observation and commands")


@contextlib.contextmanager
def traced() -> Iterator[list[int]]:
    """Bytes still allocated at the end of the block that were allocated in it."""
    held: list[int] = []
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    try:
        yield held
    finally:
        held.append(tracemalloc.get_traced_memory()[0] - before)
        tracemalloc.stop()


def cache_memory(games: list[GeneratedGame]) -> str:
    """Per game held by the engine's caches, measured on games not seen yet."""
    play: engine.AlfredEngine | None = engine.AlfredEngine()
    with traced() as held:
        for game in games:
            assert play is not None
            play.load(game.game)
            play.reset()
            for command in game.walkthrough:
                play.step(command)
        play = None  # the last game's live state is not cache
    per_game = held[0] / len(games)
    bound = engine.TRANSLATION_CACHE_SIZE
    return (
        f"cache memory: {per_game / 2**20:.2f} MiB per game (translation, grammar, "
        f"command texts; {len(games)} games), {per_game * bound / 2**20:.0f} MiB "
        f"at the bound of {bound} games"
    )


def report_rooms() -> None:
    games = generated_split("test", "move")
    fig = stats.figures(
        (str(g.game["pddl_problem"]), str(g.traj_data["pddl_params"]["object_target"]))
        for g in games
    )
    print(f"rooms of the generated test split ({fig.games} games, {fig.views} searcher views):")
    print("\n".join(stats.report(fig, rules.settings()["official_figures"])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=36, help="games generated (6 task types)")
    parser.add_argument("--rounds", type=int, default=2, help="harness runs per concurrency")
    parser.add_argument("--quick", action="store_true", help="12 games, one harness round")
    parser.add_argument("--rooms", action="store_true", help="only the rooms' figures")
    args = parser.parse_args()
    report_rooms()
    if args.rooms:
        return
    n = 12 if args.quick else args.games
    rounds = 1 if args.quick else args.rounds
    if not 1 <= n <= engine.TRANSLATION_CACHE_SIZE - 8:
        parser.error(f"--games: 1 to {engine.TRANSLATION_CACHE_SIZE - 8} (all must stay cached)")
    games = generate_games(n + 1 + 4, seed=2026, label="bench")
    measured, warm, fresh = games[:n], games[n], games[n + 1 :]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # never the user's
        warm_up(Path(tmp) / "warm", warm)
        memory = cache_memory(fresh)
        data = write_games(Path(tmp) / "data", measured)
        bench = SideBySide(data, {g.path: g.walkthrough for g in measured})
        bench.play_pass("cold")
        bench.play_pass("repeat")
        print(f"{n} generated games, {SPLIT} layout; both envs end every game won")
        report_env(bench)
        report_harness(data, n, rounds)
        print(memory)
        report_disk_cache(Path(tmp), measured, warm)


if __name__ == "__main__":
    main()
