"""A MiniWoB++ task page in a :class:`Browser`: episodes, observations, actions.

The pages are the Farama ``miniwob`` package's own (``miniwob/html/miniwob``),
loaded from disk. An episode is MiniWoB's: ``Math.seedrandom(seed)``, the
page's time limit, ``core.startEpisodeReal()``; the page scores itself into
``WOB_REWARD_GLOBAL`` (time-scaled) and ``WOB_RAW_REWARD_GLOBAL`` (not).

Actions are AutoManual's: ``click_xpath``, ``type``, ``press_key``,
``click_option``, ``move_mouse_on``. Each returns an :class:`ActionResult`
saying whether it was carried out and, if not, why (a bad xpath, no such
element, an element that cannot be clicked): never an exception, except
:class:`~lorekit.envs.miniwob.browser.BrowserCrashed` when the browser died.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit.envs.miniwob.browser import Browser, BrowserCrashed

#: The page's own time limit when LoreKit runs it (ms): long enough that a
#: model's latency never decides an episode (AutoManual does the same).
DEFAULT_PAGE_TIME_MS = 1_000_000

#: Keys ``press_key`` accepts, by the names models use.
KEYS = {
    "enter": "ENTER",
    "return": "RETURN",
    "space": "SPACE",
    "tab": "TAB",
    "backspace": "BACKSPACE",
    "delete": "DELETE",
    "escape": "ESCAPE",
    "esc": "ESCAPE",
    "up": "ARROW_UP",
    "down": "ARROW_DOWN",
    "left": "ARROW_LEFT",
    "right": "ARROW_RIGHT",
    "arrow_up": "ARROW_UP",
    "arrow_down": "ARROW_DOWN",
    "arrow_left": "ARROW_LEFT",
    "arrow_right": "ARROW_RIGHT",
    "arrowup": "ARROW_UP",
    "arrowdown": "ARROW_DOWN",
    "arrowleft": "ARROW_LEFT",
    "arrowright": "ARROW_RIGHT",
    "home": "HOME",
    "end": "END",
    "pageup": "PAGE_UP",
    "pagedown": "PAGE_DOWN",
}
MAX_TYPED_CHARS = 500

_OWN_ELEMENTS = ("click-canvas", "reward-display", "sync-task-cover")
_WOB_ATTRIBUTE = re.compile(r'\s+data-(?:wob_[\w-]+|tampered)="[^"]*"')
_BETWEEN_TAGS = re.compile(r">\s+<")


@functools.cache
def html_dir() -> Path:
    import miniwob

    return Path(miniwob.__file__).parent / "html" / "miniwob"


@functools.cache
def page_names() -> tuple[str, ...]:
    """Every task page the package bundles (``click-button``, ...)."""
    return tuple(sorted(p.stem for p in html_dir().glob("*.html")))


@dataclass(frozen=True)
class ActionResult:
    """Whether an action was carried out; ``message`` says what happened."""

    ok: bool
    message: str


@dataclass(frozen=True)
class Outcome:
    """The page's verdict: ``reward`` (time-scaled, -1 on a time-out) and
    ``raw_reward`` (not scaled; 1.0 is full success)."""

    done: bool
    reward: float
    raw_reward: float
    reason: str


def clean_html(html: str) -> str:
    """Without the whitespace between tags and MiniWoB's bookkeeping
    attributes (``data-tampered``, which numbers the episode a field was typed
    in; ``data-wob_ref`` and ``data-wob_eps``, which the page adds only
    once ``core.getDOMInfo()`` has run, which LoreKit does not call): about
    6% shorter over AutoManual's 53 pages (median 538 characters)."""
    return _BETWEEN_TAGS.sub("><", _WOB_ATTRIBUTE.sub("", html)).strip()


_READ_PAGE = """
const own = new Set(arguments[0]);
const parts = [];
for (const el of document.body.children) {
  if (own.has(el.id)) continue;
  if (getComputedStyle(el).display === 'none' && el.id !== 'wrap') continue;
  parts.push(el.outerHTML);
}
return parts.join('\\n');
"""


