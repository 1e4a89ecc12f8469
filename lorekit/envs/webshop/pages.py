"""The shop's pages as WebShop's text mode shows them: visible texts joined by " [SEP] ".

Pages: search (the instruction and a search box), results (10 per page of the
top 50), item (option groups with their values as buttons, title, price,
rating, links to the sub-pages, "Buy Now"), the item's description, features
and reviews, and the page after buying. Every page but the last repeats the
instruction, as the original's did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lorekit.envs.webshop.catalog import Product

SEP = " [SEP] "
PRODUCT_WINDOW = 10
BACK_TO_SEARCH = "Back to Search"
NEXT_PAGE = "Next >"
PREV_PAGE = "< Prev"
BUY_NOW = "Buy Now"
SUB_PAGES = ("Description", "Features", "Reviews")
PAGE_KINDS = ("search", "results", "item", *(p.lower() for p in SUB_PAGES), "done")


@dataclass
class Browser:
    """Where the shopper is: the page, the last search, the open item and its choices."""

    page: str = "search"
    keywords: str = ""
    results: list[int] = field(default_factory=list)
    page_number: int = 1
    product: int | None = None
    options: dict[str, str] = field(default_factory=dict)

    def shown_results(self) -> list[int]:
        start = (self.page_number - 1) * PRODUCT_WINDOW
        return self.results[start : start + PRODUCT_WINDOW]

    def has_next(self) -> bool:
        """Whether a later page has results ("Next >" is shown on every results page,
        as in the original, even the last)."""
        return self.page_number * PRODUCT_WINDOW < len(self.results)


def clickables(browser: Browser, products: Sequence[Product]) -> list[str]:
    """The buttons of the current page, in page order (as shown, not lower-cased)."""
    if browser.page == "results":
        out = [BACK_TO_SEARCH]
        if browser.page_number > 1:
            out.append(PREV_PAGE)
        out.append(NEXT_PAGE)  # always, as the original: past the last page it shows none
        return out + [products[i].asin for i in browser.shown_results()]
    if browser.page == "item" and browser.product is not None:
        product = products[browser.product]
        values = [v for group in product.options.values() for v in group]
        return [BACK_TO_SEARCH, PREV_PAGE, *values, *SUB_PAGES, BUY_NOW]
    if browser.page in ("description", "features", "reviews"):
        return [BACK_TO_SEARCH, PREV_PAGE]
    return []


def _instruction(instruction: str) -> list[str]:
    return ["Instruction:", instruction]


def render(
    browser: Browser, products: Sequence[Product], instruction: str, reward: float | None = None
) -> str:
    """The current page's text."""
    head = _instruction(instruction)
    if browser.page == "search":
        return SEP.join(["WebShop", *head, "Search"])
    if browser.page == "done":
        return SEP.join(
            ["Thank you for shopping with us!", "Your score (min 0.0, max 1.0)", f"{reward or 0.0}"]
        )
    if browser.page == "results":
        parts = [*head, BACK_TO_SEARCH]
        parts.append(f"Page {browser.page_number} (Total results: {len(browser.results)})")
        if browser.page_number > 1:
            parts.append(PREV_PAGE)
        parts.append(NEXT_PAGE)
        for i in browser.shown_results():
            parts += [products[i].asin, products[i].title, products[i].price_tag]
        return SEP.join(parts)
    assert browser.product is not None
    product = products[browser.product]
    if browser.page == "item":
        return SEP.join([*head, *item_lines(product)])
    parts = [*head, BACK_TO_SEARCH, PREV_PAGE]
    if browser.page == "description":
        parts.append(product.description)
    elif browser.page == "features":
        parts += list(product.bullet_points)
    else:
        for review in product.reviews:
            parts += [review.title, str(review.score), review.body]
    return SEP.join(parts)


def item_lines(product: Product) -> list[str]:
    """The item page after the instruction: buttons, option groups, title, price, links."""
    lines = [BACK_TO_SEARCH, PREV_PAGE]
    for group, values in product.options.items():
        lines += [group, *values]
    lines += [product.title, f"Price: {product.price_tag}", f"Rating: {product.rating}"]
    return [*lines, *SUB_PAGES, BUY_NOW]


def option_group(product: Product, value: str) -> str | None:
    """The first option group of ``product`` offering ``value``."""
    for group, values in product.options.items():
        if value in values:
            return group
    return None


def describe_choices(options: Mapping[str, str]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in options.items()) or "none"
