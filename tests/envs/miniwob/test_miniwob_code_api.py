"""The MiniWoB++ code API: planner-style code solving real pages in Chromium through the sandbox."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from _mw_browsers import NEEDS_CHROMIUM, TrackedPool

from lorekit.envs.miniwob import MiniWoBCodeApi, MiniWoBEnv
from lorekit.envs.miniwob.code_api import split_page
from lorekit.sandbox import ApiCallRejected, Limits, WorkerPool, run_code

pytestmark = NEEDS_CHROMIUM
ISOLATION = "required" if os.environ.get("CI") else "auto"
LIMITS = Limits(wall_s=30.0, cpu_s=10.0, grace_s=1.0)

#: AutoManual-style code for click-button: read the task, click the button it names.
CLICK_BUTTON = r"""
import re
label = re.search(r'"(.*)"', agent.utterance()).group(1)
assert f">{label}</button>" in agent.html()
html = agent.click_xpath(f"//button[normalize-space()='{label}']")
print(agent.done(), agent.success())
"""

#: AutoManual's own enter-text example (its Listing 10), with the word taken from the task.
ENTER_TEXT = r"""
import re
word = re.search(r'"(.*)"', agent.utterance()).group(1)
agent.click_xpath("//input[@id='tt']")
agent.type(word)
print(agent.click_xpath("//button[@id='subbtn']"))
print(agent.done(), agent.success())
"""


@pytest.fixture(scope="module")
def browsers() -> Iterator[TrackedPool]:
    pool = TrackedPool(1)
    try:
        yield pool
    finally:
        pool.close_and_check()


@pytest.fixture(scope="module")
def sandbox() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, isolation=ISOLATION) as shared:
        yield shared


def started(pool: TrackedPool, page: str, episode: int = 0) -> MiniWoBEnv:
    env = MiniWoBEnv(page, pool=pool, episodes_per_task=2)
    env.reset(env.tasks()[episode])
    return env


@pytest.mark.parametrize(
    ("page", "code"), [("click-button", CLICK_BUTTON), ("enter-text", ENTER_TEXT)]
)
def test_planner_code_solves_the_page(
    browsers: TrackedPool, sandbox: WorkerPool, page: str, code: str
) -> None:
    env = started(browsers, page)
    try:
        api = MiniWoBCodeApi(env)
        result = run_code(code, api, api_name="agent", pool=sandbox, limits=LIMITS)
        assert result.ok, result.feedback()
        final = api.history[-1].step
        assert final.done and final.info["success"] is True and final.info["raw_reward"] == 1.0
        assert result.output.splitlines()[-1] == "True True"
        # Every action went to the env as one step, in its text form.
        assert [e.step.info["steps"] for e in api.history] == list(range(1, len(api.history) + 1))
        assert all(e.ok for e in api.history)
        log = api.feedback().splitlines()
        assert log[-1].startswith("The epoch is done. Succeed: True")
        assert all("Action done." in line for line in log[:-1])
        # The last action ended the episode: there is no page, so it returns the env's verdict.
        if page == "enter-text":
            assert "you succeeded" in result.output and "<div" not in result.output
            word = api.utterance().split('"')[1]
            assert log[1] == f"obs_2: Act: agent.type({word!r}). Obs: Action done."
        # The page is gone; html() gives the page as last shown.
        assert api.html().startswith('<div id="wrap">') and api.done()
        # After the episode an action is logged as failed; the code is not stopped.
        after = run_code(
            "print(agent.press_key('enter'))", api, api_name="agent", pool=sandbox, limits=LIMITS
        )
        assert after.ok and "episode is over" in after.output
        assert api.history[-1].ok is False
    finally:
        env.close()


def test_actions_return_the_page_and_bad_xpaths_are_logged_not_raised(
    browsers: TrackedPool, sandbox: WorkerPool
) -> None:
    env = started(browsers, "enter-text", episode=1)
    try:
        api = MiniWoBCodeApi(env)
        code = (
            "first = agent.html()\n"
            "a = agent.click_xpath('//button[@id=\"no-such-button\"]')\n"
            "b = agent.click_xpath('//input[')\n"
            "c = agent.press_key('no-such-key')\n"
            "d = agent.click_xpath(\"//input[@id='tt']\")\n"
            "e = agent.type('hello')\n"
            "print(first == a == b == c, '<div id=\"wrap\">' in a, agent.done())\n"
        )
        result = run_code(code, api, api_name="agent", pool=sandbox, limits=LIMITS)
        assert result.ok, result.feedback()
        lines = result.output.splitlines()
        assert lines[0] == "True True False"
        assert [e.ok for e in api.history] == [False, False, False, True, True]
        log = api.feedback().splitlines()
        assert len(log) == 5  # no result line: the episode goes on
        assert log[0].startswith(
            "obs_1: Act: agent.click_xpath('//button[@id=\"no-such-button\"]'). Obs: Action failed:"
        )
        assert "no element matches" in log[0]
        assert "Action failed" in log[1] and "unknown key" in log[2]
        assert log[3].endswith("Action done.") and log[4].endswith("Action done.")
        # The failed steps count against the env's step limit like any other action.
        assert api.history[-1].step.info["steps"] == 5
        assert split_page(api.history[-1].step.observation)[1] == api.html()
    finally:
        env.close()


def test_the_gate_rejects_wrong_argument_types(browsers: TrackedPool, sandbox: WorkerPool) -> None:
    env = started(browsers, "click-button", episode=1)
    try:
        api = MiniWoBCodeApi(env)
        for call in ("agent.click_xpath(3)", "agent.type(['a'])", "agent.press_key(None)"):
            result = run_code(call, api, api_name="agent", pool=sandbox, limits=LIMITS)
            assert isinstance(result.error, ApiCallRejected), call
            assert "must be str" in result.error.message
        assert api.history == []  # nothing reached the env
        hidden = run_code(
            "agent.html()",
            api,
            api_name="agent",
            api_methods=MiniWoBCodeApi.ACTIONS,
            pool=sandbox,
            limits=LIMITS,
        )
        assert hidden.error is not None and "no method 'html'" in hidden.error.message
    finally:
        env.close()


async def test_code_drives_the_harness_thread_env(
    browsers: TrackedPool, sandbox: WorkerPool
) -> None:
    from lorekit.envs import open_env
    from lorekit.sandbox import run_code_async

    handle = await open_env(lambda: MiniWoBEnv("click-button", pool=browsers))
    try:
        assert handle.execution == "thread"
        await handle.reset("click-button#5")
        api = MiniWoBCodeApi(handle)
        result = await run_code_async(
            CLICK_BUTTON, api, api_name="agent", pool=sandbox, limits=LIMITS
        )
        assert result.ok, result.feedback()
        assert result.output.strip() == "True True"
        assert api.history[-1].step.info["success"] is True
    finally:
        handle.close()


def test_the_api_needs_a_miniwob_env() -> None:
    from lorekit.envs.textcraft import TextCraftEnv

    with pytest.raises(TypeError, match="needs a MiniWoBEnv"):
        MiniWoBCodeApi(TextCraftEnv())  # type: ignore[arg-type]