class MiniWoBPage:
    """One task's page in one browser; :meth:`begin` starts an episode."""

    def __init__(
        self, browser: Browser, task: str, *, page_time_ms: int | None = DEFAULT_PAGE_TIME_MS
    ) -> None:
        if task not in page_names():
            raise ValueError(f"no MiniWoB page {task!r}; see lorekit.envs.miniwob.page_names()")
        self.browser = browser
        self.task = task
        self.page_time_ms = page_time_ms
        self.url = (html_dir() / f"{task}.html").as_uri()

    def begin(self, seed: int) -> None:
        """Load the page (if the browser shows another) and start an episode."""
        time_ms = self.page_time_ms

        def start(driver: Any) -> bool:
            if driver.current_url != self.url:
                driver.get(self.url)
            else:
                driver.execute_script("core.endEpisode(0);")
            # A reused page keeps fields that earlier episodes typed into, marked
            # data-tampered="e<episode number>": bookkeeping that would make the
            # same seed read differently in a browser that ran more episodes.
            script = (
                "document.querySelectorAll('[data-tampered]')"
                ".forEach(e => e.removeAttribute('data-tampered'));"
                f"Math.seedrandom({int(seed)});"
            )
            if time_ms is not None:
                script += f"core.EPISODE_MAX_TIME = {int(time_ms)};"
            driver.execute_script(script + "core.startEpisodeReal();")
            for _ in range(100):
                if driver.execute_script("return WOB_TASK_READY;"):
                    return True
                time.sleep(0.01)
            return False

        if not self.browser.call(start):
            raise BrowserCrashed(f"the {self.task} page did not become ready")

    # -- reading -----------------------------------------------------------------------

    def utterance(self) -> str:
        found = self.browser.call(lambda d: d.execute_script("return core.getUtterance();"))
        if isinstance(found, dict):
            return str(found.get("utterance", ""))
        return str(found)

    def html(self, *, raw: bool = False) -> str:
        """The task area (``#wrap``) and any dialog the page added, as HTML."""
        text = str(self.browser.call(lambda d: d.execute_script(_READ_PAGE, list(_OWN_ELEMENTS))))
        return text if raw else clean_html(text)

    def outcome(self) -> Outcome:
        data = self.browser.call(
            lambda d: d.execute_script(
                "return [WOB_DONE_GLOBAL, WOB_REWARD_GLOBAL, WOB_RAW_REWARD_GLOBAL,"
                " String(WOB_REWARD_REASON)];"
            )
        )
        done, reward, raw, reason = data
        return Outcome(bool(done), float(reward or 0), float(raw or 0), str(reason))

    # -- acting ------------------------------------------------------------------------

    def click_xpath(self, xpath: str) -> ActionResult:
        return self._on_element(xpath, "click", lambda d, el: el.click())

    def click_option(self, xpath: str) -> ActionResult:
        def pick(driver: Any, element: Any) -> None:
            from selenium.webdriver.support.ui import Select

            if element.tag_name.lower() == "option":
                select = element.find_element("xpath", "./ancestor::select[1]")
                Select(select).select_by_visible_text(element.text)
            elif element.tag_name.lower() == "select":
                raise ValueError("the xpath names a <select>; name one of its <option>s")
            else:
                element.click()

        return self._on_element(xpath, "select", pick)

    def move_mouse_on(self, xpath: str) -> ActionResult:
        def hover(driver: Any, element: Any) -> None:
            from selenium.webdriver.common.action_chains import ActionChains

            ActionChains(driver).move_to_element(element).perform()

        return self._on_element(xpath, "hover over", hover)

    def type(self, text: str) -> ActionResult:
        if len(text) > MAX_TYPED_CHARS:
            return ActionResult(
                False, f"type: {len(text)} characters is too long (at most {MAX_TYPED_CHARS})"
            )

        def send(driver: Any) -> None:
            from selenium.webdriver.common.action_chains import ActionChains

            ActionChains(driver).send_keys(text).perform()

        return self._act(send, f"type {text!r}")

    def press_key(self, key: str) -> ActionResult:
        name = KEYS.get(key.strip().lower().replace(" ", "_").replace("-", "_"))
        if name is None:
            return ActionResult(
                False, f"press: unknown key {key!r}; known keys: {', '.join(sorted(KEYS))}"
            )

        def press(driver: Any) -> None:
            from selenium.webdriver.common.action_chains import ActionChains
            from selenium.webdriver.common.keys import Keys

            ActionChains(driver).send_keys(getattr(Keys, name)).perform()

        return self._act(press, f"press {key.strip().lower()}")

    def _on_element(self, xpath: str, verb: str, fn: Any) -> ActionResult:
        if not xpath.strip():
            return ActionResult(False, f"{verb}: empty xpath")

        def run(driver: Any) -> None:
            from selenium.webdriver.common.by import By

            found = driver.find_elements(By.XPATH, xpath)
            if not found:
                raise LookupError(f"no element matches {xpath}")
            fn(driver, found[0])

        return self._act(run, f"{verb} {xpath}")

    def _act(self, fn: Any, done: str) -> ActionResult:
        from selenium.common.exceptions import WebDriverException

        try:
            self.browser.call(fn)
        except BrowserCrashed:
            raise
        except (WebDriverException, LookupError, ValueError) as error:
            return ActionResult(False, f"{done}: {_reason(error)}")
        return ActionResult(True, done)


def _reason(error: BaseException) -> str:
    """The WebDriver's message without its session info and stack trace, on one line."""
    text = str(getattr(error, "msg", None) or error).strip().removeprefix("Message: ")
    kept = []
    for line in text.splitlines():
        if line.strip().startswith(("(Session info", "Stacktrace", "#0 ")):
            break
        if line.strip():
            kept.append(line.strip())
    return " ".join(kept)[:300] or type(error).__name__
