"""A MiniWoB++ task page in a :class:`Browser`: episodes, observations, actions.

The pages are the Farama ``miniwob`` package's own (``miniwob/html/miniwob``),
loaded from disk, or another page set's versions of them (``pages``; see
:mod:`.pagesets`). An episode is MiniWoB's: ``Math.seedrandom(seed)``, the
page's time limit, ``core.startEpisodeReal()``; the page scores itself into
``WOB_REWARD_GLOBAL`` (time-scaled) and ``WOB_RAW_REWARD_GLOBAL`` (not).

The HTML comes in three views (:meth:`MiniWoBPage.html`): ``clean`` and
``raw`` show ``#wrap`` and the shown elements a page added to ``<body>``;
``published`` is what AutoManual's planner read: ``core.getDOMInfo()`` run
first (it marks each shown element with ``data-wob_ref`` and ``data-wob_eps``),
then ``#wrap`` and every other child of ``<body>``, hidden ones too, joined
with nothing between them.

Actions are AutoManual's: ``click_xpath``, ``type``, ``press_key``,
``click_option``, ``move_mouse_on``. Each returns an :class:`ActionResult`
saying whether it was carried out and, if not, why (a bad xpath, no such
element, an element that cannot be clicked): never an exception, except
:class:`~lorekit.envs.miniwob.browser.BrowserCrashed` when the browser died.

Two of them come in two flavours (``actions``):

- ``plain``: ``type`` sends the keys to whatever has the focus (nothing, or a
  field that already holds text, which it appends to); ``click_xpath`` clicks
  the first element the xpath matches.
- ``published``: as AutoManual's published wrapper does. ``type`` fails, with
  the reason, when the focused element takes no text (nothing clicked yet),
  is disabled, or is not empty; ``click_xpath`` clicks every match that is
  shown and enabled, in document order, and fails only when none is. The
  rules in AutoManual's published manual were learned from these failures
  ("click the field first", "clear it before typing"), so its planner needs
  them to meet the same pages. ``press_key`` sends its key either way.
"""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lorekit.envs.miniwob.browser import Browser, BrowserCrashed
from lorekit.envs.miniwob.pagesets import (
    PageSet,
    check_page_set,
    loads_afresh,
    own_time_limit_ms,
    page_url,
)

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

