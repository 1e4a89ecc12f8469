"""WebShop: buy what an instruction describes in a searchable shop (Yao et al. 2022).

The pages, actions, text mode and reward follow the original; the catalogue is
generated in its schema (or loaded from WebShop's files via ``WEBSHOP_DATA``).
See docs/webshop.md.
"""

from lorekit.envs.webshop.catalog import Product, Review, generate_catalog
from lorekit.envs.webshop.data import ShopData, generated_shop, load_shop, write_webshop_files
from lorekit.envs.webshop.env import WebShopEnv
from lorekit.envs.webshop.goals import Goal, make_goal, make_goals, split_goals
from lorekit.envs.webshop.reward import RewardParts, score_purchase
from lorekit.envs.webshop.search import BACKENDS, SearchIndex, build_index

__all__ = [
    "BACKENDS",
    "Goal",
    "Product",
    "Review",
    "RewardParts",
    "SearchIndex",
    "ShopData",
    "WebShopEnv",
    "build_index",
    "generate_catalog",
    "generated_shop",
    "load_shop",
    "make_goal",
    "make_goals",
    "score_purchase",
    "split_goals",
    "write_webshop_files",
]
