"""Record the original WebShop's pages over scripted episodes, as golden cases for CI.

Not run in CI: it needs the original code (princeton-nlp/WebShop), which is not
part of LoreKit and must not be copied into it, and the packages its text env
imports (flask, beautifulsoup4, gym, numpy, thefuzz, cleantext, rank_bm25,
tqdm, rich), which are not LoreKit's: install them in a separate virtual
environment (README.md beside this file). Usage, from the repository root:

    LOREKIT_WEBSHOP_ORIGINAL=/path/to/WebShop PYTHONPATH=. \\
        /path/to/that/venv/bin/python tests/envs/webshop/golden/record_pages.py [OUT.json.gz]

What runs is the original's own ``WebAgentTextEnv`` (``web_agent_site/envs/
web_agent_text_env.py``) in its ``text`` observation mode: its simulated server
and browser, its loader (``load_products``) reading data files that LoreKit's
``write_webshop_files`` wrote from a generated catalogue, its Flask templates
and its HTML-to-text conversion. Three things are fed to it from LoreKit, so
that the pages compare rendering and navigation and nothing else:

- the search engine (pyserini needs Java and a Lucene index): a stand-in that
  returns LoreKit's BM25 ranking for the query it is given; each ranking is
  stored with the step, and the CI test hands the same ranking to LoreKit;
- the goals and the charged prices (the original draws price bounds and
  prices from the unseeded ``random``): LoreKit's, for the same files;
- ratings and reviews: the original's loader has its review loading commented
  out (every product is ``Rating: N.A.`` with no reviews); the recorder does
  what those lines would, from the ``reviews.json`` it wrote, so that the
  reviews page's rendering is compared too.

The script drives LoreKit's env beside the original only to choose actions
(which products are shown, the expert's next step); the golden file holds the
original's outputs: per step the text observation, the clickable names its
``get_available_actions`` lists, whether a search bar is shown, the URL (the
page and the session's asin and options), the reward, ``done`` and the page's
HTML (``<head>`` and ``<script>`` removed, lines stripped). The output is
deterministic.
"""

from __future__ import annotations

import dataclasses
import gzip
import importlib.util
import json
import os
import re
import sys
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lorekit.envs.webshop import (
    Goal,
    Product,
    Review,
    WebShopEnv,
    generate_catalog,
    write_webshop_files,
)
from lorekit.envs.webshop.data import ATTRIBUTES_FILE, HUMAN_FILE, PRODUCTS_FILE, REVIEWS_FILE
from lorekit.envs.webshop.goals import make_goals
from lorekit.envs.webshop.pages import PRODUCT_WINDOW

ORIGINAL_ENV_VAR = "LOREKIT_WEBSHOP_ORIGINAL"
GOLDEN = Path(__file__).with_name("pages.json.gz")
DATA_FILES = (PRODUCTS_FILE, ATTRIBUTES_FILE, HUMAN_FILE, REVIEWS_FILE)
SEED = 28
PRODUCTS = 200
GOALS = 400
EPISODES = 36
_HEAD = re.compile(r"<head>.*?</head>|<script>.*?</script>", re.DOTALL)


# -- the shop: a generated catalogue and products built around edge cases -------------------


def tricky_products(products: list[Product]) -> list[Product]:
    """Variants of generated products with what real data has and the generator never
    makes: markup characters, surrounding and inner blanks, empty texts, an empty
    option group, a value in two groups, a '/' in a value, upper case, no price."""
    base = products[:8]

    def variant(n: int, **changes: Any) -> Product:
        return dataclasses.replace(base[n], asin=f"{base[n].asin[:7]}X{n:02d}", **changes)

    return [
        variant(0, title="Fish & Chips <Deluxe> \"Quoted\" 'Single' Snack Tray",
                description="  Leading & trailing blanks, <b>not bold</b>.  "),
        variant(1, description="", bullet_points=(), reviews=(), rating="N.A."),
        variant(2, options={"color": ("black", "navy / white"), "size": ()},
                bullet_points=("  spaced bullet  ", "", "Line one\nline two")),
        variant(3, options={"color": ("black", "red"), "pattern": ("red", "plain")}),
        variant(4, options={"Color": ("Dark Navy", "Off-White")}, pricing=(), price=100.0),
        variant(5, pricing=(12.5, 20.0), price=15.25, title="  Padded   Title  "),
        variant(6, bullet_points=("only one bullet",), description="Line one\n\nLine two"),
        variant(7, reviews=(Review("", "", 3), Review("Fine", "ok & <good>", 5))),
    ]  # fmt: skip


def tricky_asins() -> set[str]:
    return {p.asin for p in tricky_products(generate_catalog(PRODUCTS, seed=SEED))}


