"""Where a shop's products and goals come from: the generator, or WebShop's own files.

With ``WEBSHOP_DATA`` (or ``data_dir=``) pointing at a folder laid out like
WebShop's ``data/`` (the 1,000-product ``items_shuffle_1000.json`` and
``items_ins_v2_1000.json``, or the full set's ``items_shuffle.json`` and
``items_ins_v2.json``; ``items_human_ins.json``; optionally ``reviews.json``),
the shop loads those products and the human instructions; otherwise it
generates a catalogue. Goals come out in the original's order: products in
file order, each product's instructions in the human file's order, then the
original's shuffle with seed 233, so ``test-0`` is the original's goal 0.
:func:`write_webshop_files` writes a generated catalogue in that layout, which
is how the loader is tested (the real files cannot be downloaded here).
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit.envs.webshop.catalog import Product, Review, generate_catalog
from lorekit.envs.webshop.goals import Goal, make_goals, price_bound, split_goals

PRODUCTS_FILE = "items_shuffle_1000.json"
ATTRIBUTES_FILE = "items_ins_v2_1000.json"
FULL_PRODUCTS_FILE = "items_shuffle.json"
FULL_ATTRIBUTES_FILE = "items_ins_v2.json"
FILE_SETS: tuple[tuple[str, str], ...] = (
    (PRODUCTS_FILE, ATTRIBUTES_FILE),
    (FULL_PRODUCTS_FILE, FULL_ATTRIBUTES_FILE),
)
"""(products, attributes) file names: the 1,000-product subset (the original's default,
used when present) and the full set."""
HUMAN_FILE = "items_human_ins.json"
REVIEWS_FILE = "reviews.json"
DATA_ENV = "WEBSHOP_DATA"


@dataclass(frozen=True)
class ShopData:
    """Products, goals by split, and one line on where they come from."""

    products: list[Product]
    splits: Mapping[str, list[Goal]]
    provenance: str


def generated_shop(
    size: int = 1000, goals: int = 2000, seed: int = 0, style: str = "plain"
) -> ShopData:
    products = generate_catalog(size, seed, style)
    made = make_goals(products, goals, seed)
    styled = "" if style == "plain" else f", {style} style"
    note = f"generated catalogue of {size} products (LoreKit's generator, seed {seed}{styled})"
    return ShopData(products, split_goals(made), note)


def load_shop(data_dir: str | Path | None = None, seed: int = 0) -> ShopData | None:
    """The shop in ``data_dir`` (else ``$WEBSHOP_DATA``); None when neither is set."""
    folder = data_dir if data_dir is not None else os.environ.get(DATA_ENV)
    if not folder:
        return None
    root = Path(folder)
    products_file, attributes_file = next(
        (pair for pair in FILE_SETS if (root / pair[0]).is_file()), FILE_SETS[0]
    )
    needed = (products_file, attributes_file, HUMAN_FILE)
    missing = [n for n in needed if not (root / n).is_file()]
    if missing:
        raise FileNotFoundError(
            f"WebShop data folder {root} lacks {', '.join(missing)} (products and attributes "
            f"may also be the full set's {FULL_PRODUCTS_FILE} and {FULL_ATTRIBUTES_FILE}); "
            f"point {DATA_ENV} at WebShop's data/ folder or unset it to use the generated "
            "catalogue"
        )
    raw = json.loads((root / products_file).read_text(encoding="utf-8"))
    attributes = json.loads((root / attributes_file).read_text(encoding="utf-8"))
    reviews_path = root / REVIEWS_FILE
    reviews = json.loads(reviews_path.read_text(encoding="utf-8")) if reviews_path.is_file() else []
    by_asin_reviews = {r["asin"]: r for r in reviews}
    products = _products(raw, attributes, by_asin_reviews, seed)
    human = json.loads((root / HUMAN_FILE).read_text(encoding="utf-8"))
    goals = _human_goals(products, human, seed)
    random.Random(233).shuffle(goals)  # the original shuffles its goals with seed 233
    note = (
        f"WebShop's data files ({len(products)} products from {products_file}, "
        f"{len(goals)} human goals, {root})"
    )
    return ShopData(products, split_goals(goals), note)


def _pricing(text: Any) -> tuple[float, ...]:
    if not text:
        return (100.0,)
    values = [float(re.sub(r"[^\d.]", "", part)) for part in str(text).split("$")[1:]]
    return tuple(values[:2]) or (100.0,)


def _products(
    raw: Sequence[Mapping[str, Any]],
    attributes: Mapping[str, Any],
    reviews: Mapping[str, Any],
    seed: int,
) -> list[Product]:
    out: list[Product] = []
    seen: set[str] = set()
    for item in raw:
        asin = str(item.get("asin", ""))
        if asin in seen or asin == "nan" or len(asin) > 10:
            continue  # the original skips these too
        seen.add(asin)
        pricing = _pricing(item.get("pricing"))
        rng = random.Random(f"webshop-price/{seed}/{asin}")
        price = pricing[0] if len(pricing) == 1 else round(rng.uniform(*pricing), 2)
        options: dict[str, tuple[str, ...]] = {}
        for name, contents in (item.get("customization_options") or {}).items():
            if contents is not None:  # an empty group stays, as in the original
                values = (str(c["value"]).strip().replace("/", " | ").lower() for c in contents)
                options[str(name).lower()] = tuple(values)
        bullets = item.get("small_description") or []
        review = reviews.get(asin, {})
        out.append(
            Product(
                asin=asin,
                title=str(item["name"]),
                category=str(item.get("category", "")),
                query=str(item.get("query", "")).lower().strip(),
                product_category=str(item.get("product_category", "")),
                description=str(item.get("full_description") or ""),
                bullet_points=tuple(bullets) if isinstance(bullets, list) else (str(bullets),),
                attributes=_attributes(attributes.get(asin)),
                options=options,
                pricing=pricing,
                price=price,
                rating=str(review.get("average_rating", "N.A.")),
                reviews=tuple(
                    Review(
                        str(r.get("title", "")), str(r.get("review", "")), int(r.get("stars", 0))
                    )
                    for r in review.get("reviews", [])
                ),
            )
        )
    return out


def _attributes(entry: Any) -> tuple[str, ...]:
    """A product's attributes: the file's list as it is, even empty (an empty list
    scores no attribute by fuzzy match); the original's placeholder only when the
    product has no entry."""
    if not isinstance(entry, Mapping) or "attributes" not in entry:
        return ("DUMMY_ATTR",)
    return tuple(str(a) for a in entry["attributes"] or ())


def _human_goals(products: Sequence[Product], human: Mapping[str, Any], seed: int) -> list[Goal]:
    """The human goals in the original's order: products in file order, then each
    product's instructions in order (the caller shuffles, as the original does)."""
    rng = random.Random(f"webshop-bounds/{seed}")
    goals: list[Goal] = []
    for product in products:
        for entry in human.get(product.asin) or ():
            attrs = tuple(str(a) for a in entry.get("instruction_attributes") or ())
            if not attrs:
                continue  # the original skips instructions without attributes
            upper, price_text = price_bound(product.price, rng)
            values = tuple(str(v) for v in entry.get("instruction_options") or ())
            options: dict[str, str] = {}
            for n, value in enumerate(values):
                group = next((g for g, vs in product.options.items() if value in vs), f"option {n}")
                options.setdefault(group, value)
            goals.append(
                Goal(
                    asin=product.asin,
                    category=product.category,
                    query=product.query,
                    name=product.title,
                    product_category=product.product_category,
                    instruction_text=str(entry["instruction"]).strip(".") + price_text,
                    attributes=attrs,
                    goal_options=options,
                    price_upper=upper,
                    option_values=values,
                )
            )
    return goals


