"""Each of AutoManual's 53 MiniWoB++ pages starts an episode and takes an action in Chromium."""

from __future__ import annotations

import concurrent.futures as cf
from dataclasses import dataclass

import pytest
from _mw_browsers import NEEDS_CHROMIUM, TrackedPool

from lorekit.envs.miniwob import MiniWoBEnv, task_lists
from lorekit.envs.miniwob.code_api import split_page

pytestmark = [NEEDS_CHROMIUM, pytest.mark.slow]

#: Present on every page (the task text); clicking it changes nothing.
HARMLESS = "click_xpath //div[@id='query']"


@dataclass(frozen=True)
class Visit:
    task_id: str
    utterance: str
    html: str
    step_valid: bool
    step_text: str
    step_done: bool


def visit_all(pages: tuple[str, ...], pool: TrackedPool) -> list[Visit]:
    """Reset each page once and click its task text, on one env (one browser at a time)."""
    env = MiniWoBEnv(",".join(pages), pool=pool, episodes_per_task=1, seed=3)
    visits = []
    try:
        for task in env.tasks():
            first = env.reset(task)
            head, html = split_page(first.text)
            step = env.step(HARMLESS)
            visits.append(
                Visit(
                    str(first.info["task_id"]),
                    head.removeprefix("Task: "),
                    html or "",
                    bool(step.info["valid"]),
                    step.observation,
                    step.done,
                )
            )
    finally:
        env.close()
    return visits


def test_every_automanual_page_resets_and_accepts_an_action() -> None:
    pages = task_lists()["automanual-53"]
    assert len(pages) == 53 and len(set(pages)) == 53
    pool = TrackedPool(2)
    try:
        with cf.ThreadPoolExecutor(2) as workers:
            halves = workers.map(visit_all, [pages[0::2], pages[1::2]], [pool, pool])
            visits = [v for half in halves for v in half]
        assert pool.started <= 2  # two browsers served all 53 pages
    finally:
        pool.close_and_check()
    assert sorted(v.task_id.split("#")[0] for v in visits) == sorted(pages)
    for visit in visits:
        where = visit.task_id
        assert visit.utterance.strip(), where
        assert visit.html.startswith('<div id="wrap"'), where
        assert "data-wob_" not in visit.html, where
        assert visit.step_valid, (where, visit.step_text)
        assert visit.step_text.startswith("Done: click //div[@id='query']."), where
        if not visit.step_done:  # the page is shown again after the action
            assert '<div id="wrap"' in visit.step_text, where
