"""WebShop's product schema and LoreKit's seeded generator of catalogues in it.

WebShop's real catalogue (1.18M scraped products) cannot be downloaded here, so
LoreKit generates one with the same fields: an ASIN-style id, a title, a
category path joined with " › ", the search query the product came from,
a description, bullet points, attributes, option groups with values, a price
or a price range, a rating and reviews. Words come from ``vocab.yaml``; the
same seed always gives the same catalogue.
"""

from __future__ import annotations

import functools
import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lorekit import yamlio

VOCAB_FILE = Path(__file__).with_name("vocab.yaml")
SEP_CATEGORY = " › "
_ASIN_CHARS = string.ascii_uppercase + string.digits


@functools.cache
def vocab() -> Mapping[str, Any]:
    """The generator's word lists and templates (``vocab.yaml``)."""
    with VOCAB_FILE.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yamlio.safe_load(fh)
    return data


@dataclass(frozen=True)
class Review:
    title: str
    body: str
    score: int


@dataclass(frozen=True)
class Product:
    """One product, in the fields WebShop's engine works with after loading.

    ``pricing`` is one price or a ``[low, high]`` range as the data gave it;
    ``price`` is the price the shop charges (the original draws it once from
    the range). Option values are lower case, as the original shows them.
    """

    asin: str
    title: str
    category: str
    query: str
    product_category: str
    description: str
    bullet_points: tuple[str, ...]
    attributes: tuple[str, ...]
    options: Mapping[str, tuple[str, ...]]
    pricing: tuple[float, ...]
    price: float
    rating: str = "N.A."
    reviews: tuple[Review, ...] = ()

    @property
    def price_tag(self) -> str:
        """``$12.99`` or ``$10.0 to $20.0``, as results pages show it."""
        if len(self.pricing) >= 2:
            return f"${self.pricing[0]} to ${self.pricing[1]}"
        return f"${self.pricing[0]}" if self.pricing else "$100.0"

    def search_text(self) -> str:
        """The indexed document: title, description, first bullet and options, lower case
        (the fields the original's index was built from)."""
        option_text = ", and ".join(
            f"{group}: {', '.join(values)}" for group, values in self.options.items()
        )
        first_bullet = self.bullet_points[0] if self.bullet_points else ""
        return " ".join([self.title, self.description, first_bullet, option_text]).lower()


def _brand(rng: random.Random) -> str:
    syllables = vocab()["brand_syllables"]
    return "".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))).capitalize()


def _asin(rng: random.Random, taken: set[str]) -> str:
    while True:
        asin = "B0" + "".join(rng.choice(_ASIN_CHARS) for _ in range(8))
        if asin not in taken:
            taken.add(asin)
            return asin


def _title_case(text: str) -> str:
    return " ".join(w if w[:1].isdigit() else w[:1].upper() + w[1:] for w in text.split())


def _price(rng: random.Random, band: Sequence[float]) -> tuple[tuple[float, ...], float]:
    low = round(rng.uniform(band[0], band[1]), 2)
    if rng.random() < 0.2:  # a price range, as for products whose options cost differently
        high = round(low * rng.uniform(1.1, 1.6), 2)
        return (low, high), round(rng.uniform(low, high), 2)
    return (low,), low


def _fill(template: str, **values: str) -> str:
    return template.format(**values)


def generate_product(rng: random.Random, taken: set[str]) -> Product:
    """One product of a random category and type."""
    words = vocab()
    category = rng.choice(sorted(words["categories"]))
    spec = words["categories"][category]
    kind = rng.choice(spec["types"])
    noun = str(kind["noun"])
    brand = _brand(rng)
    attributes = tuple(rng.sample(spec["attributes"], rng.randint(2, 4)))
    extra = str(rng.choice(kind["extra"]))
    shown = [a for a in attributes if rng.random() < 0.5][:2]
    title = _title_case(" ".join([brand, *shown, extra, noun]))
    if rng.random() < 0.5:
        title += f", {rng.choice(['1 Count', 'Pack of 2', 'Value Size', 'New Edition'])}"
    options: dict[str, tuple[str, ...]] = {}
    for group, values in sorted(kind.get("options", {}).items()):
        if rng.random() < 0.85:
            count = rng.randint(min(2, len(values)), len(values))
            options[str(group)] = tuple(str(v) for v in rng.sample(values, count))
    pricing, price = _price(rng, words["price_bands"][category])
    fills = {
        "brand": brand,
        "noun": noun,
        "extra": extra,
        "extra_upper": _title_case(extra),
        "attr": attributes[0],
        "attr_upper": attributes[0].upper(),
        "attr_list": ", ".join(attributes[:-1]) + f" and {attributes[-1]}",
    }
    bullets = tuple(_fill(t, **fills) for t in words["bullets"])
    reviews = tuple(
        Review(r["title"], _fill(r["body"], **fills), int(r["score"]))
        for r in rng.sample(words["reviews"], rng.randint(0, len(words["reviews"])))
    )
    rating = f"{sum(r.score for r in reviews) / len(reviews):.1f}" if reviews else "N.A."
    return Product(
        asin=_asin(rng, taken),
        title=title,
        category=category,
        query=noun,
        product_category=SEP_CATEGORY.join([spec["root"], *str(kind["path"]).split(" › ")]),
        description=_fill(words["description"], **fills),
        bullet_points=bullets,
        attributes=attributes,
        options=options,
        pricing=pricing,
        price=price,
        rating=rating,
        reviews=reviews,
    )


def generate_catalog(size: int, seed: int = 0) -> list[Product]:
    """``size`` products, the same for the same ``(size, seed)``; a larger catalogue
    with the same seed starts with the smaller one's products."""
    if size < 1:
        raise ValueError(f"a catalogue needs at least 1 product, got size={size}")
    rng = random.Random(f"webshop-catalog/{seed}")
    taken: set[str] = set()
    return [generate_product(rng, taken) for _ in range(size)]
