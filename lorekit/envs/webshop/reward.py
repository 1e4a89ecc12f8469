"""WebShop's reward for a purchase, with its parts kept apart for ``info``.

reward = (attribute matches + option matches + [price <= bound])
         / (goal attributes + goal options + 1) * type factor

- An attribute matches when one of the product's attributes is a fuzzy match
  (token-set ratio > 85), or when it appears in the title, bullet points or
  description.
- Each *goal* option counts once, when some chosen option value is a fuzzy
  match of it (token-set ratio > 85) after both are reduced by the colour
  words of ``reward.yaml`` (the first listed word inside a value stands for
  it). The product's text gives no option credit, so the reward never
  exceeds 1. Goal options are a list of values, as in WebShop's human goals
  (the ones every published score uses); generated goals are scored the same.
- The type factor is 1 when the purchased product shares the goal's query,
  two levels of its category path, or more than 20% of the title's nouns;
  0.5 when none of those hold; 0.1 when under 10% of the nouns are shared;
  0 when none are.

Two opt-in variants (``WebShopEnv(reward=...)``, ``reward.yaml``) change only
the option part. ``synthetic``: the original's reward on its *synthetic*
goals, whose options are a dict; it hands each (group, value) pair to the
matcher, which reads the pair's printed form, so the group name takes part
and a value holding a colour word can miss itself ("peppered" is reduced to
"red" on the chosen side only). ``strict``: a goal option counts when exactly
that value was chosen (in its group, for a generated goal).

WebShop tags nouns with a spaCy model, which is not installable from a
registry under its own name; :func:`title_nouns` stands in with a heuristic
that keeps the title words spaCy tags as nouns or proper nouns in title-case
product names: every alphabetic word except function words and a short list
of common adjectives (docs/webshop.md).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lorekit import yamlio
from lorekit.envs.webshop.catalog import SEP_CATEGORY, Product
from lorekit.envs.webshop.fuzzy import token_set_ratio
from lorekit.envs.webshop.goals import Goal, GoalOption

REWARD_FILE = Path(__file__).with_name("reward.yaml")
MATCH_THRESHOLD = 85
VARIANTS: tuple[str, ...] = ("original", "synthetic", "strict")
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


@functools.cache
def reward_data() -> Mapping[str, Any]:
    """``reward.yaml``: the colour words and the variants' descriptions."""
    with REWARD_FILE.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yamlio.safe_load(fh)
    return data


def color_words() -> tuple[str, ...]:
    return tuple(str(c) for c in reward_data()["color_words"])


def title_nouns(title: str) -> set[str]:
    """The heuristic noun set of a product title (see the module docstring)."""
    return {w for w in _WORD.findall(title.lower()) if len(w) > 1 and w not in _NOT_NOUNS}


def normalize_color(value: GoalOption) -> GoalOption:
    """The first colour word found in ``value`` (``"dark navy"`` -> ``"dark"``), else ``value``.

    A value is searched for the word inside it; a (group, value) pair only for a part
    that *is* the word, which is what the original's ``in`` test does on a pair."""
    for color in color_words():
        if color in value:
            return color
    return value


def _fuzzy_text(option: GoalOption) -> str:
    """What the fuzzy matcher reads: a value itself, a pair as printed (``"('size', 'l')"``;
    the matcher keeps only its letters and digits, so the group name counts as words)."""
    return option if isinstance(option, str) else str(option)


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


def option_matches(wanted: Sequence[GoalOption], chosen: Mapping[str, str]) -> int:
    """Goal options matched by a chosen value (the original's rule): each counts once."""
    bought = [_fuzzy_text(normalize_color(v)) for v in chosen.values()]
    count = 0
    for option in wanted:
        target = _fuzzy_text(normalize_color(option))
        if any(token_set_ratio(b, target) > MATCH_THRESHOLD for b in bought):
            count += 1
    return count


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def strict_option_matches(wanted: Sequence[GoalOption], chosen: Mapping[str, str]) -> int:
    """Goal options chosen exactly (in their group, for a pair): each counts once."""
    count = 0
    for option in wanted:
        if isinstance(option, str):
            hit = any(_same(option, v) for v in chosen.values())
        else:
            group, value = option
            hit = any(_same(group, g) and _same(value, v) for g, v in chosen.items())
        count += hit
    return count


def score_purchase(
    product: Product,
    goal: Goal,
    price: float,
    chosen: Mapping[str, str],
    variant: str = "original",
) -> RewardParts:
    """The reward for buying ``product`` at ``price`` with options ``chosen``
    (``variant``: one of :data:`VARIANTS`, see ``reward.yaml``)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown reward variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    factor, query_match, category_match, title_score = type_factor(product, goal)
    attrs = attribute_matches(product, goal.attributes)
    wanted: list[GoalOption] = list(goal.option_list())
    if variant == "synthetic" or (variant == "strict" and goal.option_values is None):
        wanted = list(goal.goal_options.items())
    if variant == "strict":
        opts = strict_option_matches(wanted, chosen)
    else:
        opts = option_matches(wanted, chosen)
    price_ok = price <= goal.price_upper
    total = (attrs + opts + int(price_ok)) / (len(goal.attributes) + len(wanted) + 1)
    return RewardParts(
        reward=total * factor,
        r_type=factor,
        attribute_matches=attrs,
        attributes=len(goal.attributes),
        option_matches=opts,
        options=len(wanted),
        price_ok=price_ok,
        query_match=query_match,
        category_match=category_match,
        title_score=title_score,
    )
