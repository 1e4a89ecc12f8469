"""Record WebShop's original reward on generated purchases, as golden cases for CI.

Not run in CI: it needs the original code (princeton-nlp/WebShop), which is not
part of LoreKit and must not be copied into it. Usage, from the repository root:

    LOREKIT_WEBSHOP_ORIGINAL=/path/to/WebShop PYTHONPATH=. \\
        python tests/envs/webshop/golden/record_reward.py [OUT.json.gz]

It loads the original's ``web_agent_site/engine/goal.py`` (and its
``normalize.py``) by file path, with stand-ins for the imports the reward does
not need (``rich``) and for spaCy's ``en_core_web_sm`` when that model is not
installed (see ``noun_tagger``), builds purchases over LoreKit's generated
catalogue (seeded; random ones plus the tricky classes listed in
``tricky_cases``) and writes, for each, the products, the goal, the price, the
chosen options and the original's reward with the goal's options as a list
(how the original's human goals hold them: LoreKit's ``original`` variant) and
as a dict (its synthetic goals: the ``synthetic`` variant). The output is
deterministic. See README.md beside this file.
"""

from __future__ import annotations

import dataclasses
import gzip
import importlib.util
import json
import os
import random
import re
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lorekit.envs.webshop import Goal, Product, generate_catalog, make_goal
from lorekit.envs.webshop.reward import title_nouns

ORIGINAL_ENV_VAR = "LOREKIT_WEBSHOP_ORIGINAL"
GOLDEN = Path(__file__).with_name("rewards.json.gz")
RANDOM_CASES = 900
SEED = 28
_WORD = re.compile(r"[a-z][a-z'-]*")


# -- loading the original's reward ------------------------------------------------------


class _Token:
    def __init__(self, text: str, pos: str) -> None:
        self.text, self.pos_ = text, pos


def noun_tagger() -> tuple[Callable[[str], list[_Token]], str]:
    """spaCy's en_core_web_sm when installed; else LoreKit's documented stand-in
    (``title_nouns``) dressed as a spaCy pipeline. Which one is written to the file."""
    try:
        import spacy

        return spacy.load("en_core_web_sm"), "spacy en_core_web_sm"
    except (ImportError, OSError):
        pass

    def tag(text: str) -> list[_Token]:
        nouns = title_nouns(text)
        return [_Token(w, "NOUN" if w in nouns else "X") for w in _WORD.findall(text.lower())]

    return tag, "lorekit title_nouns (spaCy's model is not installable here)"


def load_original(root: str | Path) -> tuple[types.ModuleType, str]:
    """The original's goal.py as a module, its unused imports stubbed."""
    engine = Path(root) / "web_agent_site" / "engine"
    tagger, tagger_name = noun_tagger()
    stubs = {
        "web_agent_site": types.ModuleType("web_agent_site"),
        "web_agent_site.engine": types.ModuleType("web_agent_site.engine"),
        "rich": types.ModuleType("rich"),
        "spacy": types.ModuleType("spacy"),
    }
    stubs["rich"].print = lambda *a, **k: None  # type: ignore[attr-defined]
    stubs["spacy"].load = lambda name: tagger  # type: ignore[attr-defined]
    saved = {name: sys.modules.get(name) for name in stubs}
    sys.modules.update(stubs)
    try:
        for name in ("normalize", "goal"):
            spec = importlib.util.spec_from_file_location(
                f"web_agent_site.engine.{name}", engine / f"{name}.py"
            )
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        return sys.modules["web_agent_site.engine.goal"], tagger_name
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def as_original_product(p: Product) -> dict[str, Any]:
    """A product in the keys the original's engine gives it after loading."""
    return {
        "asin": p.asin,
        "name": p.title,
        "Title": p.title,
        "query": p.query,
        "product_category": p.product_category,
        "Description": p.description,
        "BulletPoints": list(p.bullet_points),
        "Attributes": list(p.attributes),
    }


def as_original_goal(g: Goal, form: str) -> dict[str, Any]:
    options: Any = g.option_list() if form == "list" else dict(g.goal_options)
    return {
        "asin": g.asin,
        "query": g.query,
        "name": g.name,
        "product_category": g.product_category,
        "attributes": list(g.attributes),
        "goal_options": options,
        "price_upper": g.price_upper,
    }


# -- purchases ---------------------------------------------------------------------------


@dataclasses.dataclass
class Purchase:
    kind: str
    product: Product
    goal: Goal
    price: float
    chosen: dict[str, str]


def _chosen(rng: random.Random, product: Product, goal: Goal) -> dict[str, str]:
    out = {}
    for group, values in product.options.items():
        roll = rng.random()
        if roll < 0.45 and group in goal.goal_options and goal.goal_options[group] in values:
            out[group] = goal.goal_options[group]
        elif roll < 0.9:
            out[group] = rng.choice(values)
    return out


def random_cases(rng: random.Random, products: list[Product]) -> Iterator[Purchase]:
    by_query: dict[str, list[Product]] = {}
    for p in products:
        by_query.setdefault(p.query, []).append(p)
    for _ in range(RANDOM_CASES):
        target = rng.choice(products)
        goal = make_goal(target, rng)
        roll = rng.random()
        bought = (
            target
            if roll < 0.5
            else rng.choice(by_query[target.query])
            if roll < 0.75
            else rng.choice(products)
        )
        price = rng.choice([bought.price, goal.price_upper, goal.price_upper + 0.01])
        yield Purchase("random", bought, goal, price, _chosen(rng, bought, goal))


