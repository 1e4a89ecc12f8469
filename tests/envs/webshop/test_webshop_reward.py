"""The reward on hand-made purchases (the original's on 1,380 recorded ones:
test_webshop_golden.py)."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from lorekit.envs.webshop import Goal, Product, generate_catalog, make_goal, score_purchase
from lorekit.envs.webshop.reward import normalize_color

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


def test_size_variants_match_fuzzily_as_in_the_original() -> None:
    # "x-large" holds "large" as a token: the original's fuzzy match (> 85) accepts it.
    product = replace(PRODUCT, options={"size": ("large", "x-large")})
    wanted = goal(goal_options={"size": "x-large"})
    parts = score_purchase(product, wanted, 20.0, {"size": "large"})
    assert (parts.option_matches, parts.reward) == (1, 1.0)
    strict = score_purchase(product, wanted, 20.0, {"size": "large"}, "strict")
    assert (strict.option_matches, strict.reward) == (0, pytest.approx(2 / 3))


def test_colours_are_reduced_by_the_originals_list_in_its_order() -> None:
    assert normalize_color("dark navy") == "dark"  # "dark" is listed before "navy"
    assert normalize_color("navy blue") == "blue"
    assert normalize_color("peppered") == "red"  # a colour word inside a value counts
    wanted = goal(goal_options={"color": "navy blue"})
    assert score_purchase(PRODUCT, wanted, 20.0, {"color": "light blue"}).option_matches == 1
    assert score_purchase(PRODUCT, wanted, 20.0, {"color": "dark navy"}).option_matches == 0


def test_an_option_is_not_credited_from_the_products_text() -> None:
    # Wanted black, bought red, "red" in the description: the option does not count.
    product = replace(PRODUCT, description="A red bottle.", options={"color": ("black", "red")})
    parts = score_purchase(product, goal(goal_options={"color": "black"}), 20.0, {"color": "red"})
    assert (parts.option_matches, parts.reward) == (0, pytest.approx(2 / 3))


def test_each_goal_option_counts_once_so_the_reward_never_exceeds_one() -> None:
    # Chosen options outside the goal's, found in the product's text, add nothing.
    chosen = {"size": "16 fl oz", "color": "pink", "scent": "citrus"}
    parts = score_purchase(PRODUCT, goal(), 20.0, chosen)
    assert (parts.option_matches, parts.reward) == (1, 1.0)
    rng = random.Random(2)
    for product in generate_catalog(60, seed=2):
        g = make_goal(product, rng)
        chosen = {k: rng.choice(v) for k, v in product.options.items()}
        chosen["extra"] = product.title.lower()
        assert score_purchase(product, g, 0.0, chosen).reward <= 1.0


def test_synthetic_goals_read_options_as_the_originals_dict_does() -> None:
    # The original matches a dict goal's (group, value) pair by its printed form: the
    # chosen "peppered" is reduced to "red", the pair is not, so it misses itself.
    wanted = goal(goal_options={"flavor": "peppered"})
    assert score_purchase(PRODUCT, wanted, 20.0, {"flavor": "peppered"}).option_matches == 1
    synthetic = score_purchase(PRODUCT, wanted, 20.0, {"flavor": "peppered"}, "synthetic")
    assert synthetic.option_matches == 0


def test_human_goals_score_every_listed_option() -> None:
    wanted = goal(goal_options={"size": "8 fl oz"}, option_values=("8 fl oz", "16 fl oz"))
    parts = score_purchase(PRODUCT, wanted, 20.0, {"size": "16 fl oz"})
    assert (parts.options, parts.option_matches) == (2, 1)
    with pytest.raises(ValueError, match="unknown reward variant"):
        score_purchase(PRODUCT, wanted, 20.0, {}, "lenient")


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


def test_the_env_takes_the_reward_variant_as_an_option() -> None:
    from lorekit.envs.webshop import WebShopEnv

    env = WebShopEnv(size=200, goals=50, reward="strict")
    env.reset("test-0")
    step = None
    while (action := env.expert_action()) is not None:
        step = env.step(action)
    assert step is not None and step.reward == 1.0  # the expert chooses exactly
    with pytest.raises(ValueError, match="unknown reward 'lenient'"):
        WebShopEnv(size=200, goals=50, reward="lenient")
