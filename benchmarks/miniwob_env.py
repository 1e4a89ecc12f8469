"""MiniWoB++ env speed: a pool of reused browsers beside a new browser per episode.

Claim (issue 13): with :class:`~lorekit.envs.miniwob.BrowserPool`, an episode
costs a page reset and its actions (tens of milliseconds each), not a
Chromium start (about a second or more); so ``make("miniwob")`` plays at
least 5x the episodes per second of starting a new browser for every
episode, as AutoManual's runs do (a new gym env, so a new Chrome, per task).

The policy is fixed and scripted, on pages where it is trivial, so the
browser is all that is measured: click-button, click-test, enter-text,
focus-text, click-link (an inline policy: the scripted solvers live in
``lorekit/envs/miniwob/solvers.py`` where that exists; this script does not
need them). Every episode must end in success, else the script stops.

For each concurrency ``k`` in 1, 2, 4 (``k`` threads, each with its own
``MiniWoBEnv``), in one run:

- pooled: one ``BrowserPool(k)``, warmed (its browsers started and one
  episode played on each) before the clock starts, as in a long run where
  the start is paid once;
- new browser per episode: each episode gets a ``BrowserPool(1)`` of its
  own, closed after it (start, episode, quit: all timed).

Ratios are pooled over new-browser episodes per second at the same ``k``.
Memory per browser is the resident memory of its whole process tree
(chromedriver, Chromium and its helpers) from /proc after its pages ran:
RSS counts pages shared between the processes once per process, PSS divides
them (the honest sum). Timings on a shared machine are noisy: read the
ratios.

    python benchmarks/miniwob_env.py [--episodes 40] [--fresh-episodes 8] [--quick]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import re
import statistics
import time
from pathlib import Path

from lorekit.envs.base import Task
from lorekit.envs.miniwob import Browser, BrowserPool, MiniWoBEnv
from lorekit.envs.miniwob.code_api import split_page

PAGES = ("click-button", "click-test", "enter-text", "focus-text", "click-link")
LEVELS = (1, 2, 4)
clock = time.perf_counter


def plan(page: str, observation: str) -> list[str]:
    """The whole episode's actions, read off the first observation."""
    head, _ = split_page(observation)
    quoted = re.search(r'"(.*)"', head)
    word = quoted.group(1) if quoted else ""
    if page == "click-button":
        return [f"click_xpath //button[normalize-space()='{word}']"]
    if page == "click-test":
        return ["click_xpath //button[@id='subbtn']"]
    if page == "enter-text":
        return ["click_xpath //input[@id='tt']", f"type {word!r}", "click_xpath //*[@id='subbtn']"]
    if page == "focus-text":
        return ["click_xpath //input[@id='tt']"]
    if page == "click-link":
        return [f"click_xpath //span[@class='alink' and normalize-space()='{word}']"]
    raise ValueError(f"no policy for {page}")


def play(env: MiniWoBEnv, task: Task) -> None:
    first = env.reset(task)
    step = None
    for action in plan(task.goal, first.text):
        step = env.step(action)
    if step is None or not (step.done and step.info.get("success")):
        shown = step.observation[:200] if step else first.text[:200]
        raise AssertionError(f"{task.id}: the scripted policy did not succeed: {shown}")


