"""A shared WebShop env (the shop is built once per process and shared anyway)."""

from __future__ import annotations

import pytest

from lorekit.envs.webshop import WebShopEnv


@pytest.fixture
def env() -> WebShopEnv:
    return WebShopEnv()
