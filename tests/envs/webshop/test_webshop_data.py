"""WebShop's data files (WEBSHOP_DATA), tested on files in that layout from the generator."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from lorekit.envs.webshop import WebShopEnv, generate_catalog, load_shop, make_goals
from lorekit.envs.webshop.data import (
    ATTRIBUTES_FILE,
    DATA_ENV,
    FULL_ATTRIBUTES_FILE,
    FULL_PRODUCTS_FILE,
    HUMAN_FILE,
    PRODUCTS_FILE,
    write_webshop_files,
)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    products = generate_catalog(120, seed=5)
    write_webshop_files(tmp_path, products, make_goals(products, 200, seed=5))
    return tmp_path


def test_files_round_trip_to_the_same_products(data_dir: Path) -> None:
    original = {p.asin: p for p in generate_catalog(120, seed=5)}
    shop = load_shop(data_dir)
    assert shop is not None and len(shop.products) == 120
    for product in shop.products:
        source = original[product.asin]
        assert (product.title, product.options, product.attributes, product.pricing) == (
            source.title, source.options, source.attributes, source.pricing)  # fmt: skip
        assert product.bullet_points == source.bullet_points and product.reviews == source.reviews
        assert product.pricing[0] <= product.price <= product.pricing[-1]
    goals = [g for split in shop.splits.values() for g in split]
    assert len(goals) == 200
    assert all(g.instruction_text and g.attributes for g in goals)


def test_env_uses_webshop_data_from_the_environment(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATA_ENV, str(data_dir))
    env = WebShopEnv()
    assert len(env.products) == 120
    assert "WebShop's data files" in env.describe_split("test")
    assert "generated catalogue" not in env.describe_split("test")
    for task in env.tasks("test")[:10]:
        env.reset(task)
        step = None
        while (action := env.expert_action()) is not None:
            step = env.step(action)
        assert step is not None and step.reward == 1.0


def test_skips_bad_ids_like_the_original(data_dir: Path) -> None:
    path = data_dir / PRODUCTS_FILE
    raw = json.loads(path.read_text())
    raw.append(dict(raw[0]))  # a duplicate
    raw.append({**raw[1], "asin": "nan"})
    path.write_text(json.dumps(raw))
    shop = load_shop(data_dir)
    assert shop is not None and len(shop.products) == 120


def test_missing_files_name_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    assert load_shop(None) is None
    with pytest.raises(FileNotFoundError, match=r"items_shuffle_1000\.json"):
        load_shop(tmp_path)


def test_goals_come_in_the_originals_order(data_dir: Path) -> None:
    # The original walks products in file order, each product's human instructions in
    # order, then shuffles with seed 233: test-0 is its goal 0.
    raw = json.loads((data_dir / PRODUCTS_FILE).read_text())
    human = json.loads((data_dir / HUMAN_FILE).read_text())
    assert list(human) != [p["asin"] for p in raw if p["asin"] in human]  # orders differ
    walk = [(p["asin"], e["instruction"]) for p in raw for e in human.get(p["asin"], [])]
    random.Random(233).shuffle(walk)
    shop = load_shop(data_dir)
    assert shop is not None
    goals = [g for split in ("test", "eval", "train") for g in shop.splits[split]]
    got = [(g.asin, g.instruction_text.split(", and price lower than")[0]) for g in goals]
    assert got == walk


def test_the_full_sets_file_names_are_accepted(data_dir: Path) -> None:
    (data_dir / PRODUCTS_FILE).rename(data_dir / FULL_PRODUCTS_FILE)
    (data_dir / ATTRIBUTES_FILE).rename(data_dir / FULL_ATTRIBUTES_FILE)
    shop = load_shop(data_dir)
    assert shop is not None and len(shop.products) == 120
    assert FULL_PRODUCTS_FILE in shop.provenance


def test_an_empty_attribute_list_stays_empty(data_dir: Path) -> None:
    path = data_dir / ATTRIBUTES_FILE
    attrs = json.loads(path.read_text())
    first, second = list(attrs)[:2]
    attrs[first]["attributes"] = []
    del attrs[second]
    path.write_text(json.dumps(attrs))
    shop = load_shop(data_dir)
    assert shop is not None
    by_asin = {p.asin: p for p in shop.products}
    assert by_asin[first].attributes == ()
    assert by_asin[second].attributes == ("DUMMY_ATTR",)  # no entry: the placeholder


def test_human_goal_options_keep_every_value(data_dir: Path) -> None:
    # Two values of one option group: both stay goal options (the reward counts both).
    path = data_dir / HUMAN_FILE
    human = json.loads(path.read_text())
    shop = load_shop(data_dir)
    assert shop is not None
    product = next(p for p in shop.products if any(len(v) > 1 for v in p.options.values()))
    values = next(v for v in product.options.values() if len(v) > 1)
    human[product.asin] = [
        {
            "instruction": "two of one group",
            "instruction_attributes": ["x"],
            "instruction_options": [values[0], values[1]],
        }
    ]
    path.write_text(json.dumps(human))
    shop = load_shop(data_dir)
    assert shop is not None
    goal = next(g for s in shop.splits.values() for g in s if g.asin == product.asin)
    assert goal.option_list() == [values[0], values[1]]