def _variant(p: Product, suffix: str, **changes: Any) -> Product:
    return dataclasses.replace(p, asin=f"{p.asin[:7]}{suffix}", **changes)


def tricky_cases(rng: random.Random, products: list[Product]) -> Iterator[Purchase]:
    """The classes where LoreKit's old reward differed, and edges of the rule."""
    colors = ["black", "red", "navy blue", "dark navy", "light blue", "black | white",
              "white", "blue", "grey", "heather grey", "rose gold", "crème"]  # fmt: skip
    sizes = ["small", "x-small", "medium", "large", "x-large", "xx-large", "3x-large",
             "one size", "16 fl oz", "16 fl oz.", "8 fl oz", "king", "queen"]  # fmt: skip
    flavors = ["peppered", "standard", "natural", "tangerine", "original", "ashwagandha"]
    for n in range(60):
        base = rng.choice(products)
        color_opts = tuple(rng.sample(colors, 4))
        size_opts = tuple(rng.sample(sizes, 4))
        flavor_opts = tuple(rng.sample(flavors, 3))
        wanted_color, bought_color = rng.sample(color_opts, 2)
        description = f"{base.description} Also comes in {bought_color}."
        product = _variant(
            base,
            f"T{n:03d}",
            description=description,
            options={"color": color_opts, "size": size_opts, "flavor": flavor_opts},
        )
        goal = dataclasses.replace(
            make_goal(product, rng),
            goal_options={
                "color": wanted_color,
                "size": rng.choice(size_opts),
                "flavor": rng.choice(flavor_opts),
            },
        )
        price_at_bound = goal.price_upper
        exact = dict(goal.goal_options)
        swaps = [
            ("exact", exact),
            ("colour in description", {**exact, "color": bought_color}),
            ("size variant", {**exact, "size": rng.choice(size_opts)}),
            ("no options", {}),
            ("one option", {"flavor": exact["flavor"]}),
            ("extra group", {**exact, "material": rng.choice(colors)}),
        ]
        for kind, chosen in swaps:
            price = rng.choice([product.price, price_at_bound, price_at_bound + 0.01])
            yield Purchase(kind, product, goal, price, chosen)
        # Human-style goals: a plain list, two values of one group, one value of no group.
        values = (wanted_color, rng.choice(color_opts), rng.choice(size_opts), "unlisted")
        human = dataclasses.replace(goal, option_values=values[: rng.randint(0, 4)])
        yield Purchase("human list", product, human, product.price, dict(exact))
        yield Purchase("human list", product, human, product.price, {"color": values[1]})


# -- recording ---------------------------------------------------------------------------


def record(root: str | Path) -> dict[str, Any]:
    goal_module, tagger_name = load_original(root)
    rng = random.Random(SEED)
    products = generate_catalog(300, seed=SEED)
    purchases = [*random_cases(rng, products), *tricky_cases(rng, products)]
    table: dict[str, dict[str, Any]] = {}
    cases = []
    for purchase in purchases:
        product, goal = purchase.product, purchase.goal
        table[product.asin] = product_data(product)
        rewards = {}
        forms = {"original": "list", "synthetic": "dict"}
        if goal.option_values is not None:
            forms = {"original": "list"}  # a human goal has no dict form
        for variant, form in forms.items():
            rewards[variant] = goal_module.get_reward(
                as_original_product(product),
                as_original_goal(goal, form),
                price=purchase.price,
                options=dict(purchase.chosen),
            )
        cases.append(
            {
                "kind": purchase.kind,
                "asin": product.asin,
                "goal": goal.as_data(),
                "price": purchase.price,
                "chosen": purchase.chosen,
                "rewards": rewards,
            }
        )
    meta = {
        "recorded_with": "princeton-nlp/WebShop web_agent_site/engine/goal.py get_reward",
        "nouns": tagger_name,
        "seed": SEED,
        "cases": len(cases),
    }
    return {"meta": meta, "products": table, "cases": cases}


def product_data(p: Product) -> dict[str, Any]:
    data = dataclasses.asdict(p)
    data.pop("reviews")
    data["options"] = {g: list(v) for g, v in p.options.items()}
    return data


def product_from_data(data: dict[str, Any]) -> Product:
    fields = dict(data)
    for key in ("bullet_points", "attributes", "pricing", "details"):
        fields[key] = tuple(fields[key])
    fields["options"] = {g: tuple(v) for g, v in fields["options"].items()}
    return Product(**fields)


def main(argv: list[str]) -> None:
    root = os.environ.get(ORIGINAL_ENV_VAR)
    if not root:
        raise SystemExit(f"set {ORIGINAL_ENV_VAR} to a checkout of princeton-nlp/WebShop")
    out = Path(argv[1]) if len(argv) > 1 else GOLDEN
    data = record(root)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    out.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    print(f"{len(data['cases'])} cases ({data['meta']['nouns']}) -> {out}")


if __name__ == "__main__":
    main(sys.argv)