def tasks(n: int, seed: int) -> list[Task]:
    """``n`` episodes, the pages in turn."""
    per_page = -(-n // len(PAGES))
    lister = BrowserPool(1)  # lists tasks only: a pool starts no browser before a lease
    env = MiniWoBEnv(",".join(PAGES), episodes_per_task=per_page, seed=seed, pool=lister)
    by_page = [env.tasks()[i * per_page : (i + 1) * per_page] for i in range(len(PAGES))]
    return [by_page[i % len(PAGES)][i // len(PAGES)] for i in range(n)]


def split(items: list[Task], k: int) -> list[list[Task]]:
    return [items[i::k] for i in range(k)]


def pooled(k: int, episodes: list[Task], warm: list[Task]) -> tuple[float, list[Memory], set[int]]:
    """Episodes per second on one warmed pool of ``k``; the memory of each of
    its browsers after its episodes; every process id they had."""
    started: list[Browser] = []

    def start() -> Browser:
        browser = Browser()
        started.append(browser)
        return browser

    pool = BrowserPool(k, factory=start)

    def run(chunk: list[Task]) -> None:
        env = MiniWoBEnv(",".join(PAGES), pool=pool)
        try:
            for task in chunk:
                play(env, task)
        finally:
            env.close()

    try:
        with cf.ThreadPoolExecutor(k) as workers:
            list(workers.map(run, split(warm, k)))  # start every browser, load pages
            if len(started) != k:
                raise AssertionError(f"warm-up started {len(started)} browsers, not {k}")
            begin = clock()
            list(workers.map(run, split(episodes, k)))
            wall = clock() - begin
        if pool.started != k:
            raise AssertionError(f"the pool of {k} started {pool.started} browsers")
        pids = {pid for browser in started for pid in browser.process_ids()}
        return len(episodes) / wall, [memory_mib(b) for b in started], pids
    finally:
        pool.close()


def fresh(k: int, episodes: list[Task]) -> float:
    """Episodes per second with a new browser for every episode, ``k`` at a time."""

    def run(chunk: list[Task]) -> None:
        for task in chunk:
            pool = BrowserPool(1)
            env = MiniWoBEnv(",".join(PAGES), pool=pool)
            try:
                play(env, task)
            finally:
                env.close()
                pool.close()

    begin = clock()
    with cf.ThreadPoolExecutor(k) as workers:
        list(workers.map(run, split(episodes, k)))
    return len(episodes) / (clock() - begin)


Memory = tuple[float, float, int]


def memory_mib(browser: Browser) -> Memory:
    """RSS and PSS of the browser's process tree (MiB), and its process count."""
    rss = pss = 0
    pids = browser.process_ids()
    for pid in pids:
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in rollup.splitlines():
            name, _, value = line.partition(":")
            if name == "Rss":
                rss += int(value.split()[0])
            elif name == "Pss":
                pss += int(value.split()[0])
    return rss / 1024, pss / 1024, len(pids)


def chromium_left(pids: set[int]) -> list[int]:
    left = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            left.append(pid)
    return left


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40, help="pooled episodes per level")
    parser.add_argument(
        "--fresh-episodes", type=int, default=8, help="new-browser episodes per level"
    )
    parser.add_argument("--quick", action="store_true", help="12 pooled, 4 new-browser episodes")
    args = parser.parse_args()
    n_pooled = 12 if args.quick else args.episodes
    n_fresh = 4 if args.quick else args.fresh_episodes
    if n_pooled < max(LEVELS) or n_fresh < max(LEVELS):
        parser.error(f"--episodes and --fresh-episodes: at least {max(LEVELS)}")
    print(
        f"MiniWoB++ pages {', '.join(PAGES)}; scripted policy (all episodes succeed); "
        f"{os.cpu_count()} cores"
    )
    print(
        f"{'':14}{'pooled':>16}{'new browser':>20}{'ratio':>9}   (episodes/s; wall ms per episode)"
    )
    pids: set[int] = set()
    ratios = []
    memory: list[Memory] = []
    for k in LEVELS:
        rate, used, started = pooled(k, tasks(n_pooled, seed=k), tasks(k, seed=100 + k))
        memory += used
        pids |= started
        new_rate = fresh(k, tasks(n_fresh, seed=50 + k))
        ratios.append(rate / new_rate)
        print(
            f"concurrency {k}:{rate:8.2f} ({1000 / rate:5.0f} ms){new_rate:9.2f} "
            f"({1000 / new_rate:5.0f} ms){rate / new_rate:8.1f}x"
        )
    print(
        f"pooled vs new browser per episode: {min(ratios):.1f}x to {max(ratios):.1f}x "
        f"(goal >= 5x); {n_pooled} pooled and {n_fresh} new-browser episodes per level"
    )
    rss = statistics.median(m[0] for m in memory)
    pss = statistics.median(m[1] for m in memory)
    procs = statistics.median(m[2] for m in memory)
    print(
        f"memory per browser (median of {len(memory)}, after its episodes): RSS {rss:.0f} MiB, "
        f"PSS {pss:.0f} MiB over {procs:.0f} processes (chromedriver, Chromium and helpers)"
    )
    time.sleep(1.0)
    left = chromium_left(pids)
    print(f"browser processes left running: {len(left)}")


if __name__ == "__main__":
    main()
