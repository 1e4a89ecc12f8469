"""The AutoManual planner on a real MiniWoB++ page in Chromium, through the real sandbox."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("selenium", reason="the web extra is not installed")

from _planner_support import ISOLATION, LIMITS, ListRecorder, answer, skill

from lorekit.agents.automanual.core import Outcome
from lorekit.agents.automanual.planner import Planner
from lorekit.agents.automanual.planner_parse import parse_answer
from lorekit.agents.automanual.profiles import profile_for
from lorekit.agents.base import Episode
from lorekit.envs.miniwob import BrowserMissing, BrowserPool, MiniWoBEnv, find_browser
from lorekit.llm import ScriptedLLM
from lorekit.llm.roles import Roles
from lorekit.sandbox import WorkerPool

try:
    find_browser()
except BrowserMissing as missing:  # pragma: no cover - depends on the machine
    pytest.skip(f"MiniWoB++ needs a browser: {missing}", allow_module_level=True)

PROFILE = profile_for("miniwob")
EXAMPLE = PROFILE.example


@pytest.fixture(scope="module")
def browsers() -> Iterator[BrowserPool]:
    pool = BrowserPool(1)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def sandbox() -> Iterator[WorkerPool]:
    with WorkerPool(size=1, isolation=ISOLATION) as shared:
        yield shared


async def test_the_example_plays_out_on_the_real_page(
    browsers: BrowserPool, sandbox: WorkerPool
) -> None:
    env = MiniWoBEnv(EXAMPLE.task_type, pool=browsers, **PROFILE.env_options)
    recorder = ListRecorder()
    ep = await Episode.start(env, EXAMPLE.task_id, recorder)
    try:
        first, second = (turn.answer for turn in EXAMPLE.turns)
        llm = ScriptedLLM([first, second, skill(parse_answer(second).code)])
        planner = Planner(PROFILE, limits=LIMITS, pool=sandbox)
        planned = await planner.play(
            ep, Roles(llm), rules_text="", episode_id="mw-1", task_type=EXAMPLE.task_type
        )
    finally:
        await ep.env.end_episode()
        ep.env.close()
    t = ep.trajectory
    # Finished in the second turn: indirect, as the original counts it (error_step 1).
    assert t.success and planned.outcome is Outcome.INDIRECT_SUCCESS
    assert len(planned.turns) == 2 and [turn.actions for turn in planned.turns] == [3, 2]
    assert planned.goal.startswith('Use the textbox to enter "Tora"')
    # What the planner read after its first answer is what the example shows.
    assert planned.turns[0].feedback == EXAMPLE.turns[0].feedback
    assert llm.calls[1].last == "## Feedback\n" + EXAMPLE.turns[0].feedback
    assert "The episode is over: the task was accomplished." in planned.turns[1].feedback
    assert [s[0] for s in recorder.steps] == t.actions
    assert t.actions[1] == "type('Tora')"


async def test_failed_actions_and_the_page_are_reported(
    browsers: BrowserPool, sandbox: WorkerPool
) -> None:
    env = MiniWoBEnv("enter-text", pool=browsers, **PROFILE.env_options)
    ep = await Episode.start(env, "enter-text#3")
    code_1 = """
agent.click_xpath("//*[@id='no-such-box']")
print(agent.html().count('<input'))
"""
    code_2 = """
import re
word = re.search(r'<span class="bold">(.*?)</span>', agent.html()).group(1)
agent.click_xpath("//input[@id='tt']")
agent.type(word)
agent.click_xpath("//button[@id='subbtn']")
"""
    llm = ScriptedLLM([answer(code_1), answer(code_2), skill(code_2)])
    try:
        planned = await Planner(PROFILE, limits=LIMITS, pool=sandbox).play(
            ep, Roles(llm), rules_text="", episode_id="mw-2", task_type="enter-text"
        )
    finally:
        await ep.env.end_episode()
        ep.env.close()
    first = planned.turns[0].feedback
    assert "-> Action failed: " in first and "no-such-box" in first
    # The failed action raised and ended the block: the print after it never ran.
    assert "Printed output: none." in first and "ActionFailed" in first
    assert 'The page now:\n<div id="wrap">' in first and 'id="subbtn"' in first
    assert "Actions used so far: 1 of 20." in first
    assert planned.turns[0].error is not None and planned.outcome is Outcome.INDIRECT_SUCCESS
    assert ep.trajectory.success and len(ep.trajectory.actions) == 4


async def test_the_profile_types_and_clicks_as_the_published_wrapper(
    browsers: BrowserPool, sandbox: WorkerPool
) -> None:
    """Typing with nothing focused, or into a field that holds text, is a failed action
    that ends the code (the failures the published manual's rules were learned from)."""
    assert PROFILE.env_options["actions"] == "published"
    env = MiniWoBEnv("enter-text", pool=browsers, **PROFILE.env_options)
    ep = await Episode.start(env, "enter-text#5")
    find_word = """
import re
word = re.search(r'<span class="bold">(.*?)</span>', agent.html()).group(1)
"""
    code_1 = find_word + "agent.type(word)\nprint('typed')\n"
    code_2 = find_word + (
        "agent.click_xpath(\"//input[@id='tt']\")\nagent.type(word)\nagent.type(word)\n"
    )
    code_3 = find_word + (
        "for _ in word:\n    agent.press_key('backspace')\n"
        "agent.type(word)\nagent.click_xpath(\"//button[@id='subbtn']\")\n"
    )
    llm = ScriptedLLM([answer(code_1), answer(code_2), answer(code_3), skill(code_3)])
    try:
        planned = await Planner(PROFILE, limits=LIMITS, pool=sandbox).play(
            ep, Roles(llm), rules_text="", episode_id="mw-3", task_type="enter-text"
        )
    finally:
        await ep.env.end_episode()
        ep.env.close()
    first, second = planned.turns[0].feedback, planned.turns[1].feedback
    assert "-> Action failed: " in first and "nothing that takes text has the focus" in first
    assert "Printed output: none." in first and "ActionFailed" in first
    assert "clear it first" in second and "Actions used so far: 4 of 20." in second
    assert planned.outcome is Outcome.INDIRECT_SUCCESS and ep.trajectory.success