def build_files(folder: Path) -> None:
    """The data files both envs load: a generated catalogue plus the edge cases, goals
    on both (the human-instruction file) and reviews."""
    products = generate_catalog(PRODUCTS, seed=SEED)
    goals = make_goals(products, GOALS, SEED)  # on generated products (options never empty)
    write_webshop_files(folder, products + tricky_products(products), goals)


def data_files(folder: Path) -> dict[str, Any]:
    return {name: json.loads((folder / name).read_text(encoding="utf-8")) for name in DATA_FILES}


# -- loading the original's text env --------------------------------------------------------


def load_original(root: str | Path) -> types.ModuleType:
    """The original's ``web_agent_text_env`` module, loaded by path. Stand-ins: torch
    (images only), pyserini (replaced below), spaCy (the reward's noun tagger, as
    record_reward.py does) and the ``envs`` package's ``__init__`` (it imports the
    selenium env)."""
    sys.path.insert(0, str(root))
    recorder = _load_by_path("record_reward", Path(__file__).with_name("record_reward.py"))
    tagger, _ = recorder.noun_tagger()
    stubs = {n: types.ModuleType(n) for n in ("torch", "spacy", "pyserini", "pyserini.search")}
    stubs["pyserini.search.lucene"] = types.ModuleType("pyserini.search.lucene")
    stubs["pyserini.search.lucene"].LuceneSearcher = object  # type: ignore[attr-defined]
    stubs["spacy"].load = lambda name: tagger  # type: ignore[attr-defined]
    envs = types.ModuleType("web_agent_site.envs")
    envs.__path__ = []
    stubs["web_agent_site.envs"] = envs
    for name, module in stubs.items():
        sys.modules.setdefault(name, module)
    path = Path(root) / "web_agent_site" / "envs" / "web_agent_text_env.py"
    return _load_by_path("web_agent_site.envs.web_agent_text_env", path)


