"""Shared pieces of the AgentKit agent tests: Crafter, a small fake WebShop."""

from __future__ import annotations

import pytest

from lorekit.envs.crafter import worldgen


@pytest.fixture(scope="session", autouse=True)
def _warm_worldgen() -> None:
    worldgen.warm_up()
