"""The MiniWoB++ scripted solvers, through the env, in a real headless Chromium.

Every test shares one pool (the process-wide one, which the CLI run uses
too) and the module closes it at the end, so no browser outlives the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import run_cli

from lorekit.envs.miniwob.actions import parse_action
from lorekit.envs.miniwob.env import MiniWoBEnv, task_lists
from lorekit.envs.miniwob.pool import BrowserPool, shared_pool
from lorekit.envs.miniwob.solvers import SOLVERS

SEEDS_PER_TASK = 4


@pytest.fixture(scope="module")
def pool() -> Iterator[BrowserPool]:
    shared = shared_pool(2)
    yield shared
    shared.close()


@pytest.fixture
def env(pool: BrowserPool) -> Iterator[MiniWoBEnv]:
    made = MiniWoBEnv("solvers", episodes_per_task=SEEDS_PER_TASK, pool=pool)
    yield made
    made.close()


def play(env: MiniWoBEnv, limit: int = 20) -> tuple[list[str], dict[str, object]]:
    """Follow the expert to the end of the episode: (actions, final info)."""
    actions: list[str] = []
    for _ in range(limit):
        action = env.expert_action()
        assert action is not None, f"the expert gave up after {actions}"
        actions.append(action)
        step = env.step(action)
        assert step.info["valid"], (action, step.observation[:300])
        if step.done:
            return actions, step.info
    raise AssertionError(f"no end after {limit} expert actions: {actions}")


def test_the_solvers_task_list_names_every_solver() -> None:
    assert sorted(task_lists()["solvers"]) == sorted(SOLVERS)
    required = {"click-button", "click-checkboxes", "enter-text", "login-user", "click-link"}
    assert required | {"focus-text", "search-engine", "login-user-popup"} <= set(SOLVERS)


@pytest.mark.parametrize("page", sorted(SOLVERS))
def test_each_solver_wins_every_seed(env: MiniWoBEnv, page: str) -> None:
    tasks = [t for t in env.tasks() if t.group == page]
    assert len(tasks) == SEEDS_PER_TASK
    for task in tasks:
        env.reset(task)
        actions, info = play(env)
        assert info["raw_reward"] == 1.0 and info["success_strict"], (task.id, actions)
        assert env.expert_action() is None  # the episode is over


def test_a_field_typed_wrong_with_the_caret_at_its_start_is_repaired(env: MiniWoBEnv) -> None:
    env.reset("enter-text#3")
    for action in ('click_xpath //*[@id="tt"]', 'type "xyz"', "press_key home"):
        assert not env.step(action).done
    actions, info = play(env)
    assert actions[:2] == ["press_key end", "press_key backspace"]
    assert info["raw_reward"] == 1.0


def test_wrongly_ticked_boxes_are_unticked(env: MiniWoBEnv) -> None:
    first = env.reset("click-checkboxes#5")
    boxes = first.text.count('type="checkbox"')
    for i in range(boxes):
        env.step(f'click_xpath //*[@id="ch{i}"]')
    actions, info = play(env)
    assert info["raw_reward"] == 1.0
    assert len(actions) > 1  # some boxes had to be unticked before Submit


def test_a_wrong_search_and_a_wrong_page_are_corrected(env: MiniWoBEnv) -> None:
    """Searching the wrong name gives fake results (index -1): the expert
    retypes the name and searches again. The result asked for is on page 2;
    from page 3 the expert pages back to it."""
    seed = next(s for s in range(50) if _nth(env.reset(f"search-engine#{s}").text) in (4, 5, 6))
    name = env.reset(f"search-engine#{seed}").text.split('"')[1]
    env.step('click_xpath //*[@id="search-text"]')
    env.step('type "Nobody"')
    step = env.step('click_xpath //*[@id="search"]')
    assert 'data-result="-1"' in step.observation
    actions, info = play(env)
    assert info["raw_reward"] == 1.0
    assert "press_key backspace" in actions and 'click_xpath //*[@id="search"]' in actions
    assert any("pagination" in a for a in actions)

    env.reset(f"search-engine#{seed}")
    for action in ('click_xpath //*[@id="search-text"]', f'type "{name}"'):
        env.step(action)
    env.step('click_xpath //*[@id="search"]')
    step = env.step('click_xpath //*[@id="pagination"]//a[text()="3"]')
    assert 'data-result="6"' in step.observation
    actions, info = play(env)
    assert info["raw_reward"] == 1.0 and len(actions) == 2 and "pagination" in actions[0]


def _nth(observation: str) -> int:
    return int(observation.split("click the ", 1)[1].split(" ", 1)[0][:-2])


def test_the_popup_is_dismissed_with_cancel(env: MiniWoBEnv) -> None:
    """On these login-user-popup seeds a popup comes up when a field gets
    focus; the expert cancels it (OK would fail the episode) and logs in."""
    for seed in (1, 2):
        env.reset(f"login-user-popup#{seed}")
        actions, info = play(env)
        assert info["raw_reward"] == 1.0, (seed, actions)
        assert 'click_xpath //*[@id="popup-cancel"]' in actions


def test_a_wrong_email_is_closed_and_the_right_one_handled(env: MiniWoBEnv) -> None:
    for seed in (0, 1, 2):
        obs = env.reset(f"email-inbox#{seed}")
        name = obs.text.split("Find the email by ", 1)[1].split(" and ", 1)[0]
        senders = re.findall(r'<div class="email-sender">([^<]*)</div>', obs.text)
        wrong = next(i for i, s in enumerate(senders, 1) if s != name)
        env.step(f'click_xpath //*[@id="main"]/div[@class="email-thread"][{wrong}]')
        actions, info = play(env)
        assert actions[0] == 'click_xpath //*[@id="close-email"]'
        assert info["raw_reward"] == 1.0, (seed, actions)


def test_a_covered_button_is_pressed_from_the_keyboard(env: MiniWoBEnv) -> None:
    """On this click-test-2 seed TWO lies over ONE's centre, so a click on
    ONE would hit TWO: the expert tabs onto ONE and presses Enter."""
    env.reset("click-test-2#594965")
    actions, info = play(env)
    assert actions[-1] == "press_key enter" and info["raw_reward"] == 1.0
    step = env.reset("click-test-2#594965")
    assert "ONE" in step.text
    failed = env.step('click_xpath //button[text()="ONE"]')
    assert not failed.info["valid"] and "intercepted" in failed.observation


def test_no_expert_without_a_solver_or_an_episode(pool: BrowserPool) -> None:
    env = MiniWoBEnv("tic-tac-toe", episodes_per_task=1, pool=pool)
    try:
        assert env.expert_action() is None and env.candidate_actions() == []
        env.reset(env.tasks()[0])
        assert "tic-tac-toe" not in SOLVERS and env.expert_action() is None
        options = env.candidate_actions()
        assert options and all(parse_action(o) for o in options)
    finally:
        env.close()


def test_candidates_include_the_winning_click(env: MiniWoBEnv) -> None:
    env.reset("click-button#9")
    expert = env.expert_action()
    options = env.candidate_actions()
    assert expert in options and "press_key enter" in options
    assert all(parse_action(o) for o in options)
    assert sum(o.startswith("click_xpath") for o in options) >= 2


@pytest.mark.slow
def test_the_oracle_through_the_cli(
    pool: BrowserPool, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = str(tmp_path / "runs.db")
    args = ["run", "miniwob", "--agent", "oracle", "--env-opt", "tasks=solvers"]
    args += ["--env-opt", "episodes_per_task=2", "-j", "2", "--store", store]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    total = next(line.split() for line in out.splitlines() if line.strip().startswith("all "))
    assert total[1] == str(2 * len(SOLVERS)) and total[2] == "100.0%", out