def write_webshop_files(
    folder: str | Path, products: Sequence[Product], goals: Sequence[Goal]
) -> None:
    """Write ``products`` and ``goals`` in the layout of WebShop's ``data/`` folder."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    raw = [
        {
            "asin": p.asin,
            "name": p.title,
            "full_description": p.description,
            "small_description": list(p.bullet_points),
            "pricing": " - ".join(f"${v}" for v in p.pricing),
            "customization_options": {
                g: [{"value": v, "image": None} for v in values] for g, values in p.options.items()
            },
            "category": p.category,
            "query": p.query,
            "product_category": p.product_category,
            "images": [""],
        }
        for p in products
    ]
    attrs = {p.asin: {"attributes": list(p.attributes)} for p in products}
    human: dict[str, list[dict[str, Any]]] = {}
    for goal in goals:
        text = goal.instruction_text.split(", and price lower than")[0]
        human.setdefault(goal.asin, []).append(
            {
                "instruction": text,
                "instruction_attributes": list(goal.attributes),
                "instruction_options": goal.option_list(),
            }
        )
    reviews = [
        {
            "asin": p.asin,
            "average_rating": p.rating,
            "reviews": [{"title": r.title, "stars": r.score, "review": r.body} for r in p.reviews],
        }
        for p in products
    ]
    for name, content in (
        (PRODUCTS_FILE, raw),
        (ATTRIBUTES_FILE, attrs),
        (HUMAN_FILE, human),
        (REVIEWS_FILE, reviews),
    ):
        (root / name).write_text(json.dumps(content), encoding="utf-8")
