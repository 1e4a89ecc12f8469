"""Solvers for forms: boxes to tick and fields to fill, then Submit."""

from __future__ import annotations

from lorekit.envs.miniwob.solvers.base import between, click, fill, solver
from lorekit.envs.miniwob.view import View


@solver("click-checkboxes")
def click_checkboxes(view: View) -> str | None:
    wanted = between(view.utterance, "Select ", " and click Submit.")
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
    wanted = between(view.utterance, "Select ", " and click Submit.")
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
