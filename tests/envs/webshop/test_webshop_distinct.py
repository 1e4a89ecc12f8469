"""The distinct catalogue style: titles carry line names and materials, and instructions name
one or two of them, so search still finds the target when many products share type and
attributes."""

from __future__ import annotations

import pytest

from lorekit.envs.webshop import WebShopEnv, build_index, generate_catalog, make_goals


def test_distinct_style_adds_words_to_the_same_products() -> None:
    plain = generate_catalog(300, seed=3)
    distinct = generate_catalog(300, seed=3, style="distinct")
    assert distinct == generate_catalog(300, seed=3, style="distinct")  # seeded
    assert generate_catalog(100, seed=3, style="distinct") == distinct[:100]
    for before, after in zip(plain, distinct, strict=True):
        assert (before.asin, before.options, before.pricing) == (
            after.asin, after.options, after.pricing)  # fmt: skip
        assert not before.details and len(after.details) == 2
        assert all(word in after.title.lower() for word in after.details)
    # Titles are (nearly) all different, unlike the plain style's.
    assert len({p.title for p in distinct}) == len(distinct)


def test_instructions_name_the_targets_details_and_keep_the_rest() -> None:
    plain = generate_catalog(300, seed=3)
    distinct = generate_catalog(300, seed=3, style="distinct")
    for before, after in zip(make_goals(plain, 100, 4), make_goals(distinct, 100, 4), strict=True):
        assert (before.asin, before.attributes, before.goal_options, before.price_upper) == (
            after.asin, after.attributes, after.goal_options, after.price_upper)  # fmt: skip
        product = next(p for p in distinct if p.asin == after.asin)
        named = [d for d in product.details if d in after.instruction_text]
        assert 1 <= len(named) <= 2, after.instruction_text
        assert not any(d in before.instruction_text for d in product.details)


def test_unknown_style_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown catalogue style 'fancy'"):
        generate_catalog(10, style="fancy")


def test_search_finds_distinct_targets_where_plain_ones_are_lost() -> None:
    recall = {}
    for style in ("plain", "distinct"):
        products = generate_catalog(3000, seed=0, style=style)
        goals = make_goals(products, 150, seed=1)
        index = build_index([p.search_text() for p in products], "fts5")
        where = {p.asin: n for n, p in enumerate(products)}
        recall[style] = sum(where[g.asin] in index.search(g.instruction_text, 10) for g in goals)
    assert recall["distinct"] >= 0.95 * 150 and recall["distinct"] > recall["plain"]


def test_expert_reaches_one_in_a_distinct_shop() -> None:
    env = WebShopEnv(size=500, goals=300, style="distinct")
    assert "distinct style" in env.describe_split("test")
    for task in env.tasks("test")[:20]:
        env.reset(task)
        step = None
        while (action := env.expert_action()) is not None:
            step = env.step(action)
        assert step is not None and step.reward == 1.0, task.id
