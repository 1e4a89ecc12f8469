"""The reward on hand-made purchases, and against an independent reimplementation."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from lorekit.envs.webshop import Goal, Product, generate_catalog, make_goal, score_purchase
from lorekit.envs.webshop.reward import normalize_color, title_nouns

PRODUCT = Product(
    asin="B0TEST0001",
    title="Lumo Sulfate Free Argan Oil Shampoo",
    category="beauty",
    query="shampoo",
    product_category="Beauty & Personal Care › Hair Care › Shampoo & Conditioner › Shampoos",
    description="A gentle shampoo for daily use. It is paraben free.",
    bullet_points=("Cruelty free formula", "Smells of citrus"),
    attributes=("sulfate free", "long lasting"),
    options={"size": ("8 fl oz", "16 fl oz"), "color": ("dark navy", "pink")},
    pricing=(20.0,),
    price=20.0,
)


def goal(**changes: Any) -> Goal:
    base = Goal(
        asin=PRODUCT.asin,
        category="beauty",
        query="shampoo",
        name=PRODUCT.title,
        product_category=PRODUCT.product_category,
        instruction_text="i want a sulfate free shampoo",
        attributes=("sulfate free",),
        goal_options={"size": "16 fl oz"},
        price_upper=30.0,
    )
    return replace(base, **changes)


def test_exact_purchase_scores_one() -> None:
    parts = score_purchase(PRODUCT, goal(), 20.0, {"size": "16 fl oz"})
    assert parts.reward == 1.0
    assert (parts.attribute_matches, parts.option_matches, parts.price_ok) == (1, 1, True)


def test_attribute_found_in_text_but_not_in_list_counts() -> None:
    # "paraben free" is only in the description, "cruelty free" only in a bullet point.
    parts = score_purchase(PRODUCT, goal(attributes=("paraben free", "cruelty free")), 20.0, {})
    assert parts.attribute_matches == 2


def test_missing_attribute_and_wrong_option_and_price() -> None:
    wanted = goal(attributes=("sulfate free", "gluten free"), price_upper=10.0)
    parts = score_purchase(PRODUCT, wanted, 20.0, {"size": "8 fl oz"})
    assert (parts.attribute_matches, parts.option_matches, parts.price_ok) == (1, 0, False)
    assert parts.reward == pytest.approx(1 / 4)


def test_size_options_need_an_exact_match() -> None:
    fuzzy_size = goal(goal_options={"size": "16 fl oz."})
    assert score_purchase(PRODUCT, fuzzy_size, 20.0, {"size": "16 fl oz"}).option_matches == 0


def test_colours_are_reduced_to_their_base_colour() -> None:
    assert normalize_color("dark navy") == "navy"
    wanted = goal(goal_options={"color": "navy"})
    assert score_purchase(PRODUCT, wanted, 20.0, {"color": "dark navy"}).option_matches == 1


def test_type_factor_cases() -> None:
    other_title = "Lumo Sulfate Free Argan Oil Conditioner"
    # Same query: full credit once enough title nouns are shared.
    assert score_purchase(PRODUCT, goal(name=other_title), 20.0, {}).r_type == 1.0
    # No query or category match and a weak title overlap: halved.
    stranger = goal(
        query="desk", product_category="Home › Office", name="Lumo Desk Lamp Cable Stand"
    )
    assert score_purchase(PRODUCT, stranger, 20.0, {}).r_type == 0.5
    # Under 10% of the goal's nouns shared: 0.1; none shared: 0.
    many = " ".join(f"word{c}" for c in "abcdefghijklm")
    weak = goal(name=f"Lumo {many}")
    assert score_purchase(PRODUCT, weak, 20.0, {}).r_type == 0.1
    nothing = goal(name="Velvet Desk Lamp")
    parts = score_purchase(PRODUCT, nothing, 20.0, {"size": "16 fl oz"})
    assert (parts.r_type, parts.reward) == (0.0, 0.0)


# -- an independent reimplementation of the published formula, on WebShop's dict schema -------
# Written from the formula, not from reward.py: thefuzz directly, its own colour rule and
# category split. Only the noun tagger is shared: title_nouns is the documented stand-in
# for spaCy, the one part with no independent reference here.

COLORS = ["black", "white", "red", "blue", "navy", "green", "olive", "grey", "gray", "pink",
          "purple", "beige", "brown", "yellow", "orange", "gold", "silver", "ivory", "teal",
          "khaki", "burgundy", "coral", "charcoal", "cream"]  # fmt: skip


def as_original(p: Product) -> dict[str, Any]:
    return {
        "Title": p.title,
        "BulletPoints": list(p.bullet_points),
        "Description": p.description,
        "Attributes": list(p.attributes),
        "query": p.query,
        "product_category": p.product_category,
        "name": p.title,
    }


def base_color(text: str) -> str:
    return next((c for c in COLORS if c in text), text)


def published_reward(
    prod: dict[str, Any],
    g: Goal,
    price: float,
    options: dict[str, str],
    ratio: Callable[[str, str], int],
) -> float:
    text_fields = (prod["Title"].lower(), " ".join(prod["BulletPoints"]).lower(),
                   prod["Description"].lower())  # fmt: skip
    nouns_got = title_nouns(prod["name"])
    nouns_want = title_nouns(g.name)
    score = len(nouns_got & nouns_want) / len(nouns_want) if nouns_want else 0.2
    cats = lambda s: {x.strip() for x in s.split("›")}  # noqa: E731
    same = (
        prod["query"] == g.query
        or len(cats(prod["product_category"]) & cats(g.product_category)) >= 2
    )
    r_type = 1.0 if (same or score > 0.2) else 0.5
    r_type = 0.0 if score == 0 else (0.1 if score < 0.1 else r_type)
    attrs = 0
    for a in g.attributes:
        if any(ratio(p, a) > 85 for p in prod["Attributes"]) or any(a in t for t in text_fields):
            attrs += 1
    wanted = [base_color(v) for v in g.goal_options.values()]
    opts = 0
    for key, value in options.items():
        v = base_color(value)
        hit = v in wanted if key.lower() == "size" else any(ratio(w, v) > 85 for w in wanted)
        opts += hit or any(v in t for t in text_fields)
    total = (attrs + opts + (price <= g.price_upper)) / (
        len(g.attributes) + len(g.goal_options) + 1
    )
    return total * r_type


def test_agrees_with_the_published_formula_on_200_random_purchases() -> None:
    fuzz = pytest.importorskip("thefuzz.fuzz")  # the webshop extra (in the test extra)
    rng = random.Random(7)
    products = generate_catalog(300, seed=3)
    rewards = []
    for _ in range(200):
        target = rng.choice(products)
        bought = target if rng.random() < 0.3 else rng.choice(products)
        g = make_goal(target, rng)
        chosen = {k: rng.choice(v) for k, v in bought.options.items() if rng.random() < 0.7}
        price = bought.price if rng.random() < 0.8 else g.price_upper + 1
        ours = score_purchase(bought, g, price, chosen).reward
        assert ours == pytest.approx(
            published_reward(as_original(bought), g, price, chosen, fuzz.token_set_ratio)
        )
        rewards.append(ours)
    assert len(set(rewards)) > 10  # the sample covers many different scores
