"""WebShop's product schema and LoreKit's seeded generator of catalogues in it.

WebShop's real catalogue (1.18M scraped products) cannot be downloaded here, so
LoreKit generates one with the same fields: an ASIN-style id, a title, a
category path joined with " › ", the search query the product came from,
a description, bullet points, attributes, option groups with values, a price
or a price range, a rating and reviews. Words come from ``vocab.yaml``; the
same seed always gives the same catalogue.

Two styles. ``plain`` titles are a brand, some attributes, a type phrase and
the type: at 100k products hundreds of titles share all but the brand, so an
instruction that names a type and attributes cannot single one out.
``distinct`` (the same products) adds what real titles carry and real
instructions copy: a product-line name, a model code and one material or
feature of the category, kept in ``Product.details`` for the instruction
writer. Real WebShop instructions usually name one or two such words.
"""

from __future__ import annotations

import dataclasses
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
STYLES = ("plain", "distinct")


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
    details: tuple[str, ...] = ()
    """Distinctive words of this product (line name, material or feature), lower case;
    empty for plain-style and loaded products."""

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


def _line_name(rng: random.Random) -> str:
    syllables = vocab()["line_syllables"]
    return "".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))).capitalize()


def distinguish(product: Product, rng: random.Random) -> Product:
    """``product`` with a line name after the brand, a material or feature before the
    rest of the title and a model code after it, e.g. ``Kalo Brisel Shea Butter
    Argan Oil Shampoo SK-240, Pack of 2``; description and first bullet name them too."""
    words = vocab()
    line = _line_name(rng)
    detail = str(rng.choice(words["categories"][product.category]["details"]))
    model = rng.choice(words["model_letters"]) + rng.choice(words["model_letters"])
    model += f"-{rng.randint(10, 999)}"
    brand, _, rest = product.title.partition(" ")
    head, comma, tail = rest.partition(", ")
    title = f"{brand} {line} {_title_case(detail)} {head} {model}{comma}{tail}"
    bullets = (f"{line} line, {detail}: {product.bullet_points[0]}", *product.bullet_points[1:])
    return dataclasses.replace(
        product,
        title=title,
        description=f"The {line} {model} by {brand}. {product.description}",
        bullet_points=bullets,
        details=(line.lower(), detail),
    )


def generate_catalog(size: int, seed: int = 0, style: str = "plain") -> list[Product]:
    """``size`` products, the same for the same ``(size, seed, style)``; a larger
    catalogue with the same seed starts with the smaller one's products. The
    ``distinct`` style is the ``plain`` catalogue with distinctive words added."""
    if size < 1:
        raise ValueError(f"a catalogue needs at least 1 product, got size={size}")
    if style not in STYLES:
        raise ValueError(f"unknown catalogue style {style!r}; choose one of {', '.join(STYLES)}")
    rng = random.Random(f"webshop-catalog/{seed}")
    taken: set[str] = set()
    products = [generate_product(rng, taken) for _ in range(size)]
    if style == "distinct":
        detail_rng = random.Random(f"webshop-details/{seed}")
        products = [distinguish(p, detail_rng) for p in products]
    return products
