"""Solvers for pages won by clicking the right thing (perhaps after opening it)."""

from __future__ import annotations

import re

from lorekit.envs.miniwob.solvers.base import click, click_when_still, solver
from lorekit.envs.miniwob.view import Element, View


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


@solver("focus-text-2")
def focus_text_2(view: View) -> str | None:
    match = re.search(r"the (\d)(?:st|nd|rd|th) input", view.utterance)
    return click(view.by_id(f"tt{match.group(1)}")) if match else None


@solver("click-test", "click-test-2")
def click_test(view: View) -> str | None:
    """Click ONE; where TWO lies over its centre (a click there would hit
    TWO), move the focus onto ONE with Tab and press it with Enter."""
    one = view.first("button", text="ONE") or view.by_id("subbtn")
    if one is not None and one.covered:
        return "press_key enter" if one.focused else "press_key tab"
    return click(one)


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