def _load_by_path(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class RankingEngine:
    """pyserini's ``LuceneSearcher`` as the original uses it, answering with LoreKit's
    ranking; every query and its ranking (asins) is kept for the golden file."""

    def __init__(self, ours: WebShopEnv) -> None:
        self.ours = ours
        self.last: dict[str, Any] | None = None

    def search(self, query: str, k: int) -> list[Any]:
        asins = [self.ours.products[i].asin for i in self.ours.index.search(query, k)]
        self.last = {"query": query, "asins": asins}
        return [types.SimpleNamespace(docid=a) for a in asins]

    def doc(self, docid: str) -> Any:
        return types.SimpleNamespace(raw=lambda: json.dumps({"id": docid}))


def original_env(module: types.ModuleType, folder: Path, ours: WebShopEnv) -> Any:
    """The original's text env over the files in ``folder``, with LoreKit's ranking,
    test goals and prices, and the reviews its loader leaves out."""
    engine_module = sys.modules["web_agent_site.engine.engine"]
    engine_module.DEFAULT_ATTR_PATH = str(folder / ATTRIBUTES_FILE)
    engine_module.HUMAN_ATTR_PATH = str(folder / HUMAN_FILE)
    engine = RankingEngine(ours)
    module.init_search_engine = lambda num_products=None: engine
    env = module.WebAgentTextEnv(
        observation_mode="text", file_path=str(folder / PRODUCTS_FILE), human_goals=1
    )
    server = env.server
    server.goals = [original_goal(Goal.from_data(t.data)) for t in ours.tasks("test")]
    server.weights = [1] * len(server.goals)
    server.cum_weights = list(range(len(server.goals) + 1))
    server.product_prices = {p.asin: p.price for p in ours.products}
    reviews = json.loads((folder / REVIEWS_FILE).read_text(encoding="utf-8"))
    for entry in reviews:  # what the loader's commented-out lines do
        product = server.product_item_dict[entry["asin"]]
        product["Rating"] = entry["average_rating"]
        product["Reviews"] = [
            {"title": r["title"], "score": r["stars"], "body": r["review"]}
            for r in entry["reviews"]
        ]
    env.ranking_engine = engine
    return env


def original_goal(goal: Goal) -> dict[str, Any]:
    return {
        "asin": goal.asin,
        "category": goal.category,
        "query": goal.query,
        "name": goal.name,
        "product_category": goal.product_category,
        "instruction_text": goal.instruction_text,
        "attributes": list(goal.attributes),
        "goal_options": goal.option_list(),
        "price_upper": goal.price_upper,
        "weight": 1,
    }


# -- episodes ---------------------------------------------------------------------------------


def shown_asins(ours: WebShopEnv) -> list[str]:
    return [ours.products[i].asin for i in ours.browser.shown_results()]


def option_values(ours: WebShopEnv) -> list[str]:
    assert ours.browser.product is not None
    return [v for group in ours.products[ours.browser.product].options.values() for v in group]


def script(kind: str, ours: WebShopEnv, n: int) -> Iterator[str]:
    """The actions of one episode; reads ``ours`` (stepped by the caller) to choose."""
    goal = ours.goal
    assert goal is not None
    words = goal.instruction_text.split(", and price")[0]
    if kind == "expert":
        while (action := ours.expert_action()) is not None:
            yield action
        return
    if kind == "browse":
        yield f"search[{words}]"
        for _ in range(5):
            yield "click[Next >]"  # to page 6: past the last of 50 results
        yield "click[< Prev]"
        yield "click[< Prev]"
        shown = shown_asins(ours)
        yield f"click[{shown[n % len(shown)]}]"
        values = option_values(ours)
        for value in values[:: max(1, len(values) // 3)]:
            yield f"click[{value}]"
        for tab in ("Description", "Features", "Reviews"):
            yield f"click[{tab}]"
            yield "click[< Prev]"
        yield "click[< Prev]"  # to the results, at the page left
        yield "click[Back to Search]"
        yield f"search[{goal.query}]"
        yield f"click[{shown_asins(ours)[-1]}]"
        yield "click[Buy Now]"
        return
    if kind == "edges":
        yield from ("click[Search]", "click[Back to Search]", "search[]", "buy", "click[< Prev]")
        yield f"search[{words.upper()}]"
        yield "click[< Prev]"  # none on page 1
        yield "click[Buy Now]"  # none on a results page
        yield "click[NEXT >]"
        yield f"click[{shown_asins(ours)[0].lower()}]"
        yield "click[description]"
        yield f"search[{goal.query} {n}]"  # a search from a sub-page
        yield f"click[{shown_asins(ours)[0]}]"
        values = option_values(ours)
        if values:
            yield f"click[{values[-1].upper()}]"
        yield "search[zzzzqqq]"  # a search from the item page, with no results
        yield "click[Next >]"
        yield "click[Back to Search]"
        return
    # "tricky": open each edge-case product by its title, try every option, buy.
    tricky = [p for p in ours.products if p.asin in tricky_asins()]
    for product in tricky[(n // len(KINDS)) % 2 :: 2]:  # even and odd ones in turn
        yield f"search[{product.title}]"
        if product.asin not in shown_asins(ours):
            continue
        yield f"click[{product.asin}]"
        for value in option_values(ours):
            yield f"click[{value}]"
        for tab in ("Reviews", "Features", "Description"):
            yield f"click[{tab}]"
            yield "click[< Prev]"
    if ours.browser.page == "item":
        yield "click[Buy Now]"


KINDS = ("expert", "browse", "edges", "tricky")


def observe(env: Any, html: str) -> dict[str, Any]:
    available = env.get_available_actions()
    lines = (line.strip() for line in _HEAD.sub("", html).splitlines())
    return {
        "text": env.observation,
        "clickables": available["clickables"],
        "search_bar": available["has_search_bar"],
        "url": env.state["url"],
        "html": "\n".join(line for line in lines if line),
    }


def record(root: str | Path) -> dict[str, Any]:
    module = load_original(root)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build_files(folder)
        ours = WebShopEnv(data_dir=str(folder), max_steps=None)
        env = original_env(module, folder, ours)
        episodes = []
        for n in range(EPISODES):
            kind = KINDS[n % len(KINDS)]
            task = f"test-{n}"
            ours.reset(task)
            env.reset(session=n)
            steps = [{"action": None, **observe(env, env.state["html"])}]
            for action in script(kind, ours, n):
                env.ranking_engine.last = None
                _, reward, done, _ = env.step(action)
                ours.step(action)
                step = {"action": action, **observe(env, env.state["html"])}
                step.update(reward=reward, done=done, ranking=env.ranking_engine.last)
                steps.append(step)
                if done:
                    break
            episodes.append({"task": task, "kind": kind, "steps": steps})
        files = data_files(folder)
    meta = {
        "recorded_with": "princeton-nlp/WebShop web_agent_site/envs/web_agent_text_env.py "
        "WebAgentTextEnv(observation_mode='text')",
        "seed": SEED,
        "products": PRODUCTS,
        "goals": GOALS,
        "product_window": PRODUCT_WINDOW,
    }
    return {"meta": meta, "files": files, "episodes": episodes}


def dump(data: dict[str, Any]) -> bytes:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return gzip.compress(text.encode("utf-8"), mtime=0)


def main(argv: list[str]) -> None:
    root = os.environ.get(ORIGINAL_ENV_VAR)
    if not root:
        raise SystemExit(f"set {ORIGINAL_ENV_VAR} to a checkout of princeton-nlp/WebShop")
    out = Path(argv[1]) if len(argv) > 1 else GOLDEN
    data = record(root)
    out.write_bytes(dump(data))
    steps = sum(len(e["steps"]) for e in data["episodes"])
    print(f"{len(data['episodes'])} episodes, {steps} pages -> {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv)
