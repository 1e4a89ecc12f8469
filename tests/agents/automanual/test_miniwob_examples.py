"""The MiniWoB++ profile's human examples, each played in real Chromium on its own page.

Every example is an episode in the answer format: its task as the env shows it, the
planner's answers and the feedback after each. Here the planner plays those answers
(a scripted model) through the real sandbox on the same seeded page, with a second
between answers as a model's thinking would leave (a submenu opens a moment after
the pointer reaches its parent), and the task must be accomplished in as many turns as
the example shows, with the feedback the example shows.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("selenium", reason="the web extra is not installed")

from _planner_support import ISOLATION, LIMITS, skill

from lorekit.agents.automanual.core import Outcome
from lorekit.agents.automanual.planner import Planner
from lorekit.agents.automanual.planner_parse import parse_answer
from lorekit.agents.automanual.profiles import Example, profile_for
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
# The search-engine example (the first) has its own test in test_planner_miniwob.py.
ADDED = PROFILE.examples[1:]
PAGE = "\nThe page now:\n"


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


def test_the_profile_has_the_papers_four_examples() -> None:
    types = [e.task_type for e in PROFILE.examples]
    assert types == ["search-engine", "click-menu", "enter-date", "social-media-some"]
    for example in PROFILE.examples:
        assert example.task_id.startswith(example.task_type + "#")
        assert example.task.startswith("Task: ") and '\nPage:\n<div id="wrap">' in example.task


@pytest.mark.parametrize("example", ADDED, ids=[e.task_type for e in ADDED])
async def test_the_example_accomplishes_its_task(
    example: Example, browsers: BrowserPool, sandbox: WorkerPool
) -> None:
    env = MiniWoBEnv(example.task_type, pool=browsers, **PROFILE.env_options)
    ep = await Episode.start(env, example.task_id)
    answers = [turn.answer for turn in example.turns]
    last_code = parse_answer(answers[-1]).code
    llm = ScriptedLLM([*answers, skill(last_code)], latency=1.0)
    try:
        # The example's task is the page as the planner is shown it.
        assert PROFILE.opening(ep.observation) == example.task
        planned = await Planner(PROFILE, limits=LIMITS, pool=sandbox).play(
            ep, Roles(llm), rules_text="", episode_id="ex-1", task_type=example.task_type
        )
    finally:
        await ep.env.end_episode()
        ep.env.close()
    assert ep.trajectory.success, [t.feedback for t in planned.turns]
    direct = len(example.turns) == 1
    assert planned.outcome is (Outcome.DIRECT_SUCCESS if direct else Outcome.INDIRECT_SUCCESS)
    assert len(planned.turns) == len(example.turns)
    for played, shown in zip(planned.turns, example.turns, strict=True):
        # Calls, results and state as the example shows them; a page read right
        # after a hover may catch a submenu opening, so pages are compared up to it.
        assert played.feedback.partition(PAGE)[0] == shown.feedback.partition(PAGE)[0]
    assert example.turns[-1].feedback.endswith("The episode is over: the task was accomplished.")
