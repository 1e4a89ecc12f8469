"""make("miniwob"): the TextEnv contract over real MiniWoB++ pages in headless Chromium."""

from __future__ import annotations

import pickle
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lorekit.envs import check_env, make
from lorekit.envs.miniwob import BrowserPool, MiniWoBEnv, parse_action, resolve_tasks, task_lists
from lorekit.envs.miniwob.actions import ActionSyntaxError
from lorekit.envs.miniwob.page import clean_html


@pytest.fixture(scope="module")
def pool() -> Iterator[BrowserPool]:
    with BrowserPool(1) as shared:
        yield shared


def _env(pool: BrowserPool, tasks: str = "click-button,enter-text", **kwargs: object) -> MiniWoBEnv:
    return MiniWoBEnv(tasks, pool=pool, episodes_per_task=3, **kwargs)  # type: ignore[arg-type]


def test_task_lists_and_splits() -> None:
    lists = task_lists()
    assert len(lists["automanual-53"]) == 53 and len(set(lists["automanual-53"])) == 53
    assert set(lists["feedback-9"]) <= set(lists["automanual-53"])
    assert set(lists["automanual-53"]) <= set(lists["all"])
    assert resolve_tasks("click-button, enter-text") == ("click-button", "enter-text")
    with pytest.raises(ValueError, match="unknown MiniWoB task"):
        resolve_tasks("click-nothing")
    env = make("miniwob", tasks="feedback-9", episodes_per_task=2)
    test, dev = env.tasks("test"), env.tasks("dev")
    assert len(test) == 18 and {t.group for t in test} == set(lists["feedback-9"])
    assert not {t.id for t in test} & {t.id for t in dev}
    assert test == make("miniwob", tasks="feedback-9", episodes_per_task=2).tasks("test")
    assert test != make("miniwob", tasks="feedback-9", episodes_per_task=2, seed=1).tasks("test")
    assert pickle.loads(pickle.dumps(test[0])) == test[0]


def test_action_text_forms() -> None:
    assert (
        parse_action('click_xpath //button[text()="Submit"]').argument
        == '//button[text()="Submit"]'
    )
    assert parse_action("click_xpath('//a[@id=\"x\"]')").argument == '//a[@id="x"]'
    assert parse_action('type "two words"').argument == "two words"
    assert parse_action("type plain rest of line").argument == "plain rest of line"
    assert parse_action("press_key enter").verb == "press_key"
    for bad in ["", "jump", "click_xpath", "click_xpath   "]:
        with pytest.raises(ActionSyntaxError):
            parse_action(bad)


def test_clean_html_drops_bookkeeping_only() -> None:
    raw = (
        '<div id="wrap" data-wob_ref="2" data-wob_eps="e0">\n'
        '  <button data-wob_ref="3">Yes</button>\n</div>'
    )
    assert clean_html(raw) == '<div id="wrap"><button>Yes</button></div>'


def test_an_episode_is_solved_and_scored_by_the_page(pool: BrowserPool) -> None:
    env = _env(pool)
    task = env.tasks("test")[0]
    first = env.reset(task)
    assert first.text.startswith("Task: ") and '<div id="wrap">' in first.text
    assert "data-wob_ref" not in first.text
    target = re.search(r'Click on the "(.*?)" button', first.text)
    assert target is not None
    miss = env.step('click_xpath //button[text()="no such button"]')
    assert not miss.info["valid"] and not miss.done and "Failed" in miss.observation
    step = env.step(f'click_xpath //button[text()="{target.group(1)}"]')
    assert step.done and step.reward == 1.0 and step.info["success"]
    assert step.info["success_strict"] and step.info["success_partial"]
    assert step.info["raw_reward"] == 1.0
    after = env.step("press_key enter")
    assert after.done and not after.info["valid"] and "over" in after.observation
    env.close()


def test_bad_input_gives_observations_never_exceptions(pool: BrowserPool) -> None:
    env = _env(pool)
    env.reset(env.tasks("test")[4])
    for action in [
        "",
        "jump around",
        "click_xpath ///[[",
        "press_key hyperspace",
        "type " + "x" * 600,
        "\x00",
    ]:
        step = env.step(action)
        assert step.info["valid"] is False and not step.done, action
        assert step.observation.strip()
    assert env.step('type "hello"').info["valid"]
    env.close()


@pytest.mark.parametrize("page", ["click-button", "login-user"])
def test_env_checker_passes(pool: BrowserPool, page: str) -> None:
    """login-user: a reused page keeps its typed-in fields; the same seed must still
    read the same (MiniWoB's per-episode bookkeeping is cleared and cleaned)."""
    env = _env(pool, tasks=page)
    check_env(env, episodes=2, max_actions=6)
    env.close()


def test_raw_html_and_the_page_time_limit(pool: BrowserPool) -> None:
    raw = _env(pool, html="raw")
    raw_text = raw.reset(raw.tasks("test")[0]).text
    raw.close()
    clean = _env(pool)
    clean_text = clean.reset(clean.tasks("test")[0]).text
    clean.close()
    assert ">\n  <" in raw_text and ">\n  <" not in clean_text
    assert re.sub(r">\s+<", "><", raw_text) == clean_text
    # The default limit is long enough for any model; a short one ends the episode.
    short = _env(pool, page_time_ms=1000)
    short.reset(short.tasks("test")[0])
    time.sleep(1.3)
    step = short.step("press_key space")
    assert step.done and not step.info["success"] and step.info["reward"] < 0
    short.close()


def test_step_cap_and_partial_credit_rule(pool: BrowserPool) -> None:
    env = _env(pool, max_steps=2)
    env.reset(env.tasks("test")[0])
    env.step("press_key space")
    step = env.step("press_key space")
    assert step.done and step.info["truncated"] and not step.info["success"]
    env.close()
    with pytest.raises(ValueError, match="success"):
        make("miniwob", success="generous")
    with pytest.raises(ValueError, match="page_time_ms"):
        make("miniwob", page_time_ms=10)


def test_more_episodes_at_once_than_browsers_do_not_starve(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An agent that stops before the page ends the episode must not keep its
    browser: the harness ends every episode, and the env gives the lease back."""
    from _cli import run_cli

    args = ["run", "miniwob", "--agent", "random", "--agent-opt", "max_steps=2"]
    args += ["--env-opt", "tasks=click-button", "--env-opt", "episodes_per_task=6"]
    args += ["--env-opt", "pool_size=1", "-j", "4", "--timeout", "20"]
    code, out, err = run_cli([*args, "--store", str(tmp_path / "runs.db")], capsys)
    assert code == 0, err
    assert re.search(r"click-button\s+6\s", out)
