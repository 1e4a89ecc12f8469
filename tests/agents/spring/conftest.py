"""Shared pieces of the SPRING tests: a Crafter env and scripted models."""

from __future__ import annotations

import pytest

from lorekit.envs import make
from lorekit.envs.crafter import CrafterTextEnv, worldgen


@pytest.fixture(scope="session", autouse=True)
def _warm_worldgen() -> None:
    worldgen.warm_up()


@pytest.fixture
def crafter() -> CrafterTextEnv:
    env = make("crafter")
    assert isinstance(env, CrafterTextEnv)
    return env
