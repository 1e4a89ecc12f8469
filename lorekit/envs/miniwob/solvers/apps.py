"""Solvers for the small applications: a search engine, an email inbox."""

from __future__ import annotations

import re

from lorekit.envs.miniwob.solvers.base import click, fill, solver
from lorekit.envs.miniwob.view import View

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


_EMAIL_TASK = re.compile(
    r"Find the email by (?P<name>.+?) and (?:(?P<reply>reply to them with the text)"
    r"|(?P<forward>forward that email to) (?P<to>.+?)\.$|click the (?P<icon>trash|star) icon)"
)


@solver("email-inbox")
def email_inbox(view: View) -> str | None:
    """Open the sender's email (closing any other), then reply, forward,
    delete (trash) or star it. Works from any screen: the inbox, an open
    email, a reply or forward form, or the search screen."""
    task = _EMAIL_TASK.search(view.utterance)
    if task is None:
        return None
    name = task.group("name")
    email = view.by_id("email")
    opened = None
    if email is not None:
        sender = view.first("div", cls="email-sender", within=email, visible=False)
        opened = sender.text if sender is not None else None
    reply, forward = view.by_id("reply"), view.by_id("forward")
    if reply is not None:
        to = view.first("span", cls="reply-sender", within=reply)
        if task.group("reply") is None or to is None or to.text != name:
            return click(view.by_id("close-reply"))
        quoted = view.quoted()
        text = quoted[0] if quoted else ""
        return fill(view.by_id("reply-text"), text) or click(view.by_id("send-reply"))
    if forward is not None:
        if task.group("forward") is None or opened != name:
            return click(view.by_id("close-forward"))
        field = view.first("input", cls="forward-sender", within=forward)
        return fill(field, task.group("to")) or click(view.by_id("send-forward"))
    if email is not None and email.visible:
        if opened != name:
            return click(view.by_id("close-email"))
        if task.group("icon") is not None:
            icon = "trash" if task.group("icon") == "trash" else "star"
            return click(view.first("span", cls=icon, within=email))
        part = "email-reply" if task.group("reply") is not None else "email-forward"
        return click(view.first("span", cls=part, within=email))
    search = view.by_id("search")
    if search is not None and search.visible:
        return click(view.by_id("search-cancel"))
    for thread in view.find("div", cls="email-thread", within=view.by_id("main")):
        sender = view.first("div", cls="email-sender", within=thread)
        if sender is not None and sender.text == name:
            return click(thread)
    return None
