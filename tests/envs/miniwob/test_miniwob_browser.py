"""The browser and the pool, through a real headless Chromium: hung calls,
browsers killed from outside, bounded reuse under threads, and no Chromium
left behind by close(), kill_all(), SIGTERM, Ctrl-C or even SIGKILL."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lorekit.envs.miniwob import BrowserMissing, MiniWoBEnv, find_browser
from lorekit.envs.miniwob.browser import Browser, BrowserCrashed, kill_all, live_browsers
from lorekit.envs.miniwob.pool import BrowserPool, PoolClosed, PoolStarved

try:
    find_browser()
except BrowserMissing as missing:
    pytestmark = pytest.mark.skip(reason=str(missing))

Left = Callable[..., list[int]]
REPO = Path(__file__).resolve().parents[3]


def recording_pool(
    size: int, *, call_timeout: float = 10.0, max_uses: int | None = None
) -> tuple[BrowserPool, list[Browser]]:
    """A pool whose factory keeps every browser it made, in order."""
    made: list[Browser] = []

    def factory() -> Browser:
        made.append(Browser(call_timeout=call_timeout))
        return made[-1]

    return BrowserPool(size, factory=factory, max_uses=max_uses), made


def one_plus_one(browser: Browser) -> int:
    return int(browser.call(lambda d: d.execute_script("return 1 + 1;")))


def test_hung_call_is_killed_at_its_deadline_and_the_pool_starts_a_fresh_browser(
    chromium_left: Left,
) -> None:
    pool, made = recording_pool(1)
    with pool:
        first = pool.acquire()
        pids = first.process_ids()
        started = time.monotonic()
        with pytest.raises(BrowserCrashed, match="more than 1 s"):
            first.call(lambda d: d.execute_script("while (true) {}"), timeout=1.0)
        assert time.monotonic() - started < 10.0  # the loop never ends: only the kill stops it
        assert not first.alive
        with pytest.raises(BrowserCrashed, match="killed earlier"):
            one_plus_one(first)
        pool.release(first)
        assert pool.replaced == 1
        assert not [p for p in pids if _running(p)]

        second = pool.acquire(timeout=30)
        assert second is not first and second is made[1]
        assert one_plus_one(second) == 2
        pool.release(second)
        assert pool.started == 2
    assert chromium_left() == []


def test_browser_killed_from_outside_mid_lease_is_detected_and_replaced() -> None:
    pool, made = recording_pool(1)
    with pool:
        with pytest.raises(BrowserCrashed, match="died"), pool.lease() as browser:
            assert one_plus_one(browser) == 2
            assert browser.chromium_pid is not None
            os.kill(browser.chromium_pid, signal.SIGKILL)
            _wait(lambda: not browser.alive)
            # a dead browser is an env error, never a failed action
            browser.call(lambda d: d.find_elements("xpath", "//button"))
        assert pool.replaced == 1 and pool.live == 0
        with pool.lease() as fresh:
            assert fresh is made[1] and one_plus_one(fresh) == 2


def test_idle_browser_killed_from_outside_is_replaced_at_the_next_lease() -> None:
    pool, _ = recording_pool(1)
    with pool:
        with pool.lease() as browser:
            one_plus_one(browser)
        os.killpg(browser.process_ids()[0], signal.SIGKILL)  # chromedriver's whole group
        _wait(lambda: not browser.alive)
        with pool.lease() as fresh:
            assert fresh is not browser and one_plus_one(fresh) == 2
        assert (pool.started, pool.replaced) == (2, 1)


def test_pool_never_exceeds_its_size_under_threads_and_reuses_browsers() -> None:
    pool, made = recording_pool(2)
    in_use: set[int] = set()
    peak = 0
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker() -> None:
        nonlocal peak
        try:
            for _ in range(3):
                with pool.lease(timeout=60) as browser:
                    with lock:
                        assert id(browser) not in in_use, "one browser leased twice"
                        in_use.add(id(browser))
                        peak = max(peak, len(in_use), pool.live)
                    assert one_plus_one(browser) == 2
                    time.sleep(0.02)
                    with lock:
                        in_use.discard(id(browser))
        except BaseException as error:  # surfaced below
            errors.append(error)

    with pool:
        threads = [threading.Thread(target=worker) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not errors, errors
        assert peak == 2
        assert pool.started == len(made) == 2  # 18 leases, two starts
        assert sum(b.calls for b in made) == 2 * 18  # per lease: our call and the reset
        pool.starved_warn_s = 0.1
        with (
            pytest.warns(PoolStarved, match="all 2 are leased"),
            pytest.raises(TimeoutError),
            pool.lease(),
            pool.lease(),
            pool.lease(timeout=0.5),
        ):
            pass
    with pytest.raises(PoolClosed):
        pool.acquire()


def test_a_returned_browser_is_reset_and_retired_after_max_uses() -> None:
    pool, made = recording_pool(1, max_uses=2)
    with pool:
        with pool.lease() as browser:
            browser.call(lambda d: d.execute_script("window.open('about:blank');"))
            assert browser.call(lambda d: len(d.window_handles)) == 2
            assert browser.memory_bytes() > 10 * 2**20
        with pool.lease() as again:
            assert again is browser  # reused, with its extra window closed
            assert again.call(lambda d: len(d.window_handles)) == 1
        assert not browser.alive and pool.retired == 1  # two leases: quit
        with pool.lease() as fresh:
            assert fresh is made[1] and one_plus_one(fresh) == 2
        assert (pool.started, pool.replaced) == (2, 0)


def test_close_and_kill_all_leave_no_chromium(chromium_left: Left) -> None:
    pool, made = recording_pool(2)
    held = pool.acquire()
    with pool.lease():
        pass
    assert len(made) == 2
    profiles = [b.profile for b in made]
    pool.close()  # one idle, one still leased: both go
    assert not held.alive
    with pytest.raises(BrowserCrashed):
        one_plus_one(held)
    pool.release(held)  # late release after close: harmless
    assert chromium_left() == []
    assert not any(Path(p).exists() for p in profiles)

    loose = [Browser()]
    assert live_browsers() >= 1 and all(b.alive for b in loose)
    kill_all()
    assert live_browsers() == 0 and not any(b.alive for b in loose)
    assert chromium_left() == []


CHILD = """
import concurrent.futures, sys, time
from lorekit.envs.miniwob.browser import Browser
from lorekit.envs.miniwob.pool import BrowserPool

