"""The shop's pages as WebShop's text mode shows them: visible texts joined by " [SEP] ".

Pages: search (the instruction and a search box), results (10 per page of the
top 50), item (option groups with their values as buttons, title, price,
rating, links to the sub-pages, "Buy Now"), the item's description, features
and reviews, and the page after buying. Every page but the last repeats the
instruction, as the original's did. Each text is shown as the original's text
mode shows an HTML text node (:func:`visible`): stripped, and left out when
empty; tests/envs/webshop/test_webshop_golden_pages.py checks the pages against
the original's, recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lorekit.envs.webshop.catalog import Product

SEP = " [SEP] "
_ASCII_BLANKS = " \t\n\r\f"
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
    shown: int = PRODUCT_WINDOW
    """Products shown of each page's ten: the first ``shown`` (ADaPT's and ReAct's
    WebShop code showed 3, ``page_len = 3``); the pages still hold ten each."""

    def shown_results(self) -> list[int]:
        start = (self.page_number - 1) * PRODUCT_WINDOW
        return self.results[start : start + min(self.shown, PRODUCT_WINDOW)]

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


def visible(texts: Sequence[str]) -> list[str]:
    """``texts`` as the original's text mode shows them: it strips each HTML text node
    (beautifulsoup's), drops the ones that are exactly a newline, and an empty
    field makes no node at all. Beautifulsoup turns a node of ASCII blanks into
    a newline when it holds one, else into one space, which stays as an empty text."""
    out = []
    for text in texts:
        if not text:
            continue
        if not text.strip(_ASCII_BLANKS):
            if "\n" not in text:
                out.append("")
            continue
        out.append(text.strip())
    return out


def _join(texts: Sequence[str]) -> str:
    return SEP.join(visible(texts))


def _instruction(instruction: str) -> list[str]:
    return ["Instruction:", instruction]


def render(
    browser: Browser, products: Sequence[Product], instruction: str, reward: float | None = None
) -> str:
    """The current page's text."""
    head = _instruction(instruction)
    if browser.page == "search":
        return _join(["WebShop", *head, "Search"])
    if browser.page == "done":
        # The original's page also shows its MTurk form's fields (empty here); only the
        # thank-you line and the score are kept (docs/webshop.md).
        return _join(
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
        return _join(parts)
    assert browser.product is not None
    product = products[browser.product]
    if browser.page == "item":
        return _join([*head, *item_lines(product)])
    parts = [*head, BACK_TO_SEARCH, PREV_PAGE]
    if browser.page == "description":
        parts.append(product.description)
    elif browser.page == "features":
        # The original's template puts a space before each bullet: an empty bullet is
        # a blank node, shown as an empty text.
        parts += [f" {bullet}" for bullet in product.bullet_points]
    else:
        for review in product.reviews:  # the original quotes a review's title
            parts += [f'"{review.title}"', str(review.score), review.body]
    return _join(parts)


def item_lines(product: Product) -> list[str]:
    """The item page after the instruction: buttons, option groups, title, price, links."""
    lines = [BACK_TO_SEARCH, PREV_PAGE]
    for group, values in product.options.items():
        lines += [group, *values]
    lines += [product.title, f"Price: {product.price_tag}", f"Rating: {product.rating}"]
    return [*lines, *SUB_PAGES, BUY_NOW]


def option_group(product: Product, value: str) -> str | None:
    """The option group a click on ``value`` selects in: the last group offering it, as
    in the original (its page's buttons are keyed by value, the later one winning)."""
    found = None
    for group, values in product.options.items():
        if value in values:
            found = group
    return found


def describe_choices(options: Mapping[str, str]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in options.items()) or "none"
