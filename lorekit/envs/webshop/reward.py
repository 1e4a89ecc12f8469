"""WebShop's reward for a purchase, with its parts kept apart for ``info``.

reward = (attribute matches + option matches + [price <= bound])
         / (goal attributes + goal options + 1) * type factor

- An attribute matches when one of the product's attributes is a fuzzy match
  (token-set ratio > 85), or when it appears in the title, bullet points or
  description.
- Each chosen option counts when it matches a goal option (exactly for a
  ``size`` group, fuzzily otherwise; colours reduced to their base colour
  first) or appears in the title, bullet points or description.
- The type factor is 1 when the purchased product shares the goal's query,
  two levels of its category path, or more than 20% of the title's nouns;
  0.5 when none of those hold; 0.1 when under 10% of the nouns are shared;
  0 when none are.

WebShop tags nouns with a spaCy model, which is not installable from a
registry under its own name; :func:`title_nouns` stands in with a heuristic
that keeps the title words spaCy tags as nouns or proper nouns in title-case
product names: every alphabetic word except function words and a short list
of common adjectives (docs/webshop.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from lorekit.envs.webshop.catalog import SEP_CATEGORY, Product, vocab
from lorekit.envs.webshop.fuzzy import token_set_ratio
from lorekit.envs.webshop.goals import Goal

MATCH_THRESHOLD = 85
EXACT_GROUPS = frozenset({"size"})
_WORD = re.compile(r"[a-z][a-z'-]*")
_NOT_NOUNS = frozenset(
    " ".join(
        [
            "a an the and or of for with without in on to by from at as is are be it its",
            "this that your you our my new free easy high low long short best great fast",
            "quick soft light heavy extra super ultra premium natural organic perfect small",
            "medium large big",
        ]
    ).split()
)


def title_nouns(title: str) -> set[str]:
    """The heuristic noun set of a product title (see the module docstring)."""
    return {w for w in _WORD.findall(title.lower()) if len(w) > 1 and w not in _NOT_NOUNS}


def normalize_color(value: str) -> str:
    """The first known colour inside ``value`` (``"dark navy"`` -> ``"navy"``), else ``value``."""
    for color in vocab()["colors"]:
        if color in value:
            return str(color)
    return value


@dataclass(frozen=True)
class RewardParts:
    """One purchase's score and how it was reached."""

    reward: float
    r_type: float
    attribute_matches: int
    attributes: int
    option_matches: int
    options: int
    price_ok: bool
    query_match: bool
    category_match: bool
    title_score: float

    def as_info(self) -> dict[str, Any]:
        return asdict(self)


def _in_text(value: str, product: Product) -> bool:
    return (
        value in product.title.lower()
        or value in " ".join(product.bullet_points).lower()
        or value in product.description.lower()
    )


def type_factor(product: Product, goal: Goal) -> tuple[float, bool, bool, float]:
    """(factor, query match, category match, title score)."""
    query_match = product.query == goal.query
    mine = {part.strip() for part in product.product_category.split(SEP_CATEGORY.strip())}
    wanted = {part.strip() for part in goal.product_category.split(SEP_CATEGORY.strip())}
    category_match = len(mine & wanted) >= 2
    desired = title_nouns(goal.name)
    got = title_nouns(product.title)
    title_score = len(got & desired) / len(desired) if desired else 0.2
    factor = 1.0
    if not (query_match or category_match or title_score > 0.2):
        factor = 0.5
    if title_score < 0.1:
        factor = 0.1
    if title_score == 0.0:
        factor = 0.0
    return factor, query_match, category_match, title_score


def attribute_matches(product: Product, wanted: Iterable[str]) -> int:
    count = 0
    for goal_attr in wanted:
        fuzzy = any(token_set_ratio(m, goal_attr) > MATCH_THRESHOLD for m in product.attributes)
        if fuzzy or _in_text(goal_attr, product):
            count += 1
    return count


def option_matches(product: Product, wanted: Iterable[str], chosen: Mapping[str, str]) -> int:
    goal_values = [normalize_color(v) for v in wanted]
    count = 0
    for group, raw in chosen.items():
        value = normalize_color(raw)
        if group.lower() in EXACT_GROUPS:
            matched = value in goal_values
        else:
            matched = any(token_set_ratio(g, value) > MATCH_THRESHOLD for g in goal_values)
        if matched or _in_text(value, product):
            count += 1
    return count


def score_purchase(
    product: Product, goal: Goal, price: float, chosen: Mapping[str, str]
) -> RewardParts:
    """The reward for buying ``product`` at ``price`` with options ``chosen``."""
    factor, query_match, category_match, title_score = type_factor(product, goal)
    attrs = attribute_matches(product, goal.attributes)
    opts = option_matches(product, goal.goal_options.values(), chosen)
    price_ok = price <= goal.price_upper
    total = (attrs + opts + int(price_ok)) / (len(goal.attributes) + len(goal.goal_options) + 1)
    return RewardParts(
        reward=total * factor,
        r_type=factor,
        attribute_matches=attrs,
        attributes=len(goal.attributes),
        option_matches=opts,
        options=len(goal.goal_options),
        price_ok=price_ok,
        query_match=query_match,
        category_match=category_match,
        title_score=title_score,
    )
