"""Shared fixtures: TextCraft envs for each available recipe source."""

from __future__ import annotations

import pytest

from lorekit.envs.textcraft import TextCraftEnv
from lorekit.envs.textcraft.sources import DEFAULT_DATAPACK_DIR

HAS_DATAPACK = DEFAULT_DATAPACK_DIR.is_dir()
needs_datapack = pytest.mark.skipif(
    not HAS_DATAPACK, reason=f"recipe folder {DEFAULT_DATAPACK_DIR} not present"
)
SOURCES = [
    pytest.param("minecraft-data", id="minecraft-data"),
    pytest.param("datapack", id="datapack", marks=needs_datapack),
]


@pytest.fixture(params=SOURCES)
def source(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture
def env() -> TextCraftEnv:
    return TextCraftEnv()


@pytest.fixture
def compat_env() -> TextCraftEnv:
    if not HAS_DATAPACK:
        pytest.skip(f"compat mode needs the recipe folder {DEFAULT_DATAPACK_DIR}")
    return TextCraftEnv(compat=True, max_steps=None)
