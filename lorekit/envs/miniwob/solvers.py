"""Scripted solvers (the expert) for MiniWoB++ task pages.

A solver maps what the page shows now (a :class:`~.view.View`: utterance,
elements, field values, focus) to the next action in the env's text form,
or None when it sees nothing left to do. It keeps no memory between calls,
so it picks up from any state of an episode: after a wrong click, a field
typed half-way or a popup that came up, it looks again and carries on.

Each solver reads only what the observation offers a model too (texts,
ids, classes, the ``data-result`` index search results carry); none reads
the page's script variables.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from lorekit.envs.miniwob.view import Element, View

Solver = Callable[[View], str | None]
SOLVERS: dict[str, Solver] = {}


def solver(*pages: str) -> Callable[[Solver], Solver]:
    def register(fn: Solver) -> Solver:
        for page in pages:
            SOLVERS[page] = fn
        return fn

    return register


def solve(view: View) -> str | None:
    """The next action for ``view``'s page, or None (no solver, or stuck)."""
    fn = SOLVERS.get(view.task)
    return fn(view) if fn is not None else None


# -- building blocks -------------------------------------------------------------------


#: A harmless action that only lets time pass (hovering over the task text).
WAIT = 'move_mouse_on //*[@id="query"]'


def click(element: Element | None) -> str | None:
    return None if element is None else f"click_xpath {element.xpath}"


def click_when_still(view: View, element: Element | None) -> str | None:
    """Click ``element``, or wait while the section it is in still opens."""
    return WAIT if element is not None and view.settling(element) else click(element)


def fill(field: Element | None, target: str) -> str | None:
    """The next action towards ``field`` holding exactly ``target``; None once it does.

    Focus the field, put the caret at the end, delete back to the longest
    correct prefix, then type the rest.
    """
    if field is None or field.value == target:
        return None
    if not field.focused:
        return click(field)
    if field.caret != len(field.value):
        return "press_key end"
    if not target.startswith(field.value):
        return "press_key backspace"
    return f"type {json.dumps(target[len(field.value) :])}"


def _between(text: str, start: str, end: str) -> str | None:
    if text.startswith(start) and text.endswith(end):
        return text[len(start) : len(text) - len(end)]
    return None


# -- the solvers -----------------------------------------------------------------------


@solver("click-button")
def click_button(view: View) -> str | None:
    quoted = view.quoted()
    return click(view.first("button", text=quoted[0])) if quoted else None


@solver("click-link")
def click_link(view: View) -> str | None:
    quoted = view.quoted()
    return click(view.first("span", cls="alink", text=quoted[0])) if quoted else None


@solver("focus-text")
def focus_text(view: View) -> str | None:
    return click(view.by_id("tt"))


@solver("click-checkboxes")
def click_checkboxes(view: View) -> str | None:
    wanted = _between(view.utterance, "Select ", " and click Submit.")
    if wanted is None:
        return None
    names = set() if wanted == "nothing" else set(wanted.split(", "))
    for label in view.find("label"):
        box = view.first("input", within=label)
        if box is not None and box.checked != (label.text in names):
            return click(box)
    return click(view.by_id("subbtn"))


@solver("click-option")
def click_option(view: View) -> str | None:
    wanted = _between(view.utterance, "Select ", " and click Submit.")
    for label in view.find("label", text=wanted):
        radio = view.first("input", within=label)
        if radio is not None and not radio.checked:
            return click(radio)
    return click(view.by_id("subbtn"))


@solver("enter-text")
def enter_text(view: View) -> str | None:
    quoted = view.quoted()
    if not quoted:
        return None
    return fill(view.by_id("tt"), quoted[0]) or click(view.by_id("subbtn"))


@solver("enter-password")
def enter_password(view: View) -> str | None:
    quoted = view.quoted()
    if not quoted:
        return None
    return (
        fill(view.by_id("password"), quoted[0])
        or fill(view.by_id("verify"), quoted[0])
        or click(view.by_id("subbtn"))
    )


@solver("login-user", "login-user-popup")
def login_user(view: View) -> str | None:
    """Fill both fields and log in; a popup (login-user-popup) is dismissed
    with Cancel (its OK leaves the page and fails the episode)."""
    if view.by_id("popup") is not None:
        return click(view.by_id("popup-cancel"))
    quoted = view.quoted()
    if len(quoted) < 2:
        return None
    return (
        fill(view.by_id("username"), quoted[0])
        or fill(view.by_id("password"), quoted[1])
        or click(view.by_id("subbtn"))
    )


@solver("click-dialog")
def click_dialog(view: View) -> str | None:
    return click(view.first("button", cls="ui-dialog-titlebar-close"))


