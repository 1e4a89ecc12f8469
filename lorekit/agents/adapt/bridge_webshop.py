"""ADaPT's bridge to WebShop: the page as the carried state, purchases and pages as checks.

ADaPT's WebShop setting splits shopping into skills (search, shortlist on the
results page, match a product against the criteria, buy with options) and
passes the visible page, and the product id once one is chosen, from one
sub-task to the next. This bridge gives the controller:

- ``describe_state``: the page kind, the last search, the open product and
  the options clicked on it, and the page's text without the instruction.
- ``check_subtask``: what the shop's state can decide. A purchase ("buy ...")
  is done once "Buy Now" was clicked; the root instruction too (a purchase is
  the only way to finish it); "search ..." once results are shown; "open" or
  "click" a product id once its page (or a sub-page) is open; "select" or
  "choose" an option once it is clicked. Whether a product *matches* the
  criteria is the executor's judgement, so those sub-tasks get None.
- ``describe_setting``: the search page without the instruction, so a
  sub-task's prompt states only its own goal.

The bridge holds no state and imports WebShop only inside its methods.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lorekit.envs.base import TextEnv

if TYPE_CHECKING:
    from lorekit.envs.webshop.env import WebShopEnv

SEP = " [SEP] "
STATE_CHARS = 2_000
_ASIN = re.compile(r"\b(b0[0-9a-z]{8})\b", re.IGNORECASE)
_BRACKETS = re.compile(r"[\[\]'\"]")


def _webshop(env: TextEnv) -> WebShopEnv | None:
    from lorekit.envs.webshop.env import WebShopEnv

    return env if isinstance(env, WebShopEnv) and env.goal is not None else None


def without_instruction(page: str) -> str:
    """``page`` minus its ``Instruction: [SEP] <text>`` pair."""
    parts = page.split(SEP)
    if "Instruction:" in parts:
        at = parts.index("Instruction:")
        del parts[at : at + 2]
    return SEP.join(parts)


def _words(text: str) -> str:
    return " ".join(_BRACKETS.sub(" ", text.lower()).split())


class WebShopBridge:
    """WebShop's answers to the controller's questions; see the module docstring."""

    def describe_setting(self, opening: str, goal: str) -> str:
        return without_instruction(opening)

    def describe_state(self, env: TextEnv) -> str:
        shop = _webshop(env)
        if shop is None:
            return ""
        browser = shop.browser
        lines = [f"Page: {browser.page}."]
        if browser.keywords:
            lines.append(f"Last search: {browser.keywords} (results page {browser.page_number}).")
        if browser.product is not None:
            asin = shop.products[browser.product].asin
            chosen = ", ".join(f"{k}: {v}" for k, v in browser.options.items()) or "none"
            lines.append(f"Open product: [{asin}]; options clicked: {chosen}.")
        page = without_instruction(shop.render_page())
        if len(page) > STATE_CHARS:
            page = page[:STATE_CHARS] + " ..."
        lines.append(f"Current page: {page}")
        return "\n".join(lines)

    def check_subtask(self, env: TextEnv, subtask: str) -> bool | None:
        shop = _webshop(env)
        if shop is None:
            return None
        browser = shop.browser
        assert shop.goal is not None
        text = _words(subtask)
        verb = text.split(" ", 1)[0] if text else ""
        bought = browser.page == "done"
        if verb in ("buy", "purchase") or text == _words(shop.goal.instruction_text):
            return bought
        if verb == "search":
            return bool(browser.keywords) and browser.page != "search"
        asin = _ASIN.search(subtask)
        open_asin = shop.products[browser.product].asin if browser.product is not None else None
        if verb in ("open", "click", "go") and asin is not None:
            return open_asin is not None and open_asin.lower() == asin.group(1).lower()
        if verb in ("select", "choose", "pick") and open_asin is not None:
            return any(value in text for value in browser.options.values())
        return None
