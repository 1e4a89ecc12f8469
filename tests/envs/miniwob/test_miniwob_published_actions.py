"""``actions="published"``: ``type`` and ``click_xpath`` as AutoManual's wrapper, in Chromium.

The published wrapper refuses to type with nothing focused or into a field
that holds text, and clicks every clickable element an xpath matches; the
env's ``plain`` actions (its default) type wherever the focus is and click the
first match. Each behaviour is checked on a real page, both ways.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _mw_browsers import NEEDS_CHROMIUM, TrackedPool

from lorekit.envs.base import Step
from lorekit.envs.miniwob import MiniWoBEnv

pytestmark = NEEDS_CHROMIUM
CHECKBOXES = "//input[@type='checkbox']"


@pytest.fixture(scope="module")
def browsers() -> Iterator[TrackedPool]:
    pool = TrackedPool(1)
    try:
        yield pool
    finally:
        pool.close_and_check()


def started(pool: TrackedPool, page: str, actions: str) -> MiniWoBEnv:
    env = MiniWoBEnv(page, pool=pool, episodes_per_task=1, actions=actions)  # type: ignore[arg-type]
    env.reset(env.tasks()[0])
    return env


def script(env: MiniWoBEnv, code: str) -> Any:
    page = env._page
    assert page is not None
    return page.browser.call(lambda d: d.execute_script(code))


def field_value(env: MiniWoBEnv) -> str:
    return str(script(env, "return document.getElementById('tt').value;"))


def verdict(step: Step) -> str:
    return step.observation.split("\n", 1)[0]


def test_type_with_nothing_focused_fails_with_a_reason(browsers: TrackedPool) -> None:
    env = started(browsers, "enter-text", "published")
    try:
        step = env.step('type "hello"')
        assert step.info["valid"] is False and not step.done
        assert verdict(step).startswith("Failed: type 'hello': nothing that takes text")
        assert field_value(env) == ""
        # Clicking the field first is what makes typing work.
        assert env.step("click_xpath //input[@id='tt']").info["valid"] is True
        assert env.step('type "hello"').info["valid"] is True
        assert field_value(env) == "hello"
        # The next episode in the same browser starts with nothing focused again.
        env.reset(env.tasks()[0])
        assert env.step('type "again"').info["valid"] is False
    finally:
        env.close()
    plain = started(browsers, "enter-text", "plain")
    try:
        assert plain.step('type "hello"').info["valid"] is True  # keys sent to no field
    finally:
        plain.close()


def test_type_into_a_field_that_holds_text_fails_and_leaves_it(browsers: TrackedPool) -> None:
    env = started(browsers, "enter-text", "published")
    try:
        env.step("click_xpath //input[@id='tt']")
        assert env.step('type "ab"').info["valid"] is True
        step = env.step('type "cd"')
        assert step.info["valid"] is False
        assert "not empty (it holds 'ab'); clear it first" in verdict(step)
        assert field_value(env) == "ab"
        # Cleared with the keyboard, the field takes text again.
        env.step("press_key backspace")
        env.step("press_key backspace")
        assert env.step('type "cd"').info["valid"] is True and field_value(env) == "cd"
    finally:
        env.close()
    plain = started(browsers, "enter-text", "plain")
    try:
        plain.step("click_xpath //input[@id='tt']")
        plain.step('type "ab"')
        assert plain.step('type "cd"').info["valid"] is True
        assert field_value(plain) == "abcd"
    finally:
        plain.close()


def checked(env: MiniWoBEnv) -> list[bool]:
    found = script(
        env, "return [...document.querySelectorAll('#boxes input')].map(e => e.checked);"
    )
    return [bool(c) for c in found]


def test_click_xpath_clicks_every_clickable_match(browsers: TrackedPool) -> None:
    env = started(browsers, "click-checkboxes", "published")
    try:
        boxes = len(checked(env))
        assert boxes >= 2 and not any(checked(env))
        # A hidden match is skipped; every shown one is clicked.
        script(env, "document.querySelectorAll('#boxes input')[1].style.display = 'none';")
        step = env.step(f"click_xpath {CHECKBOXES}")
        assert step.info["valid"] is True
        assert verdict(step) == f"Done: click {CHECKBOXES} ({boxes - 1} elements)."
        assert checked(env) == [i != 1 for i in range(boxes)]
    finally:
        env.close()
    plain = started(browsers, "click-checkboxes", "plain")
    try:
        assert plain.step(f"click_xpath {CHECKBOXES}").info["valid"] is True
        assert checked(plain) == [i == 0 for i in range(len(checked(plain)))]
    finally:
        plain.close()


def test_click_xpath_fails_when_no_match_can_be_clicked(browsers: TrackedPool) -> None:
    env = started(browsers, "click-checkboxes", "published")
    try:
        script(env, "document.querySelectorAll('#boxes input').forEach(e => e.disabled = true);")
        step = env.step(f"click_xpath {CHECKBOXES}")
        assert step.info["valid"] is False
        assert "can be clicked (hidden, disabled or covered)" in verdict(step)
        assert not any(checked(env))
        missing = env.step("click_xpath //input[@id='no-such-box']")
        assert "no element matches" in verdict(missing)
    finally:
        env.close()


def test_actions_are_checked() -> None:
    with pytest.raises(ValueError, match="actions must be 'plain' or 'published'"):
        MiniWoBEnv("enter-text", actions="loose")  # type: ignore[arg-type]
