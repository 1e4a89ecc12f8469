"""Shopping instructions made from target products, the way WebShop's were.

A WebShop goal names a target product's attributes (a few of them), one
value per option group, and a price bound; the instruction text says those
in plain words and ends with ", and price lower than X dollars". The bound
follows the original's rule: of the multiples of 10 above the price, take the
first four, draw two and keep the larger (no bound when fewer than two exist).
Splits follow the original's order too: the first 500 goals are ``test``, the
next 1000 ``eval``, the rest ``train`` (scaled down for small catalogues).

For a product with distinctive words (``Product.details``: the distinct
catalogue style) the instruction also names one or two of them, the way
people wrote WebShop's instructions while looking at one product; targets,
options and bounds are the same as without them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lorekit.envs.webshop.catalog import Product, vocab

PRICE_STEPS = tuple(10.0 * i for i in range(1, 100))
NO_BOUND = 1_000_000.0
_ARTICLE = re.compile(r"(^|\s)a ([aeiou])")
SPLITS: tuple[str, ...] = ("test", "eval", "train")
GoalOption = str | tuple[str, str]
"""One goal option as the reward reads it: a plain value, or a (group, value) pair."""


@dataclass(frozen=True)
class Goal:
    """What one episode asks for (the fields of the original's goal dicts)."""

    asin: str
    category: str
    query: str
    name: str
    product_category: str
    instruction_text: str
    attributes: tuple[str, ...]
    goal_options: Mapping[str, str]
    price_upper: float
    option_values: tuple[str, ...] | None = None
    """The options as the plain list WebShop's human goals hold (two values may share a
    group, so ``goal_options`` cannot hold them all); None when ``goal_options`` has
    them all (generated goals)."""

    def option_list(self) -> list[str]:
        """The goal's option values, as the original's human goals list them."""
        if self.option_values is not None:
            return list(self.option_values)
        return list(self.goal_options.values())

    def as_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "asin": self.asin,
            "category": self.category,
            "query": self.query,
            "name": self.name,
            "product_category": self.product_category,
            "instruction_text": self.instruction_text,
            "attributes": list(self.attributes),
            "goal_options": dict(self.goal_options),
            "price_upper": self.price_upper,
        }
        if self.option_values is not None:
            data["option_values"] = list(self.option_values)
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Goal:
        return cls(
            asin=str(data["asin"]),
            category=str(data["category"]),
            query=str(data["query"]),
            name=str(data["name"]),
            product_category=str(data["product_category"]),
            instruction_text=str(data["instruction_text"]),
            attributes=tuple(str(a) for a in data["attributes"]),
            goal_options={str(k): str(v) for k, v in dict(data["goal_options"]).items()},
            price_upper=float(data["price_upper"]),
            option_values=(
                tuple(str(v) for v in data["option_values"])
                if data.get("option_values") is not None
                else None
            ),
        )


def price_bound(price: float, rng: random.Random) -> tuple[float, str]:
    """The goal's price bound and the words that state it (WebShop's rule)."""
    above = [p for p in PRICE_STEPS if p > price][:4]
    if len(above) < 2:
        return NO_BOUND, ""
    upper = max(rng.sample(above, 2))
    return upper, f", and price lower than {upper:.2f} dollars"


def _join(words: Sequence[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def option_phrase(options: Mapping[str, str]) -> str:
    """``" with color: navy, and size: large"``, as the original's synthetic goals read."""
    if not options:
        return ""
    return " with " + ", and ".join(f"{k}: {v}" for k, v in options.items())


def make_goal(
    product: Product, rng: random.Random, detail_rng: random.Random | None = None
) -> Goal:
    """An instruction for ``product``: some of its attributes, one value per option
    group, and a price bound; plus one or two of its distinctive words when it has
    some (drawn from ``detail_rng``, so the rest of the goal does not change)."""
    attributes = tuple(
        rng.sample(product.attributes, rng.randint(1, min(3, len(product.attributes))))
    )
    options = {group: rng.choice(values) for group, values in product.options.items()}
    noun = product.query
    template = rng.choice(vocab()["instructions"])
    details = ""
    if product.details:
        picker = detail_rng or random.Random(product.asin)
        count = 1 if len(product.details) == 1 or picker.random() < 0.6 else 2
        details = " ".join(picker.sample(product.details, count))
        template = picker.choice(vocab()["distinct_instructions"])
    text = template.format(
        attrs=_join(attributes), noun=noun, options=option_phrase(options), details=details
    )
    text = _ARTICLE.sub(r"\1an \2", text)
    upper, price_text = price_bound(product.price, rng)
    return Goal(
        asin=product.asin,
        category=product.category,
        query=product.query,
        name=product.title,
        product_category=product.product_category,
        instruction_text=text + price_text,
        attributes=attributes,
        goal_options=options,
        price_upper=upper,
    )


def make_goals(products: Sequence[Product], count: int, seed: int = 0) -> list[Goal]:
    """``count`` goals on products drawn without replacement (with, once all are used)."""
    rng = random.Random(f"webshop-goals/{seed}")
    detail_rng = random.Random(f"webshop-goal-details/{seed}")
    order = list(range(len(products)))
    rng.shuffle(order)
    goals = []
    for n in range(count):
        goals.append(make_goal(products[order[n % len(order)]], rng, detail_rng))
    return goals


def split_goals(goals: Sequence[Goal]) -> dict[str, list[Goal]]:
    """test / eval / train as the original cut them (500 / 1000 / rest), or in the
    same proportions (1 : 2 : rest) when there are fewer than 1500 goals."""
    n = len(goals)
    test, evaluation = (500, 1000) if n > 1500 else (max(1, n // 10), max(1, n // 5))
    return {
        "test": list(goals[:test]),
        "eval": list(goals[test : test + evaluation]),
        "train": list(goals[test + evaluation :]),
    }
