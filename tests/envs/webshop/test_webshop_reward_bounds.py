"""WebShop's reward at each of its boundaries: the price bound, the fuzzy-match
threshold, the category overlap and the title-noun cut-offs of the type factor.

Each boundary is checked on both sides, so moving it by one (``<`` for ``<=``,
``>=`` for ``>``) fails a test.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_webshop_reward import PRODUCT, goal

from lorekit.envs.webshop import reward as reward_module
from lorekit.envs.webshop import score_purchase
from lorekit.envs.webshop.reward import type_factor


@pytest.mark.parametrize(
    ("price", "ok"),
    [(29.99, True), (30.0, True), (30.01, False), (31.0, False)],
)
def test_price_at_the_bound_keeps_its_point(price: float, ok: bool) -> None:
    parts = score_purchase(PRODUCT, goal(price_upper=30.0), price, {"size": "16 fl oz"})
    assert parts.price_ok is ok
    # 1 attribute + 1 option + the price point, out of 3
    assert parts.reward == pytest.approx((2 + int(ok)) / 3)


@pytest.mark.parametrize(("ratio", "matched"), [(84, 0), (85, 0), (86, 1)])
def test_fuzzy_matches_need_more_than_85(
    monkeypatch: pytest.MonkeyPatch, ratio: int, matched: int
) -> None:
    monkeypatch.setattr(reward_module, "token_set_ratio", lambda a, b: ratio)
    # neither value is in the product's text, so only the fuzzy ratio decides
    wanted = goal(attributes=("zz-attr",), goal_options={"color": "qq-colour"})
    parts = score_purchase(PRODUCT, wanted, 20.0, {"color": "xx-colour"})
    assert (parts.attribute_matches, parts.option_matches) == (matched, matched)


TEN = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
"""A goal title of ten nouns: sharing k of them gives a title score of k / 10."""


def _titled(
    title: str, *, query: str = "other", category: str = "A › B › C", name: str = TEN
) -> float:
    product = replace(PRODUCT, title=title, query=query, product_category=category)
    return type_factor(product, goal(name=name))[0]


def test_type_factor_title_cut_offs() -> None:
    assert _titled("nothing in common") == 0.0
    assert _titled("alpha", name=TEN + " lambda") == 0.1  # 1/11: under 0.1
    assert _titled("alpha") == 0.5  # 0.1 exactly: not under 0.1
    assert _titled("alpha beta") == 0.5  # 0.2 exactly: not over 0.2
    assert _titled("alpha beta gamma") == 1.0  # 0.3: over 0.2
    # a shared query or two shared category levels lift the factor to 1 ...
    assert _titled("alpha beta", query="shampoo") == 1.0
    shared_two = "Beauty & Personal Care › Hair Care › X"
    assert _titled("alpha beta", category=shared_two) == 1.0
    shared_one = "Beauty & Personal Care › Y › X"
    assert _titled("alpha beta", category=shared_one) == 0.5
    # ... but not past the noun cut-offs
    assert _titled("alpha", query="shampoo", name=TEN + " lambda") == 0.1
    assert _titled("nothing here", query="shampoo") == 0.0