Actions = Literal["plain", "published"]
ACTION_FLAVOURS: tuple[Actions, ...] = ("plain", "published")
HtmlView = Literal["clean", "raw", "published"]
HTML_VIEWS: tuple[HtmlView, ...] = ("clean", "raw", "published")

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
    once ``core.getDOMInfo()`` has run, which LoreKit calls only for the
    ``published`` view): about 6% shorter over AutoManual's 53 pages (median
    538 characters)."""
    return _BETWEEN_TAGS.sub("><", _WOB_ATTRIBUTE.sub("", html)).strip()


#: AutoManual's view: DOM info first (which marks the elements), then #wrap and
#: every other body child, shown or not, with nothing between them.
_READ_PUBLISHED = """
core.getDOMInfo();
const own = new Set(arguments[0]);
const wrap = document.getElementById('wrap');
const parts = [wrap ? wrap.outerHTML : ''];
for (const el of document.body.children) {
  if (el.id === 'wrap' || own.has(el.id)) continue;
  parts.push(el.outerHTML);
}
return parts.join('');
"""

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


#: The focused element's value and whether it is disabled; null when it takes no text.
_FOCUSED_FIELD = """
const el = document.activeElement;
if (!el || el.value === undefined || el.value === null) return null;
return [String(el.value), el.disabled === true];
"""


class MiniWoBPage:
    """One task's page in one browser; :meth:`begin` starts an episode."""

    def __init__(
        self,
        browser: Browser,
        task: str,
        *,
        page_time_ms: int | None = DEFAULT_PAGE_TIME_MS,
        actions: Actions = "plain",
        pages: PageSet = "farama",
    ) -> None:
        if task not in page_names():
            raise ValueError(f"no MiniWoB page {task!r}; see lorekit.envs.miniwob.page_names()")
        if actions not in ACTION_FLAVOURS:
            raise ValueError(f"actions must be 'plain' or 'published', got {actions!r}")
        self.actions: Actions = actions
        self.pages: PageSet = check_page_set(pages)
        self.browser = browser
        self.task = task
        self.page_time_ms = page_time_ms
        self.url = page_url(task, self.pages)

    def begin(self, seed: int) -> None:
        """Load the page (if the browser shows another) and start an episode."""
        time_ms = self.page_time_ms
        if time_ms is None:  # the page's own limit, as the set's version of it sets it
            time_ms = own_time_limit_ms(self.pages, self.task)
        afresh = loads_afresh(self.pages)

        def start(driver: Any) -> bool:
            if afresh or driver.current_url != self.url:
                driver.get(self.url)
            else:
                driver.execute_script("core.endEpisode(0);")
            # A reused page keeps fields that earlier episodes typed into, marked
            # data-tampered="e<episode number>": bookkeeping that would make the
            # same seed read differently in a browser that ran more episodes. It
            # keeps the focus too, where the last episode clicked: an episode
            # starts as on a freshly loaded page, with nothing focused.
            script = (
                "document.querySelectorAll('[data-tampered]')"
                ".forEach(e => e.removeAttribute('data-tampered'));"
                "if (document.activeElement) document.activeElement.blur();"
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

    def html(self, view: HtmlView = "clean", *, raw: bool = False) -> str:
        """The task area (``#wrap``) and any dialog the page added, as HTML, in
        one of the views the module docstring describes (``raw=True`` is
        ``view="raw"``)."""
        view = "raw" if raw else view
        if view not in HTML_VIEWS:
            raise ValueError(f"html view must be one of {', '.join(HTML_VIEWS)}, got {view!r}")
        script = _READ_PUBLISHED if view == "published" else _READ_PAGE
        text = str(self.browser.call(lambda d: d.execute_script(script, list(_OWN_ELEMENTS))))
        return clean_html(text) if view == "clean" else text

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
        if self.actions == "published":
            return self._click_each(xpath)
        return self._on_element(xpath, "click", lambda d, el: el.click())

    def _click_each(self, xpath: str) -> ActionResult:
        """Click every shown, enabled element ``xpath`` matches (the published wrapper's click)."""
        if not xpath.strip():
            return ActionResult(False, "click: empty xpath")

        def run(driver: Any) -> str:
            from selenium.common.exceptions import (
                ElementClickInterceptedException,
                ElementNotInteractableException,
                StaleElementReferenceException,
            )
            from selenium.webdriver.common.by import By

            found = driver.find_elements(By.XPATH, xpath)
            if not found:
                raise LookupError(f"no element matches {xpath}")
            clicked = 0
            for element in found:
                try:
                    if element.is_displayed() and element.is_enabled():
                        element.click()
                        clicked += 1
                except (
                    ElementClickInterceptedException,
                    ElementNotInteractableException,
                    StaleElementReferenceException,
                ):
                    continue  # covered, or gone after an earlier click: as not clickable
            if not clicked:
                raise LookupError(
                    f"none of the {len(found)} element(s) matching {xpath} can be clicked "
                    "(hidden, disabled or covered)"
                )
            return f"click {xpath}" + (f" ({clicked} elements)" if clicked > 1 else "")

        return self._act(run, f"click {xpath}")

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

        published = self.actions == "published"

        def send(driver: Any) -> None:
            from selenium.webdriver.common.action_chains import ActionChains

            if published:
                problem = _untypeable(driver.execute_script(_FOCUSED_FIELD))
                if problem:
                    raise ValueError(problem)
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
            said = self.browser.call(fn)
        except BrowserCrashed:
            raise
        except (WebDriverException, LookupError, ValueError) as error:
            return ActionResult(False, f"{done}: {_reason(error)}")
        return ActionResult(True, said if isinstance(said, str) else done)


def _untypeable(field: Any) -> str:
    """Why the published ``type`` refuses the focused element ("" when it may type)."""
    if not isinstance(field, list):
        return "nothing that takes text has the focus; click the field first"
    value, disabled = str(field[0]), bool(field[1])
    if disabled:
        return "the focused field is disabled"
    if value:
        shown = value if len(value) <= 40 else value[:40] + "..."
        return f"the focused field is not empty (it holds {shown!r}); clear it first"
    return ""


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
