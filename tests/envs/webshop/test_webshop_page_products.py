"""``page_products``: how many of each results page's 10 products the shop shows (ADaPT's
and ReAct's WebShop code showed the first 3, ``page_len = 3``), while the pages still
hold ten each, so paging moves by ten as in the original."""

from __future__ import annotations

import re

import pytest

from lorekit.envs import make

_PRODUCT = re.compile(r"click\[B[0-9A-Z]{9}\]")


def _products(actions: list[str]) -> list[str]:
    return [a for a in actions if _PRODUCT.fullmatch(a)]


def _results(shown: int) -> tuple[list[str], list[str]]:
    env = make("webshop", page_products=shown, max_steps=None)
    env.reset(env.tasks("test")[0])
    env.step("search[easy install]")
    page1 = _products(env.candidate_actions())
    env.step("click[Next >]")
    page2 = _products(env.candidate_actions())
    return page1, page2


def test_three_products_shown_are_the_first_three_of_each_page_of_ten() -> None:
    all1, all2 = _results(10)
    few1, few2 = _results(3)
    assert (len(all1), len(all2)) == (10, 10)
    assert few1 == all1[:3] and few2 == all2[:3]


def test_a_hidden_product_cannot_be_clicked() -> None:
    all1, _ = _results(10)
    env = make("webshop", page_products=3)
    env.reset(env.tasks("test")[0])
    env.step("search[easy install]")
    step = env.step(all1[5])
    assert all1[5] not in env.candidate_actions()
    assert step.info.get("page") == "results"  # refused: still on the results page


@pytest.mark.parametrize("bad", [0, 11, "three"])
def test_a_bad_count_is_refused_naming_the_option(bad: object) -> None:
    with pytest.raises(ValueError, match="page_products: expected 1 to 10 products"):
        make("webshop", page_products=bad)
