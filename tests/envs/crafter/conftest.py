"""Shared fixtures: compile (or load) the jitted world generator once."""

from __future__ import annotations

import pytest

from lorekit.envs.crafter import worldgen


@pytest.fixture(scope="session", autouse=True)
def _warm_worldgen() -> None:
    worldgen.warm_up()