pool = BrowserPool(2)
browsers = [pool.acquire(), pool.acquire()]
hung = None
if sys.argv[1] == "hang":
    # a non-daemon executor thread stuck in a browser call, as an event loop's would be
    executor = concurrent.futures.ThreadPoolExecutor(1)
    script = "while (true) {}"
    hung = executor.submit(browsers[0].call, lambda d: d.execute_script(script), 300)
print("ready", flush=True)
time.sleep(120)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "signum", "returncodes"),
    [
        ("idle", signal.SIGTERM, {-signal.SIGTERM}),
        ("hang", signal.SIGINT, {1, -signal.SIGINT}),
        ("idle", signal.SIGKILL, {-signal.SIGKILL}),
    ],
    ids=["sigterm", "ctrl-c-during-a-hung-call", "sigkill"],
)
def test_a_stopped_process_leaves_no_chromium(
    how: str,
    signum: int,
    returncodes: set[int],
    chromium_left: Left,
    browser_mark: tuple[str, str],
) -> None:
    variable, mark = browser_mark
    own_mark = f"{mark}-{how}-{signum}"
    env = {**os.environ, variable: own_mark}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(CHILD), how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # a suite started in the background (`pytest &`) ignores SIGINT, and a child
        # inherits that: give it Ctrl-C's default, as in a terminal
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready", child.stderr
        time.sleep(0.3)  # the hung call is under way
        assert chromium_left(own_mark, within=0) != []
        child.send_signal(signum)
        code = child.wait(timeout=20)  # a hung call must not hold up the exit
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert code in returncodes
    assert chromium_left(own_mark) == []


def test_missing_browser_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOREKIT_CHROMIUM", "/nonexistent/chromium")
    with pytest.raises(BrowserMissing) as caught:
        find_browser()
    message = str(caught.value)
    assert "\n" not in message
    assert "LOREKIT_CHROMIUM=/nonexistent/chromium" in message
    assert "apt-get install -y chromium chromium-driver" in message
    with pytest.raises(BrowserMissing):
        BrowserPool(1)  # fails when the env is made, not in every episode

    monkeypatch.delenv("LOREKIT_CHROMIUM")
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("LOREKIT_CHROMEDRIVER", raising=False)
    with pytest.raises(BrowserMissing, match=r"chromium not found.*chromedriver not found"):
        find_browser()


def test_cli_prints_a_missing_browser_as_one_line_with_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "LOREKIT_CHROMIUM": "/nonexistent/chromium"}
    proc = subprocess.run(
        [sys.executable, "-m", "lorekit.cli", "run", "miniwob", "--agent", "oracle",
         "--env-opt", "tasks=click-button", "-n", "1", "--store", str(tmp_path / "runs.db")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lorekit: error: ")
    assert "apt-get install -y chromium chromium-driver" in lines[0]


def test_env_episode_whose_browser_dies_raises_and_the_next_reset_gets_a_fresh_one() -> None:
    pool, made = recording_pool(1)
    env = MiniWoBEnv("click-button", episodes_per_task=2, pool=pool)
    try:
        first, second = env.tasks()
        assert "Task:" in env.reset(first).text
        assert len(made) == 1 and made[0].chromium_pid is not None
        os.kill(made[0].chromium_pid, signal.SIGKILL)
        _wait(lambda: not made[0].alive)
        with pytest.raises(BrowserCrashed):
            env.step("click_xpath //button")
        assert pool.live == 0 and pool.replaced == 1

        assert "Task:" in env.reset(second).text
        assert len(made) == 2 and made[1].alive
        step = env.step("click_xpath //button")
        assert step.info["valid"], step.observation
    finally:
        env.close()
        pool.close()


def test_an_env_dropped_without_close_gives_its_browser_back() -> None:
    """The harness drops (never closes) an env whose episode was cancelled
    mid-call; its lease must not hold the pool's only slot forever."""
    pool, made = recording_pool(1)
    with pool:
        env = MiniWoBEnv("click-button", episodes_per_task=2, pool=pool)
        first, second = env.tasks()
        env.reset(first)
        del env
        gc.collect()
        other = MiniWoBEnv("click-button", episodes_per_task=2, pool=pool)
        assert "Task:" in other.reset(second).text
        assert (pool.reclaimed, pool.started, len(made)) == (1, 1, 1)
        other.close()


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _wait(condition: Callable[[], bool], within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)
