"""The solvers' registry and building blocks, and candidate actions for baselines."""

from __future__ import annotations

import json
from collections.abc import Callable

from lorekit.envs.miniwob.view import Element, View

Solver = Callable[[View], str | None]
SOLVERS: dict[str, Solver] = {}


def solver(*pages: str) -> Callable[[Solver], Solver]:
    """Register the decorated function as the solver of ``pages``."""

    def register(fn: Solver) -> Solver:
        for page in pages:
            SOLVERS[page] = fn
        return fn

    return register


def solve(view: View) -> str | None:
    """The next action for ``view``'s page, or None (no solver, or stuck)."""
    fn = SOLVERS.get(view.task)
    return fn(view) if fn is not None else None


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


def between(text: str, start: str, end: str) -> str | None:
    if text.startswith(start) and text.endswith(end):
        return text[len(start) : len(text) - len(end)]
    return None


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
