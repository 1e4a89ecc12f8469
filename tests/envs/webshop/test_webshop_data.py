"""WebShop's data files (WEBSHOP_DATA), tested on files in that layout from the generator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lorekit.envs.webshop import WebShopEnv, generate_catalog, load_shop, make_goals
from lorekit.envs.webshop.data import DATA_ENV, PRODUCTS_FILE, write_webshop_files


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
