"""The WebShop environment: find, configure and buy the product an instruction describes.

Actions, pages and reward follow WebShop's text mode (docs/webshop.md): a
search box, results 10 per page of the top 50, item pages with option buttons,
description/features/reviews sub-pages, and "Buy Now", which ends the episode
with the reward of :mod:`lorekit.envs.webshop.reward`. Actions are matched
case-insensitively like the original's (which lower-cases them). Products
come from the generated catalogue unless ``WEBSHOP_DATA`` names WebShop's files.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.envs.base import Observation, Step, Task, TextEnv, pick_task
from lorekit.envs.episodes import StepRules
from lorekit.envs.steplimit import manual_with_limit
from lorekit.envs.webshop.catalog import Product
from lorekit.envs.webshop.data import DATA_ENV, ShopData, generated_shop, load_shop
from lorekit.envs.webshop.expert import next_action
from lorekit.envs.webshop.goals import SPLITS, Goal
from lorekit.envs.webshop.pages import (
    BACK_TO_SEARCH,
    BUY_NOW,
    NEXT_PAGE,
    PREV_PAGE,
    PRODUCT_WINDOW,
    SUB_PAGES,
    Browser,
    clickables,
    option_group,
    render,
)
from lorekit.envs.webshop.reward import VARIANTS, RewardParts, score_purchase
from lorekit.envs.webshop.search import SEARCH_RETURN_N, SearchIndex, build_index

MESSAGES_FILE = Path(__file__).with_name("messages.yaml")
MAX_ACTION_CHARS = 500
_ACTION = re.compile(r"^\s*(search|click)\s*\[(.*)\]\s*$", re.IGNORECASE | re.DOTALL)


@functools.cache
def messages() -> Mapping[str, Any]:
    with MESSAGES_FILE.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yamlio.safe_load(fh)
    return data


class WebShopEnv(TextEnv):
    """WebShop's shop as a text environment: see the module docstring and the manual."""

    name = "webshop"
    # A click takes microseconds, but a search over a large catalogue can take tens of
    # milliseconds (docs/webshop.md): too long to hold the event loop, so a thread.
    execution = "thread"

    def __init__(
        self,
        *,
        size: int = 1000,
        goals: int = 2000,
        seed: int = 0,
        data_dir: str | None = None,
        search: str = "fts5",
        max_steps: int | None = 15,
        style: str = "plain",
        reward: str = "original",
        search_anywhere: bool = True,
        page_products: int = PRODUCT_WINDOW,
    ) -> None:
        """``reward``: ``original`` (WebShop's published reward), ``synthetic`` or
        ``strict`` (reward.yaml). ``search_anywhere``: a search works from every page, as
        in the original's text env; False allows it on the search page only.
        ``page_products``: how many of each results page's 10 products are shown and
        clickable (ADaPT's and ReAct's code showed the first 3)."""
        self.stepping = StepRules(max_steps)  # the cap and the end: the core's rules
        if type(page_products) is not int or not 1 <= page_products <= PRODUCT_WINDOW:
            raise ValueError(
                f"page_products: expected 1 to {PRODUCT_WINDOW} products, got {page_products!r}"
            )
        self.page_products = page_products
        if reward not in VARIANTS:
            raise ValueError(f"unknown reward {reward!r}; choose one of {', '.join(VARIANTS)}")
        self.reward_variant = reward
        self.search_anywhere = search_anywhere
        self.step_limit = self.stepping.step_limit
        self.max_steps = self.stepping.max_steps
        folder = data_dir if data_dir is not None else os.environ.get(DATA_ENV) or None
        self.data, self.index = shop_for(size, goals, seed, folder, search, style)
        self.products: list[Product] = self.data.products
        self._by_asin = {p.asin.lower(): n for n, p in enumerate(self.products)}
        self._tasks = {
            split: [_task(split, n, g) for n, g in enumerate(self.data.splits[split])]
            for split in SPLITS
        }
        self._by_id = {t.id: t for split in SPLITS for t in self._tasks[split]}
        self._msg = messages()
        self._goal: Goal | None = None
        self._browser = Browser(shown=self.page_products)
        self._reward = 0.0
        self._clicked_option: str | None = None

    # -- catalogue -------------------------------------------------------------

    def tasks(self, split: str = "test") -> list[Task]:
        if split not in self._tasks:
            raise ValueError(f"unknown split {split!r}; known splits: {', '.join(SPLITS)}")
        return list(self._tasks[split])

    def splits(self) -> tuple[str, ...]:
        return tuple(s for s in SPLITS if self._tasks[s])

    def describe_split(self, split: str) -> str:
        return f"{len(self.tasks(split))} instructions ({split}) on the {self.data.provenance}"

    def action_forms(self) -> list[str]:
        return list(self._msg["action_forms"])

    def manual(self) -> str:
        return manual_with_limit(self._msg, self.step_limit)

    @property
    def goal(self) -> Goal | None:
        return self._goal

    @property
    def browser(self) -> Browser:
        """The current page and choices (read it, do not change it)."""
        return self._browser

    def product(self, asin: str) -> Product:
        return self.products[self._by_asin[asin.lower()]]

    # -- episode ---------------------------------------------------------------

    def reset(self, task: Task | str | None = None, seed: int | None = None) -> Observation:
        chosen = self._pick(task, seed)
        self._goal = Goal.from_data(chosen.data)
        self._browser = Browser(shown=self.page_products)
        self._reward = 0.0
        self._clicked_option = None
        self.stepping.begin()
        text = self._page()
        return Observation(text, {"task_id": chosen.id, "page": "search"})

    def _pick(self, task: Task | str | None, seed: int | None) -> Task:
        return pick_task(
            task,
            seed,
            self._tasks["test"],
            self._by_id,
            "unknown WebShop task {task!r}; task ids look like 'test-0'",
        )

    def _page(self) -> str:
        assert self._goal is not None
        return render(self._browser, self.products, self._goal.instruction_text, self._reward)

    def render_page(self) -> str:
        """The current page's text, as the last step showed it (empty before ``reset``)."""
        return self._page() if self._goal is not None else ""

    def valid_clicks(self) -> list[str]:
        return clickables(self._browser, self.products)

    def step(self, action: str) -> Step:
        refused = self.stepping.refuse()
        if refused is not None:
            return refused
        raw = action if isinstance(action, str) else str(action)
        error = self._apply(raw)
        parts: RewardParts | None = None
        if error is None and self._browser.page == "done":
            parts = self._purchase()
        text = error if error is not None else self._page()
        if error is None and self._clicked_option is not None:
            # WebShop's rich text mode says so; the plain page would look unchanged.
            text = str(self._msg["clicked"]).format(value=self._clicked_option) + text
        reward = parts.reward if parts is not None else 0.0
        info: dict[str, Any] = {
            "valid": error is None,
            "success": reward >= 1.0,
            "page": self._browser.page,
        }
        if parts is not None:
            info["reward_parts"] = parts.as_info()
            info["purchased"] = self.products[self._browser.product or 0].asin
            info["options"] = dict(self._browser.options)
        return self.stepping.settle(Step(text, reward, parts is not None, info))

    def _purchase(self) -> RewardParts:
        assert self._goal is not None and self._browser.product is not None
        product = self.products[self._browser.product]
        parts = score_purchase(
            product, self._goal, product.price, self._browser.options, self.reward_variant
        )
        self._reward = parts.reward
        return parts

    def _invalid(self, key: str, **fields: str) -> str:
        searchable = self.search_anywhere or self._browser.page == "search"
        valid = ["search[<query>]"] if searchable else []
        valid += [f"click[{c}]" for c in self.valid_clicks()]
        return str(self._msg[key]).format(valid=", ".join(valid), **fields)

    def _apply(self, raw: str) -> str | None:
        """Do ``raw``; the observation text of an invalid action, else None."""
        shown = raw if len(raw) <= 60 else raw[:60] + "..."
        if len(raw) > MAX_ACTION_CHARS:
            return self._invalid("too_long", length=str(len(raw)), limit=str(MAX_ACTION_CHARS))
        match = _ACTION.match(raw)
        if match is None:
            return self._invalid("malformed", action=shown)
        verb, argument = match.group(1).lower(), " ".join(match.group(2).split())
        self._clicked_option = None
        browser = self._browser
        if verb == "search":
            if browser.page != "search" and not self.search_anywhere:
                return self._invalid("no_search_bar")
            if not argument:
                assert self._goal is not None
                return str(self._msg["empty_search"]).format(example=self._goal.query)
            browser.keywords = argument
            browser.results = self.index.search(argument.lower(), SEARCH_RETURN_N)
            browser.page, browser.page_number = "results", 1
            browser.product, browser.options = None, {}
            return None
        return self._click(match.group(2))

    def _find_button(self, argument: str) -> str | None:
        """The button ``argument`` names: as the original matches it (lower-cased, blanks
        kept, so ``navy  |  white`` from ``navy / white`` needs its two spaces), else with
        runs of blanks taken as one (LoreKit's leniency)."""
        clicks = self.valid_clicks()
        lowered = {c.lower(): c for c in clicks}
        if argument.lower() in lowered:
            return lowered[argument.lower()]
        collapsed = {" ".join(c.lower().split()): c for c in clicks}
        return collapsed.get(" ".join(argument.lower().split()))

    def _click(self, argument: str) -> str | None:
        browser = self._browser
        button = self._find_button(argument)
        if button is None:
            return self._invalid("no_button", button=" ".join(argument.split()))
        if button == BACK_TO_SEARCH:
            self._browser = Browser(shown=self.page_products)
        elif button == NEXT_PAGE:
            browser.page_number += 1
        elif button == PREV_PAGE:
            if browser.page == "results":
                browser.page_number -= 1
            elif browser.page == "item":
                browser.page, browser.product, browser.options = "results", None, {}
            else:
                browser.page = "item"
        elif browser.page == "results":
            browser.page, browser.product = "item", self._by_asin[button.lower()]
            browser.options = {}
        elif button in SUB_PAGES:
            browser.page = button.lower()
        elif button == BUY_NOW:
            browser.page = "done"
        else:
            assert browser.product is not None
            group = option_group(self.products[browser.product], button)
            if group is not None:
                browser.options[group] = button
                self._clicked_option = button
        return None

    # -- helpers for agents ------------------------------------------------------

    def candidate_actions(self) -> list[str]:
        """The clickables of the page as ``click[...]``, and on the search page a
        search with the instruction's words."""
        if self._goal is None or self.stepping.over:
            return []
        out = [f"click[{c}]" for c in self.valid_clicks()]
        if self._browser.page == "search":
            out.insert(0, f"search[{self._goal.instruction_text.split(', and price')[0]}]")
        return out

    def expert_action(self) -> str | None:
        if self._goal is None or self.stepping.over:
            return None
        return next_action(self)


def _task(split: str, index: int, goal: Goal) -> Task:
    return Task(f"{split}-{index}", goal.instruction_text, goal.category, goal.as_data())


@functools.lru_cache(maxsize=4)
def shop_for(
    size: int, goals: int, seed: int, data_dir: str | None, search: str, style: str = "plain"
) -> tuple[ShopData, SearchIndex]:
    """The shop and its index for these arguments, built once per process: both are
    read-only, so envs with equal arguments share them."""
    data = load_shop(data_dir, seed) or generated_shop(size, goals, seed, style)
    index = build_index([p.search_text() for p in data.products], search)
    return data, index
