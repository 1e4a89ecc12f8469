"""The built-in expert (``--agent oracle``): search the target's key terms, open it,
choose the goal's options, buy.

It reads the goal's target from the env (the agent never sees it), so it is an
upper bound and a demonstration, not a baseline. From any page it finds its
way: back to results or search when it is elsewhere, paging through the
results while the target is not shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from lorekit.envs.webshop.catalog import Product
from lorekit.envs.webshop.goals import Goal
from lorekit.envs.webshop.pages import BACK_TO_SEARCH, BUY_NOW, NEXT_PAGE, PREV_PAGE, Browser


class ShopState(Protocol):
    """What the expert reads of the env (:class:`~lorekit.envs.webshop.env.WebShopEnv`):
    a protocol, so the env can ask the expert without the two importing each other."""

    @property
    def goal(self) -> Goal | None: ...

    @property
    def browser(self) -> Browser: ...

    @property
    def products(self) -> Sequence[Product]: ...

    def product(self, asin: str) -> Product: ...


def search_query(env: ShopState) -> str:
    """The target's key terms: its title, lower case, without punctuation."""
    assert env.goal is not None
    title = env.product(env.goal.asin).title.lower()
    return " ".join("".join(ch if ch.isalnum() else " " for ch in title).split())


def next_action(env: ShopState) -> str | None:
    goal = env.goal
    if goal is None:
        return None
    browser = env.browser
    target = goal.asin.lower()
    if browser.page == "search":
        return f"search[{search_query(env)}]"
    if browser.page == "results":
        shown = [env.products[i].asin for i in browser.shown_results()]
        for asin in shown:
            if asin.lower() == target:
                return f"click[{asin}]"
        if browser.has_next():
            return f"click[{NEXT_PAGE}]"
        return f"click[{BACK_TO_SEARCH}]"
    if browser.page == "item":
        assert browser.product is not None
        product = env.products[browser.product]
        if product.asin.lower() != target:
            return f"click[{PREV_PAGE}]"
        for group, value in goal.goal_options.items():
            offered = group in product.options and value in product.options[group]
            if offered and browser.options.get(group) != value:
                return f"click[{value}]"
        return f"click[{BUY_NOW}]"
    if browser.page == "done":
        return None
    return f"click[{PREV_PAGE}]"
