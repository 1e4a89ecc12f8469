"""The reward against the original's, on 1,380 purchases recorded from its code.

``golden/rewards.json.gz`` holds what WebShop's own ``get_reward`` gave on
generated purchases: random ones and the classes where rewards used to differ
(a colour in the description, size variants, price at the bound, several or
extra options, colour words inside values, human goals' option lists). How it
was made: ``golden/README.md``; the recorder is ``golden/record_reward.py``.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import sys
import types
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from lorekit.envs.webshop import Goal, score_purchase

HERE = Path(__file__).with_name("golden")
ORIGINAL_ENV_VAR = "LOREKIT_WEBSHOP_ORIGINAL"


def recorder() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("record_reward", HERE / "record_reward.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look themselves up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


@cache
def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress((HERE / "rewards.json.gz").read_bytes()))
    return data


def disagreements(data: dict[str, Any]) -> list[tuple[str, str, float, float]]:
    make_product = recorder().product_from_data
    products = {asin: make_product(p) for asin, p in data["products"].items()}
    out = []
    for case in data["cases"]:
        goal = Goal.from_data(case["goal"])
        for variant, expected in case["rewards"].items():
            ours = score_purchase(
                products[case["asin"]], goal, case["price"], case["chosen"], variant
            ).reward
            if ours != expected:
                out.append((case["kind"], variant, ours, expected))
    return out


def test_every_recorded_purchase_scores_as_the_original() -> None:
    data = golden()
    assert len(data["cases"]) >= 900
    kinds = Counter(c["kind"] for c in data["cases"])
    assert {"random", "colour in description", "size variant", "human list"} <= set(kinds)
    assert disagreements(data) == []


def test_the_golden_cases_cover_many_rewards_and_both_goal_forms() -> None:
    cases = golden()["cases"]
    rewards = {r for c in cases for r in c["rewards"].values()}
    assert len(rewards) > 15 and max(rewards) == 1.0 and min(rewards) == 0.0
    assert sum("synthetic" in c["rewards"] for c in cases) >= 900
    # The forms matter: the original scores some purchases differently by form.
    assert any(
        c["rewards"]["original"] != c["rewards"]["synthetic"]
        for c in cases
        if "synthetic" in c["rewards"]
    )


@pytest.mark.skipif(
    not os.environ.get(ORIGINAL_ENV_VAR),
    reason=f"{ORIGINAL_ENV_VAR} (a checkout of princeton-nlp/WebShop) is not set",
)
def test_recorder_against_the_live_original() -> None:
    live = recorder().record(os.environ[ORIGINAL_ENV_VAR])
    assert live["cases"] == golden()["cases"]
    assert disagreements(live) == []