@solver("click-dialog-2")
def click_dialog_2(view: View) -> str | None:
    quoted = view.quoted()
    if not quoted:
        return None
    if quoted[0] == "x":
        return click(view.first("button", cls="ui-dialog-titlebar-close"))
    pane = view.first("div", cls="ui-dialog-buttonpane")
    return click(view.first("button", text=quoted[0], within=pane))


@solver("click-tab")
def click_tab(view: View) -> str | None:
    match = re.search(r"Tab #(\d+)", view.utterance)
    return click(view.first("a", text=f"Tab #{match.group(1)}")) if match else None


@solver("click-test", "click-test-2")
def click_test(view: View) -> str | None:
    return click(view.first("button", text="ONE") or view.by_id("subbtn"))


@solver("focus-text-2")
def focus_text_2(view: View) -> str | None:
    match = re.search(r"the (\d)(?:st|nd|rd|th) input", view.utterance)
    return click(view.by_id(f"tt{match.group(1)}")) if match else None


@solver("enter-text-dynamic")
def enter_text_dynamic(view: View) -> str | None:
    return enter_text(view)


@solver("enter-text-2")
def enter_text_2(view: View) -> str | None:
    quoted = view.quoted()
    if not quoted:
        return None
    upper = "upper case" in view.utterance
    wanted = quoted[0].upper() if upper else quoted[0].lower()
    return fill(view.by_id("tt"), wanted) or click(view.by_id("subbtn"))


@solver("click-widget")
def click_widget(view: View) -> str | None:
    quoted = view.quoted()
    kind = quoted[0] if quoted else None
    return click(next((e for e in view.elements if e.attrs.get("data-type") == kind), None))


@solver("click-collapsible")
def click_collapsible(view: View) -> str | None:
    """Open the section (its header toggles it), then Submit."""
    if not view.find("div", cls="ui-accordion-content"):
        return click(view.first("h3"))
    return click_when_still(view, view.by_id("subbtn"))


@solver("click-tab-2", "click-collapsible-2")
def click_hidden_link(view: View) -> str | None:
    """The link may sit in a closed tab or section: open that one first."""
    quoted = view.quoted()
    if not quoted:
        return None
    shown = view.first("span", cls="alink", text=quoted[0])
    if shown is not None:
        return click_when_still(view, shown)
    hidden = view.first("span", cls="alink", text=quoted[0], visible=False)
    if hidden is None:
        return None
    for panel in view.find("div", visible=False):
        if panel.id.startswith("tabs-") and view.inside(hidden, panel):
            return click(view.first("a", text=f"Tab #{panel.id.removeprefix('tabs-')}"))
        if "ui-accordion-content" in panel.classes and view.inside(hidden, panel):
            headers = [h for h in view.find("h3") if h.parent == panel.parent]
            return click(max((h for h in headers if h.index < panel.index), key=_index))
    return None


def _index(element: Element) -> int:
    return element.index


_NTH = re.compile(r"click the (\d+)(?:st|nd|rd|th) search result")
RESULTS_PER_PAGE = 3


@solver("search-engine")
def search_engine(view: View) -> str | None:
    """Search for the quoted name, page to the result's page, click it.

    Results carry their index (``data-result``; -1 when the search text
    was wrong), so the solver sees when it is on the right page."""
    quoted, nth = view.quoted(), _NTH.search(view.utterance)
    if not quoted or nth is None:
        return None
    index = int(nth.group(1)) - 1
    titles = view.find("a", cls="search-title")
    target = next((a for a in titles if a.attrs.get("data-result") == str(index)), None)
    if target is not None:
        return click(target)
    typed = fill(view.by_id("search-text"), quoted[0])
    if typed is not None:
        return typed
    real = any(a.attrs.get("data-result", "-1") != "-1" for a in titles)
    if real:
        page = str(index // RESULTS_PER_PAGE + 1)
        link = view.first("a", text=page, within=view.by_id("pagination"))
        if link is not None:
            return click(link)
    return click(view.by_id("search"))


# -- candidates for the random baseline ------------------------------------------------

_CLICKABLE = ("button", "a", "input", "textarea", "label", "select", "li", "td")
_KEYS = ("press_key enter", "press_key tab", "press_key backspace")


def candidates(view: View) -> list[str]:
    """Well-formed actions worth trying: a click on every visible, enabled
    element a user would click (buttons, links, fields, labels, list items,
    cells, ``alink`` spans, dialog buttons), ``click_option`` on each option,
    typing each quoted string of the utterance, and a few keys."""
    out: list[str] = []
    for e in view.elements:
        if e.disabled:
            continue
        if e.tag == "option":  # options have no box of their own: never "visible"
            out.append(f"click_option {e.xpath}")
        elif not e.visible:
            continue
        elif e.tag in _CLICKABLE or "alink" in e.classes or "ui-button" in e.classes:
            out.append(f"click_xpath {e.xpath}")
    out += [f"type {json.dumps(q)}" for q in dict.fromkeys(view.quoted()) if q]
    out += _KEYS
    return out
